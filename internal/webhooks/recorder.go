package webhooks

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// recordLinger is how long the recorder waits after an attempt finishes for
// others to write with it. Their leases are held that much longer, which
// costs nothing: claims do not count them (ClaimRequest.Finished).
const recordLinger = 5 * time.Millisecond

// maxRecordBatch caps the attempts written in one transaction.
const maxRecordBatch = 128

// recordTimeout bounds one batch write. The write does not stop when the
// runner does (what finished before a shutdown is still recorded), so this
// is what bounds a shutdown against a database that does not answer.
const recordTimeout = 10 * time.Second

// recorder writes the runner's finished attempts in batches: all that
// finish within its linger of the first, up to maxRecordBatch, in one
// transaction. A commit is an fsync on both engines (and SQLite has one
// writer for everything), so one per attempt is what kept workers from
// keeping up with a busy node's events.
//
// A delivery stays leased until its batch commits. If the node dies first,
// the lease expires and the event is sent again: at least once, as before.
type recorder struct {
	db      *store.DB
	log     *slog.Logger
	backoff Backoff
	linger  time.Duration // recordLinger; tests lengthen it
	queue   chan finished

	mu        sync.Mutex
	unwritten map[string]int // event id → attempts queued or being written
}

func newRecorder(db *store.DB, log *slog.Logger, b Backoff) *recorder {
	// A full queue makes workers wait, which holds back new claims while
	// the database is behind.
	return &recorder{db: db, log: log, backoff: b, linger: recordLinger, queue: make(chan finished, 2*maxRecordBatch),
		unwritten: map[string]int{}}
}

// add hands over a finished attempt. The attempt counts as unwritten from
// now until its batch is written, so a claim can tell it occupies no
// worker.
func (rec *recorder) add(f finished) {
	rec.mu.Lock()
	rec.unwritten[f.claim.EventID]++
	rec.mu.Unlock()
	rec.queue <- f
}

// pending lists the events whose attempts are over and not yet written.
func (rec *recorder) pending() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]string, 0, len(rec.unwritten))
	for id := range rec.unwritten {
		out = append(out, id)
	}
	return out
}

// run writes batches until close has been called and the queue is empty.
func (rec *recorder) run(ctx context.Context) {
	for f := range rec.queue {
		batch := []finished{f}
		linger := time.NewTimer(rec.linger)
	more:
		for len(batch) < maxRecordBatch {
			select {
			case f, ok := <-rec.queue:
				if !ok {
					break more
				}
				batch = append(batch, f)
			case <-linger.C:
				break more
			case <-ctx.Done(): // stopping: no one gains from waiting
				break more
			}
		}
		linger.Stop()
		rec.write(ctx, batch)
	}
}

// close ends run once what is queued is written. No add may follow.
func (rec *recorder) close() { close(rec.queue) }

func (rec *recorder) write(ctx context.Context, batch []finished) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	results, err := record(wctx, rec.db, rec.backoff, batch)
	cancel()
	rec.mu.Lock()
	for _, f := range batch {
		decrement(rec.unwritten, f.claim.EventID)
	}
	rec.mu.Unlock()
	for i, f := range batch {
		c, o := f.claim, f.out
		attrs := []any{"event_id", c.EventID, "type", c.Event.Type, "platform_id", c.Tenant.PlatformID, "env", c.Tenant.Env,
			"attempt", c.Attempts, "host", hostOf(o.URL), "status", o.Status, "latency_ms", o.Latency.Milliseconds()}
		switch {
		case err != nil:
			rec.log.Error("record webhook attempt", append(attrs, "error", err.Error())...)
		case results[i].lost:
			rec.log.Warn("webhook attempt finished after its lease expired", attrs...)
		case results[i].next.State == store.DeliveryPending:
			rec.log.Info("webhook attempt failed; will retry", append(attrs, "error", o.Err, "next_attempt_at", results[i].next.NextAttemptAt)...)
		default:
			rec.log.Info("webhook attempt", append(attrs, "state", results[i].next.State, "error", o.Err)...)
		}
	}
}
