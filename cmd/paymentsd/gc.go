package main

import (
	"os"
	"runtime/debug"

	"github.com/paymentsd/paymentsd/internal/store"
)

// gcDefaults are the collector's settings where the operator set neither
// GOGC nor GOMEMLIMIT. The server's live heap is small (tens of MiB even over
// a million transactions), and at Go's default GOGC of 100 the collector and
// its allocation assists took about an eighth of the server's CPU under a
// transfer load, stalling SQLite's single writer most (docs/benchmarks.md,
// "Seventh session"): 400 on both engines was the first answer.
//
// On PostgreSQL the live heap shrank further once a batch's statement texts
// stopped piling up in caches (the twenty-sixth session), so at 400
// collections came about twice as often again; 800 took a few percent off the
// server's CPU per transfer at concurrency 8 (the twenty-seventh session,
// alternated pairs; docs/benchmarks.md). A soft limit of 192 MiB goes with
// it: a heap goal of nine times the live heap would otherwise follow any
// growth of the live heap, and with the limit the collector runs earlier
// instead. On SQLite 800 (with a 256 MiB limit) saved nothing measurable: its
// server does the database's work too, so the collector is a smaller share;
// and it cost about 100 MiB of resident memory, so SQLite keeps 400 and no
// limit.
func gcDefaults(engine store.Engine) (percent int, limit int64) {
	if engine == store.Postgres {
		return 800, 192 << 20
	}
	return 400, 0
}

// envSet says whether the operator set the variable name; theirs ("off"
// included) always wins.
func envSet(lookup func(string) (string, bool), name string) bool {
	v, ok := lookup(name)
	return ok && v != ""
}

// tuneGC applies gcDefaults for the engine: the target unless GOGC is set,
// the limit (where there is one) unless GOMEMLIMIT is set.
func tuneGC(engine store.Engine) {
	percent, limit := gcDefaults(engine)
	if !envSet(os.LookupEnv, "GOGC") {
		debug.SetGCPercent(percent)
	}
	if limit > 0 && !envSet(os.LookupEnv, "GOMEMLIMIT") {
		debug.SetMemoryLimit(limit)
	}
}
