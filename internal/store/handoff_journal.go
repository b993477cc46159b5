package store

import (
	"context"
	"strings"
	"time"
)

// The hand-over journal (migration 0064; docs/architecture-webhooks.md).
// A delivery the committing node's runner takes (Handoff.Reserve) used to
// be a webhook_deliveries row written leased at the commit and updated
// with its outcome: two row versions and four index entries per event,
// sixteen index entries per transfer. Such a delivery now
// gets no row at the commit. One webhook_handoffs row per committing
// statement names the events it handed over, leased as their claims are;
// the delivery's row is written once, with its first outcome
// (Finish.Handed). The runner deletes the journal row when every outcome it
// names is written (EndHandoffs). If the node dies first, or an outcome
// is never written (the runner stopped, the attempt was dropped near its
// lease's end), the journal row outlives its lease, and a claim gives each
// of its events still without a row a due delivery row, as an expired lease
// leaves one (sweepHandoffs).

// journal collects the hand-overs of one insertEvents call.
type journal struct {
	hs    *handoffs
	start int // hs.claims[start:] are this call's
	ids   []string
	until time.Time
}

// journal starts one statement's hand-overs; nil (no hand-overs) when no
// runner takes them.
func (hs *handoffs) journal() *journal {
	if hs == nil || hs.reg == nil {
		return nil
	}
	return &journal{hs: hs, start: len(hs.claims)}
}

// reserve asks the handoff to take e's delivery; true: it did, and e needs
// no delivery row.
func (j *journal) reserve(e Event, now time.Time) bool {
	if j == nil {
		return false
	}
	c, ok := j.hs.reserve(e, now)
	if !ok {
		return false
	}
	j.ids = append(j.ids, e.ID)
	if c.LeaseUntil.After(j.until) {
		j.until = *c.LeaseUntil
	}
	return true
}

// statement is the journal row of the hand-overs reserved, named by the
// first event's id, which each of their claims carries; false if none.
func (j *journal) statement() (statement, bool) {
	if j == nil || len(j.ids) == 0 {
		return statement{}, false
	}
	id := j.ids[0]
	for i := j.start; i < len(j.hs.claims); i++ {
		j.hs.claims[i].Journal = id
	}
	return statement{sql: `INSERT INTO webhook_handoffs (id, lease_token, lease_until, event_ids) VALUES (?, ?, ?, ?)`,
		args: []any{id, j.hs.token, toMicros(j.until), strings.Join(j.ids, ",")}}, true
}

// EndHandoffs deletes journal rows whose deliveries all have their rows
// now. In a PostgreSQL batch (InBatchTx) the statement goes out with the
// commit, as FinishDeliveriesAtCommit's do.
func (q Q) EndHandoffs(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	st := statement{touch: []string{"webhook_handoffs"}}
	if q.engine == Postgres { // one text for any number of rows (unnest.go)
		st.sql, st.args = `DELETE FROM webhook_handoffs WHERE id = ANY(CAST(? AS text[]))`, []any{ids}
	} else {
		st.sql, st.args = `DELETE FROM webhook_handoffs WHERE id IN (`+ledgerPlaceholders(len(ids))+`)`, ledgerAnys(ids)
	}
	if q.engine == Postgres && q.outbox != nil && q.outbox.shared {
		return q.queueWrite(st)
	}
	_, err := q.exec(ctx, st.sql, st.args...)
	return err
}

// sweepBatch bounds the journal rows one claim turns into deliveries.
const sweepBatch = 64

