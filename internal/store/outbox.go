package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// outbox holds the events a write transaction has emitted and not yet
// written. A transfer emits several (created, processing, completed, the
// receiver's), and each was two statements, an event and its delivery row;
// kept here, they are written just before the commit in one statement per
// table, and in a group commit one pair of statements covers every transfer
// of the batch. The rows still commit with the change that caused them, or
// not at all.
//
// Inserts of new rows wait there too (writes: the quote and the
// transactions of an immediate execution), and go in with them. Until then
// every statement sent through the transaction that may touch their tables
// writes them first (flushFor), so reads see them as if they had been made
// at once.
type outbox struct {
	events []Event
	writes []statement
	// earlier, inside a batch, holds the queued writes of the batch's fns
	// that ran before this one (batch.go); nil otherwise.
	earlier *batchWrites
	handed  *handoffs // deliveries leased to this node's workers (handoff.go)
	// shared: a fn of a batch (InBatchTx) that does not run alone after a
	// failed commit; if its batch's commit fails, each fn runs again alone.
	shared bool
	// balances, inside a batch that locked balance rows when it began,
	// holds them as the transaction has them (balance_cache.go); volumes,
	// inside such a batch, the daily-volume shard rows it added to
	// (volumes.go).
	balances *balanceCache
	volumes  *volumeCache
	// flushing is set while the queued writes are written: those
	// statements change rows the caches already hold as they will be.
	flushing bool
	// savepoint, for a fn of a batch, opens the fn's savepoint before its
	// first statement (batch.go).
	savepoint *fnSavepoint
	// holdLast, for a PostgreSQL batch's commit, keeps execAll's writes
	// back, in held, for the batch to send with its COMMIT in one round trip
	// (batch_tx.go).
	holdLast bool
	held     []pipelined
}

// batchWrites are the queued writes of a batch's fns. made are those a
// later fn's statement wrote early, inside that fn's savepoint: if the fn
// is rolled back to it they are queued again (requeue), else they stay made
// (keep).
type batchWrites struct {
	pending, made []statement
}

func (b *batchWrites) requeue() {
	b.pending = append(b.made, b.pending...)
	b.made = nil
}

func (b *batchWrites) keep(fnWrites []statement) {
	b.made = nil
	b.pending = append(b.pending, fnWrites...)
}

// outboxChunk bounds the rows of one INSERT (at most 9 parameters each; SQLite
// allows 32766 per statement).
const outboxChunk = 500

// QueueEvent adds an event to the outbox, with its webhook delivery due at
// the event's time. Reads of events or deliveries through the same
// transaction write the queue first, so they see what it emitted.
func (q Q) QueueEvent(e Event) error {
	if q.outbox == nil {
		return errors.New("store: events are queued inside InTx or InBatchTx, which write them before committing")
	}
	q.outbox.events = append(q.outbox.events, e)
	q.countEvents(e.Tenant, e.Type, 1)
	return nil
}

// takeWrites empties the queued writes, the batch's earlier fns' too.
func (q Q) takeWrites() []statement {
	if q.outbox == nil {
		return nil
	}
	var w []statement
	if e := q.outbox.earlier; e != nil && len(e.pending) > 0 {
		w = append(w, e.pending...)
		e.made = append(e.made, e.pending...)
		e.pending = nil
	}
	w = append(w, q.outbox.writes...)
	q.outbox.writes = nil
	return w
}

// flushFor writes the queued events and writes before query is sent when
// query may touch a table they go to: it names the table, or a table whose
// rows refer to it (referencing). Over-flushing costs a round trip; never
// flushing when it should would hide rows the transaction made.
func (q Q) flushFor(ctx context.Context, query string) error {
	if q.outbox == nil || !q.outbox.queuedFor(query) {
		return nil
	}
	return q.writeQueued(ctx, q.takeEvents(), q.takeWrites())
}

// eventTables are the tables a queued event is written to (events, its
// delivery) or that are read with them (webhook_attempts, by event).
var eventTables = []string{"events", "webhook_deliveries", "webhook_attempts"}

// queuedFor reports whether a queued event or write goes to a table query
// may touch.
func (o *outbox) queuedFor(query string) bool {
	if len(o.events) > 0 && slices.ContainsFunc(eventTables, func(t string) bool { return strings.Contains(query, t) }) {
		return true
	}
	lists := [2][]statement{o.writes}
	if o.earlier != nil {
		lists[1] = o.earlier.pending
	}
	for _, list := range lists {
		for _, st := range list {
			if touches(query, st) {
				return true
			}
		}
	}
	return false
}

