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

// gogcSet says whether the operator chose the collector's target; theirs,
// "off" included, always wins.
func gogcSet(lookup func(string) (string, bool)) bool {
	v, ok := lookup("GOGC")
	return ok && v != ""
}

// tuneGC sets defaultGCPercent for this process unless GOGC is set.
func tuneGC() {
	if !gogcSet(os.LookupEnv) {
		debug.SetGCPercent(defaultGCPercent)
	}
}