// sweepHandoffs gives each event named by a journal row whose lease has run
// out, and that still has no delivery row, a PENDING one due now, its
// hand-over's attempt counted (as an expired lease leaves a row), and
// deletes those journal rows. On PostgreSQL the journal rows are locked
// SKIP LOCKED, so claimers on two nodes take different ones; an event that
// meanwhile got its row (a late outcome) keeps it (ON CONFLICT).
func (tx *Tx) sweepHandoffs(ctx context.Context, at time.Time) error {
	query := `SELECT id, event_ids FROM webhook_handoffs WHERE lease_until < ? ORDER BY lease_until LIMIT ?`
	if tx.engine == Postgres {
		query += ` FOR UPDATE SKIP LOCKED`
	}
	rows, err := tx.query(ctx, query, toMicros(at), sweepBatch)
	if err != nil {
		return err
	}
	var ids, events []string
	err = eachRow(rows, func(r rowScanner) error {
		var id, names string
		if err := r.Scan(&id, &names); err != nil {
			return err
		}
		ids, events = append(ids, id), append(events, strings.Split(names, ",")...)
		return nil
	})
	if err != nil || len(ids) == 0 {
		return err
	}
	now := toMicros(at)
	for len(events) > 0 {
		n := min(len(events), outboxChunk)
		args := append([]any{now, now}, ledgerAnys(events[:n])...)
		if _, err := tx.exec(ctx, `INSERT INTO webhook_deliveries (event_id, platform_id, env, state, attempts,
			window_start, next_attempt_at, updated_at) SELECT e.id, e.platform_id, e.env, 'PENDING', 1, e.created_at, ?, ?
			FROM events e WHERE e.id IN (`+ledgerPlaceholders(n)+`) ON CONFLICT (event_id) DO NOTHING`, args...); err != nil {
			return err
		}
		events = events[n:]
	}
	return tx.EndHandoffs(ctx, ids)
}

// expireHandoffsOf ends the leases of the journal rows whose token begins
// with prefix (a restarted node's predecessor's, ReleaseLeasesOf), so that
// the next claim gives their events rows at once.
func (q Q) expireHandoffsOf(ctx context.Context, prefix string, prefixLen int) (int64, error) {
	res, err := q.exec(ctx, `UPDATE webhook_handoffs SET lease_until = 0 WHERE substr(lease_token, 1, ?) = ?`,
		prefixLen, prefix)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return n, classify(err)
}

// releaseHanded gives the hand-overs in cs, whose attempts never started,
// due delivery rows with the attempt uncounted (ReleaseLeases), each only
// while its journal row is there with its claim's token.
func (q Q) releaseHanded(ctx context.Context, cs []Claim) error {
	now := q.Now()
	for len(cs) > 0 {
		n := min(len(cs), outboxChunk)
		args := append(make([]any, 0, 7*n+2), toMicros(now), toMicros(now))
		for _, c := range cs[:n] {
			args = append(args, c.EventID, c.Tenant.PlatformID, c.Tenant.Env, max(c.Attempts-1, 0),
				toMicros(c.WindowStart), c.Journal, c.LeaseToken)
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, CAST(? AS INTEGER), CAST(? AS BIGINT), ?, ?), ", n), ", ")
		if _, err := q.exec(ctx, `INSERT INTO webhook_deliveries (event_id, platform_id, env, state, attempts,
			window_start, next_attempt_at, updated_at)
			SELECT v.column1, v.column2, v.column3, 'PENDING', v.column4, v.column5, CAST(? AS BIGINT), CAST(? AS BIGINT)
			FROM (VALUES `+values+`) AS v JOIN webhook_handoffs h ON h.id = v.column6 AND h.lease_token = v.column7
			WHERE true ON CONFLICT (event_id) DO NOTHING`, args...); err != nil {
			return err
		}
		cs = cs[n:]
	}
	return nil
}

// handedCols are the columns a handed-over delivery's first outcome writes.
var handedCols = `event_id, platform_id, env, state, attempts, window_start, next_attempt_at, delivered_at, updated_at, ` +
	strings.Join(lastAttemptCols, ", ")

// finishHandedPG is finishHanded's statement on PostgreSQL: finishArrays'
// rows with the deliveries' tenants, attempts and windows, then the time;
// a text that does not depend on the rows' number, like finishQueryPG's.
var finishHandedPG = `WITH v AS NOT MATERIALIZED (SELECT * FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]),
		CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]),
		CAST(? AS TEXT[]), CAST(? AS INTEGER[]), CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]),
		CAST(? AS INTEGER[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]),
		CAST(? AS INTEGER[]), CAST(? AS BIGINT[]))
		AS u (` + finishColumns + `, a_platform_id, a_env, d_platform_id, d_env, d_attempts, d_window)),
	ins AS (INSERT INTO webhook_deliveries (` + handedCols + `)
		SELECT v.event_id, v.d_platform_id, v.d_env, v.state, v.d_attempts, v.d_window, v.next_at, v.delivered_at,
			CAST(? AS BIGINT), v.a_` + strings.Join(attemptCols, ", v.a_") + ` FROM v
		ON CONFLICT (event_id) DO NOTHING RETURNING event_id),
	lost AS (INSERT INTO webhook_attempts (event_id, platform_id, env, ` + strings.Join(attemptCols, ", ") + `)
		SELECT v.event_id, v.a_platform_id, v.a_env, v.a_` + strings.Join(attemptCols, ", v.a_") + ` FROM v
		WHERE v.a_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ins WHERE ins.event_id = v.event_id))
	SELECT event_id FROM ins`