// referencing names, for each table writes are queued to, the tables whose
// foreign keys refer to it: inserting into them needs its rows. A test
// (TestQueuedTables_ReferencingCoversTheMigrations) reads the migrations so
// that a new foreign key cannot be missed here.
var referencing = map[string][]string{
	"transactions":           {"card_open_authorizations"},
	"quotes":                 nil,
	"idempotency_keys":       nil,
	"ledger_transfers":       {"ledger_postings", "transactions"},
	"ledger_postings":        nil,
	"ledger_posting_buckets": nil,
	"ledger_balances":        nil,
	"daily_volumes":          nil,
	"webhook_deliveries":     nil,
	"webhook_attempts":       nil,
}

// touches reports whether query may touch a table the queued write st goes
// to: it names the table or one referencing it. A write whose tables are not
// known touches everything.
func touches(query string, st statement) bool {
	tables := st.tables()
	if len(tables) == 0 {
		return true
	}
	for _, table := range tables {
		if strings.Contains(query, table) {
			return true
		}
		refs, known := referencing[table]
		if !known {
			return true
		}
		for _, r := range refs {
			if strings.Contains(query, r) {
				return true
			}
		}
	}
	return false
}

// insertTable is the table of an "INSERT INTO t (…" statement.
func insertTable(insert string) (string, bool) {
	rest, ok := strings.CutPrefix(insert, "INSERT INTO ")
	if !ok {
		return "", false
	}
	table, _, ok := strings.Cut(rest, " ")
	return table, ok && table != ""
}

// queueWrite adds an insert of a new row to the outbox.
func (q Q) queueWrite(st statement) error {
	if q.outbox == nil {
		return errors.New("store: writes are queued inside InTx or InBatchTx, which make them before committing")
	}
	q.outbox.writes = append(q.outbox.writes, st)
	return nil
}

// takeEvents empties the queue into the statements that write it.
func (q Q) takeEvents() []statement {
	if q.outbox == nil || len(q.outbox.events) == 0 {
		return nil
	}
	pending := q.outbox.events
	q.outbox.events = nil
	var out []statement
	for len(pending) > 0 {
		n := min(len(pending), outboxChunk)
		out = append(out, q.insertEvents(pending[:n])...)
		pending = pending[n:]
	}
	return out
}

// insertedEventCols and insertedDeliveryCols are the columns insertEvents
// writes of an event and of a delivery row.
var (
	insertedEventCols    = []string{"id", "platform_id", "env", "type", "resource_id", "envelope", "created_at"}
	insertedDeliveryCols = []string{"event_id", "platform_id", "env", "state", "attempts", "window_start", "next_attempt_at",
		"updated_at", "lease_token", "lease_until"}
)

// insertEvents writes es and their delivery rows: leased to the event's own
// LeaseToken if it has one, unleased for a claim if the handoff does not
// take it. A delivery the handoff takes gets no row now: one journal row
// names all of them (handoff_journal.go).
func (q Q) insertEvents(es []Event) []statement {
	args := make([]any, 0, len(insertedEventCols)*len(es))
	for _, e := range es {
		args = append(args, e.ID, e.Tenant.PlatformID, e.Tenant.Env, e.Type, e.ResourceID, string(e.Envelope), toMicros(e.CreatedAt))
	}
	out := []statement{q.insertRows("events", insertedEventCols, len(es), args, "")}
	args = make([]any, 0, len(insertedDeliveryCols)*len(es))
	now := q.now()
	journal := q.outbox.handed.journal()
	for _, e := range es {
		at := toMicros(e.CreatedAt)
		var attempts int
		var token, until any
		if e.LeaseToken != "" {
			attempts, token, until = 1, e.LeaseToken, toMicros(e.LeaseUntil)
		} else if journal.reserve(e, now) {
			continue
		}
		args = append(args, e.ID, e.Tenant.PlatformID, e.Tenant.Env, "PENDING", attempts, at, at, at, token, until)
	}
	if st, ok := journal.statement(); ok {
		out = append(out, st)
	}
	if n := len(args) / len(insertedDeliveryCols); n > 0 {
		out = append(out, q.insertRows("webhook_deliveries", insertedDeliveryCols, n, args, ""))
	}
	return out
}

