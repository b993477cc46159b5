package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// outbox holds the events a write transaction has emitted and not yet
// written. A transfer emits several (created, processing, completed, the
// receiver's), and each was two statements, an event and its delivery row;
// kept here, they are written just before the commit in one statement per
// table, and in a group commit one pair of statements covers every transfer
// of the batch. The rows still commit with the change that caused them, or
// not at all.
//
// A few inserts of new rows that nothing reads before the commit (the quote
// of an immediate execution) wait there too (writes), and go in with them.
type outbox struct {
	events []Event
	writes []statement
	handed *handoffs // deliveries leased to this node's workers (handoff.go)
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
	return nil
}

// flushOutbox writes the queued events, their deliveries and the queued
// writes: reads of those tables through the transaction call it first.
func (q Q) flushOutbox(ctx context.Context) error {
	return q.execAll(ctx, append(q.takeEvents(), q.takeWrites()...))
}

func (q Q) takeWrites() []statement {
	if q.outbox == nil {
		return nil
	}
	w := q.outbox.writes
	q.outbox.writes = nil
	return w
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

// insertEvents writes es and their delivery rows: leased to the event's own
// LeaseToken if it has one, else to a worker of this node where the handoff
// grants one, unleased for a claim otherwise.
func (q Q) insertEvents(es []Event) []statement {
	values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?), ", len(es)), ", ")
	args := make([]any, 0, 7*len(es))
	for _, e := range es {
		args = append(args, e.ID, e.Tenant.PlatformID, e.Tenant.Env, e.Type, e.ResourceID, string(e.Envelope), toMicros(e.CreatedAt))
	}
	events := statement{`INSERT INTO events (id, platform_id, env, type, resource_id, envelope, created_at) VALUES ` + values, args}
	values = strings.TrimSuffix(strings.Repeat("(?, ?, ?, 'PENDING', ?, ?, ?, ?, ?, ?), ", len(es)), ", ")
	args = make([]any, 0, 9*len(es))
	now := q.now()
	for _, e := range es {
		at := toMicros(e.CreatedAt)
		var attempts int
		var token, until any
		if e.LeaseToken != "" {
			attempts, token, until = 1, e.LeaseToken, toMicros(e.LeaseUntil)
		} else if c, ok := q.outbox.handed.reserve(e, now); ok {
			attempts, token, until = c.Attempts, c.LeaseToken, toMicros(*c.LeaseUntil)
		}
		args = append(args, e.ID, e.Tenant.PlatformID, e.Tenant.Env, attempts, at, at, at, token, until)
	}
	deliveries := statement{`INSERT INTO webhook_deliveries (event_id, platform_id, env, state, attempts, window_start,
		next_attempt_at, updated_at, lease_token, lease_until) VALUES ` + values, args}
	return []statement{events, deliveries}
}

// statement is one write, "?" placeholders.
type statement struct {
	sql  string
	args []any
}

// maxCombinedArgs keeps a combined statement under PostgreSQL's 65535
// parameters.
const maxCombinedArgs = 60_000

// execAll runs writes that neither reads the others' rows nor touches their
// rows (the outbox and the counters at commit). On PostgreSQL they go in as
// one statement, each a data-modifying WITH query of it, so they cost one
// round trip; SQLite runs in-process and takes them one by one.
func (q Q) execAll(ctx context.Context, stmts []statement) error {
	for len(stmts) > 0 {
		n, params := 1, len(stmts[0].args)
		if q.engine == Postgres {
			for n < len(stmts) && params+len(stmts[n].args) <= maxCombinedArgs {
				params += len(stmts[n].args)
				n++
			}
		}
		query, args := combine(stmts[:n])
		if _, err := q.exec(ctx, query, args...); err != nil {
			return err
		}
		stmts = stmts[n:]
	}
	return nil
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
// parameters; SQLite allows 32766 per statement).
const mergeRows = 500

// mergeInserts turns queued inserts of the same shape (the same
// "INSERT INTO t (…) VALUES (?, …)" text, one row each) into one multi-row
// statement per shape: a batch's quotes go in as one. The queued writes are
// new rows nothing reads before the commit, so their order does not matter.
func mergeInserts(stmts []statement) []statement {
	if len(stmts) < 2 {
		return stmts
	}
	var out []statement
	at := map[string]int{} // shape → index in out of its open statement
	rows := map[string]int{}
	for _, st := range stmts {
		i, ok := at[st.sql]
		tuple, single := singleRow(st.sql)
		if !single || !ok || rows[st.sql] >= mergeRows {
			if single {
				at[st.sql], rows[st.sql] = len(out), 1
			}
			out = append(out, statement{sql: st.sql, args: append([]any(nil), st.args...)})
			continue
		}
		out[i].sql += ", " + tuple
		out[i].args = append(out[i].args, st.args...)
		rows[st.sql]++
	}
	return out
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
