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
	// journals counts, per journal row (store.Claim.Journal), the handed
	// deliveries it names whose outcomes are not written yet; the batch
	// that writes the last of them deletes the row. One whose count never
	// reaches 0 (an attempt dropped or cut short) is left to expire: a
	// claim then gives its events without rows due deliveries.
	journals map[string]journalCount
	pruned   time.Time
}

// journalCount is what the recorder still expects of one journal row.
type journalCount struct {
	left  int
	until time.Time // the row's lease; after it the count is forgotten
}

func newRecorder(db *store.DB, log *slog.Logger, b Backoff) *recorder {
	// A full queue makes workers wait, which holds back new claims while
	// the database is behind.
	return &recorder{db: db, log: log, backoff: b, linger: recordLinger, queue: make(chan finished, 2*maxRecordBatch),
		unwritten: map[string]int{}, journals: map[string]journalCount{}}
}

// expect counts the handed-over deliveries of cs that have journal rows.
func (rec *recorder) expect(cs []store.Claim) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, c := range cs {
		if c.Journal != "" {
			j := rec.journals[c.Journal]
			j.left++
			if c.LeaseUntil != nil && c.LeaseUntil.After(j.until) {
				j.until = *c.LeaseUntil
			}
			rec.journals[c.Journal] = j
		}
	}
}

// ending lists the journal rows whose last expected outcomes are in batch.
func (rec *recorder) ending(batch []finished) []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	in := map[string]int{}
	for _, f := range batch {
		if j := f.claim.Journal; j != "" {
			in[j]++
		}
	}
	var out []string
	for j, n := range in {
		if c, ok := rec.journals[j]; ok && c.left <= n {
			out = append(out, j)
		}
	}
	return out
}

// written settles the journal counts of a batch whose outcomes are
// written, and forgets the counts of rows past their leases.
func (rec *recorder) written(batch []finished, now time.Time) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, f := range batch {
		j := f.claim.Journal
		if c, ok := rec.journals[j]; ok {
			if c.left--; c.left <= 0 {
				delete(rec.journals, j)
			} else {
				rec.journals[j] = c
			}
		}
	}
	if now.Sub(rec.pruned) < time.Second {
		return
	}
	rec.pruned = now
	for j, c := range rec.journals {
		if c.until.Before(now) {
			delete(rec.journals, j)
		}
	}
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
	results, err := record(wctx, rec.db, rec.backoff, batch, rec.ending(batch))
	cancel()
	if err == nil {
		rec.written(batch, time.Now())
	}
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