// statement is one write, "?" placeholders; or, queued in a batch, one
// fn's ledger write or daily-volume add, written with the batch's others as
// summed deltas (at_commit.go).
type statement struct {
	sql  string
	args []any
	// want, when not 0, is how many rows the statement must return
	// (RETURNING) for its batch to commit (execAll).
	want   int
	ledger *queuedLedger
	volume *queuedVolume
	// scan, when set, reads each row the statement returns (a queued
	// webhook finish's answers), which it sends on its own, never combined
	// with others; reset, when set, runs before each time it is sent (a
	// rollback to a savepoint may make it run again); touch names the tables
	// it may touch (tables).
	scan  func(rowScanner) error
	reset func()
	touch []string
	// fresh: the text was made for this batch (several writes as one
	// statement, execAll), so it may not recur (fresh_sql.go).
	fresh bool
}

// maxCombinedArgs keeps a combined statement under PostgreSQL's 65535
// parameters.
const maxCombinedArgs = 60_000

// execAll runs writes that neither reads the others' rows nor touches their
// rows (the outbox and the counters at commit). On PostgreSQL they go in as
// one statement, each a data-modifying WITH query of it, so they cost one
// round trip; SQLite runs in-process and takes them one by one. A statement
// with a want (the summed updates, at_commit.go) must return that many
// rows: on PostgreSQL its group ends with a SELECT that fails when the
// returned rows are fewer (paymentsd_expect_rows, groupStatement), and
// rowsMissed reads that failure as errQueuedDeltaMissed; SQLite counts them
// (execWanting). A statement with a scan (a queued finish) goes on its own.
// With holdLast nothing is sent: the statements are kept in held.
func (q Q) execAll(ctx context.Context, stmts []statement) error {
	for len(stmts) > 0 {
		if st := stmts[0]; st.scan != nil {
			if err := q.sendOrHold(ctx, st); err != nil {
				return err
			}
			stmts = stmts[1:]
			continue
		}
		n, params := 1, len(stmts[0].args)
		if q.engine == Postgres {
			for n < len(stmts) && stmts[n].scan == nil && params+len(stmts[n].args) <= maxCombinedArgs {
				params += len(stmts[n].args)
				n++
			}
		}
		if q.engine != Postgres && stmts[0].want > 0 {
			if err := q.execWanting(ctx, stmts[0]); err != nil {
				return err
			}
			stmts = stmts[1:]
			continue
		}
		query, args := groupStatement(stmts[:n])
		if err := q.sendOrHold(ctx, statement{sql: query, args: args, fresh: n > 1 || stmts[0].want > 0}); err != nil {
			return rowsMissed(err)
		}
		stmts = stmts[n:]
	}
	return nil
}

// sendOrHold runs st, or keeps it in held for the commit's round trip
// (holdLast).
func (q Q) sendOrHold(ctx context.Context, st statement) error {
	if q.outbox != nil && q.outbox.holdLast {
		q.outbox.held = append(q.outbox.held, pipelined{sql: q.rebind(st.sql), args: st.args, scan: st.scan, reset: st.reset,
			fresh: st.fresh})
		return nil
	}
	if st.reset != nil {
		st.reset()
	}
	if st.scan != nil {
		return q.queryEach(ctx, st.sql, st.args, st.scan)
	}
	_, err := q.exec(ctx, st.sql, st.args...)
	return err
}

// execWanting runs st, whose RETURNING rows must number st.want, on
// SQLite (PostgreSQL checks inside the statement, groupStatement): in the
// batch's transaction, so a shortfall (errQueuedDeltaMissed) keeps the
// batch from committing.
func (q Q) execWanting(ctx context.Context, st statement) error {
	rows, err := q.query(ctx, st.sql, st.args...)
	if err != nil {
		return err
	}
	got := 0
	if err := eachRow(rows, func(rowScanner) error { got++; return nil }); err != nil {
		return err
	}
	if got != st.want {
		return fmt.Errorf("%w: %d of %d rows changed", errQueuedDeltaMissed, got, st.want)
	}
	return nil
}

// groupStatement is group as one statement, ending in its wants' check.
// The check fails inside the statement (not in Go after it), so that a
// statement sent with its transaction's COMMIT in one pipeline (batch_tx.go)
// keeps the COMMIT from running.
func groupStatement(group []statement) (string, []any) {
	var counts []string
	want := 0
	for i, st := range group {
		if st.want > 0 {
			counts = append(counts, fmt.Sprintf("(SELECT count(*) FROM w%d)", i))
			want += st.want
		}
	}
	if want == 0 {
		return combine(group)
	}
	// want is a parameter, so the text does not change with it (unnest.go).
	check := fmt.Sprintf("SELECT paymentsd_expect_rows(%s, CAST(? AS BIGINT))", strings.Join(counts, " + "))
	return combine(append(slices.Clip(group), statement{sql: check, args: []any{want}}))
}

