package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the collector's target when the operator has not set
// GOGC. The server's live heap is small (tens of MiB even over a million
// transactions), and at Go's default of 100 the collector and its allocation
// assists took about an eighth of the server's CPU under a transfer load,
// stalling SQLite's single writer most; 400 trades a few tens of MiB for that
// CPU (docs/benchmarks.md, "Seventh session").
const defaultGCPercent = 400

// gcPercent returns the target to set, or false to leave Go's (the operator's
// GOGC, including "off", always wins).
func gcPercent(lookup func(string) (string, bool)) (int, bool) {
	if v, ok := lookup("GOGC"); ok && v != "" {
		return 0, false
	}
	return defaultGCPercent, true
}

// tuneGC applies gcPercent to this process.
func tuneGC() {
	if p, ok := gcPercent(os.LookupEnv); ok {
		debug.SetGCPercent(p)
	}
}