// finishHanded writes the rows of handed-over deliveries fs[idx] with
// their first outcomes and attempts, and sets held for those it wrote
// (queued: as the batch commits). A delivery that has a row already was
// given one by a claim after its journal's lease ran out: its lease is
// lost, and its attempt goes to webhook_attempts, as finishRows does.
func (q Q) finishHanded(ctx context.Context, all []Finish, held []bool, idx []int, queued bool) error {
	now := q.Now()
	fs, scan, reset := heldBy(all, held, idx)
	if q.engine == Postgres {
		n := len(fs)
		platforms, envs, attempts, windows := make(textColumn, n), make(textColumn, n), make(int8Column, n), make(int8Column, n)
		for i, f := range fs {
			d := f.Handed
			platforms[i], envs[i] = new(d.Tenant.PlatformID), new(d.Tenant.Env)
			attempts[i], windows[i] = new(int64(d.Attempts)), new(toMicros(d.WindowStart))
		}
		args := append(finishArrays(fs, now), platforms, envs, attempts, windows, toMicros(now))
		if queued {
			return q.queueWrite(statement{sql: finishHandedPG, args: args, scan: scan, reset: reset, touch: finishTables})
		}
		return q.queryEach(ctx, finishHandedPG, args, scan)
	}
	const row = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	args := make([]any, 0, 17*len(fs))
	for _, f := range fs {
		d, o := f.Handed, f.Outcome
		next := o.NextAttemptAt
		if next.IsZero() {
			next = now
		}
		args = append(args, f.EventID, d.Tenant.PlatformID, d.Tenant.Env, o.State, d.Attempts, toMicros(d.WindowStart),
			toMicros(next), nullMicros(o.DeliveredAt), toMicros(now))
		if a := f.Attempt; a != nil {
			args = append(args, attemptArgs(*a)...)
		} else {
			args = append(args, nil, nil, nil, nil, nil, nil, nil, nil)
		}
	}
	values := strings.TrimSuffix(strings.Repeat(row+", ", len(fs)), ", ")
	err := q.queryEach(ctx, `INSERT INTO webhook_deliveries (`+handedCols+`) VALUES `+values+`
		ON CONFLICT (event_id) DO NOTHING RETURNING event_id`, args, scan)
	if err != nil {
		return err
	}
	return q.insertLost(ctx, all, held, idx)
}

// journalDelivery is the delivery a journal row stands for: the row its
// hand-over would have written at the commit (insertEvents before 0064).
func journalDelivery(eventID string, t Tenant, created time.Time, journal, token string, until int64) Delivery {
	lease := fromMicros(until)
	return Delivery{EventID: eventID, Tenant: t, State: DeliveryPending, Attempts: 1, WindowStart: created,
		NextAttemptAt: created, LeaseToken: token, LeaseUntil: &lease, UpdatedAt: created, Journal: journal}
}

// handedDelivery reads the delivery of an event that has no row, from the
// journal row that names it (ErrNotFound if none does); lock locks that
// journal row (PostgreSQL).
func (q Q) handedDelivery(ctx context.Context, t Tenant, eventID string, lock bool) (Delivery, error) {
	query := `SELECT e.created_at, h.id, h.lease_token, h.lease_until FROM events e
		JOIN webhook_handoffs h ON h.event_ids LIKE '%' || e.id || '%'
		WHERE e.platform_id = ? AND e.env = ? AND e.id = ?`
	if lock && q.engine == Postgres {
		query += ` FOR UPDATE OF h`
	}
	var created, until int64
	var journal, token string
	if err := q.queryRow(ctx, query, t.PlatformID, t.Env, eventID).Scan(&created, &journal, &token, &until); err != nil {
		return Delivery{}, classify(err)
	}
	return journalDelivery(eventID, t, fromMicros(created), journal, token, until), nil
}