// expectRowsCode is the SQLSTATE paymentsd_expect_rows raises (migration
// 0062).
const expectRowsCode = "PD001"

// rowsMissed maps paymentsd_expect_rows' error to errQueuedDeltaMissed.
func rowsMissed(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == expectRowsCode {
		return fmt.Errorf("%w: %s", errQueuedDeltaMissed, pg.Message)
	}
	return err
}

// combine makes one statement of several: all but the last as WITH queries.
func combine(stmts []statement) (string, []any) {
	if len(stmts) == 1 {
		return stmts[0].sql, stmts[0].args
	}
	var b strings.Builder
	var args []any
	last := len(stmts) - 1
	for i, st := range stmts[:last] {
		if i == 0 {
			b.WriteString("WITH ")
		} else {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "w%d AS (%s)", i, st.sql)
		args = append(args, st.args...)
	}
	b.WriteString(" ")
	b.WriteString(stmts[last].sql)
	return b.String(), append(args, stmts[last].args...)
}

// mergeRows bounds the rows of one merged insert (a quote's is 12
// parameters, a transaction's 39; SQLite allows 32766 per statement,
// PostgreSQL 65535).
const mergeRows = 500

// mergeInserts turns queued inserts of the same shape (the same
// "INSERT INTO t (…) VALUES (?, …)" text, one row each) into one multi-row
// statement per shape: a batch's quotes go in as one, and its transactions
// rows (on PostgreSQL as arrays, insertRows, when the tuple is all
// placeholders). The queued writes are new rows of different tables, none
// referring to another (flushFor wrote them before any statement that
// could), so their order does not matter.
func (q Q) mergeInserts(stmts []statement) []statement {
	if len(stmts) == 0 || (len(stmts) == 1 && q.engine != Postgres) {
		return stmts
	}
	var out []statement
	var shapes []string    // out[i]'s shape when it is a merged insert, else ""
	var counts []int       // out[i]'s rows
	at := map[string]int{} // shape → index in out of its open statement
	for _, st := range stmts {
		i, ok := at[st.sql]
		_, single := singleRow(st.sql)
		if !single || !ok || counts[i] >= mergeRows {
			shape := ""
			if single {
				at[st.sql], shape = len(out), st.sql
			}
			st.args = append([]any(nil), st.args...)
			out, shapes, counts = append(out, st), append(shapes, shape), append(counts, 1)
			continue
		}
		out[i].args = append(out[i].args, st.args...)
		counts[i]++
	}
	// Each merged shape's text is made once, for all its rows.
	for i, shape := range shapes {
		if shape == "" || (counts[i] == 1 && q.cols == nil) {
			continue
		}
		if table, cols, ok := placeholderInsert(shape); ok {
			st := q.insertRows(table, cols, counts[i], out[i].args, "")
			out[i].sql, out[i].args = st.sql, st.args
			continue
		}
		tuple, _ := singleRow(shape)
		out[i].sql = shape + strings.Repeat(", "+tuple, counts[i]-1)
	}
	return out
}

// placeholderInsert is the table and columns of a one-row insert whose
// tuple holds only placeholders ("INSERT INTO t (a, b) VALUES (?, ?)").
func placeholderInsert(query string) (table string, cols []string, ok bool) {
	table, ok = insertTable(query)
	open, values := strings.Index(query, " ("), strings.LastIndex(query, ") VALUES (")
	if !ok || open < 0 || values < open {
		return "", nil, false
	}
	cols = splitCols(query[open+2 : values])
	if query[values+len(") VALUES "):] != "("+ledgerPlaceholders(len(cols))+")" {
		return "", nil, false
	}
	return table, cols, true
}

// singleRow reports whether query is an INSERT of one row that ends with its
// VALUES tuple, and that tuple.
func singleRow(query string) (tuple string, ok bool) {
	if !strings.HasPrefix(query, "INSERT INTO ") {
		return "", false
	}
	k := strings.LastIndex(query, " VALUES (")
	if k < 0 || !strings.HasSuffix(query, ")") {
		return "", false
	}
	tuple = query[k+len(" VALUES "):]
	if strings.Count(tuple, "(") != 1 || strings.Count(tuple, ")") != 1 {
		return "", false
	}
	return tuple, true
}
