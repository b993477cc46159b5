//go:build race

package bulkimport

// raceEnabled reports a -race build: the race detector slows the pure-Go
// SQLite engine several times over.
const raceEnabled = true
