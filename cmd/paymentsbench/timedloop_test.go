package main

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"
)

// timedLoop counts only the calls that committed, gives each worker its own
// generator, and stops on the first error.
func TestTimedLoop(t *testing.T) {
	seed := func(w int) *rand.Rand { return rand.New(rand.NewPCG(uint64(w), 1)) }
	// Every other call commits, the first one included: a worker that gets
	// to run one call within the 50ms (on a loaded machine, perhaps only
	// one) has a commit to count.
	rate, _, err := timedLoop(50*time.Millisecond, 3, seed, func(_ *rand.Rand, _ int, seq int64) (bool, error) {
		time.Sleep(time.Millisecond)
		return seq%2 == 1, nil
	})
	if err != nil || rate <= 0 {
		t.Fatalf("rate %v, err %v", rate, err)
	}
	boom := errors.New("boom")
	if _, _, err := timedLoop(time.Second, 2, seed, func(*rand.Rand, int, int64) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
}

// The classic SQLite loop runs and commits transfers.
func TestSQLiteLoop(t *testing.T) {
	rate, _, err := sqliteLoop(t.Context(), filepath.Join(t.TempDir(), "loop.db"), 2, 100*time.Millisecond)
	if err != nil || rate <= 0 {
		t.Fatalf("rate %v, err %v", rate, err)
	}
}
