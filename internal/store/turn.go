package store

import (
	"math/rand/v2"
	"sync/atomic"
)

// turn hands out shard numbers in turn. Counters spread over shard rows
// (the day's volume, the transaction counts) keep each row locked on
// PostgreSQL from its update to the commit; with a random pick, two of
// eight concurrent transactions share a row more often than not (the
// birthday problem), and the second waits for the first's commit. Taken in
// turn, this process's concurrent transactions hold different rows; each
// process starts at a random shard, so several nodes spread as well.
type turn struct{ n atomic.Uint32 }

func newTurn() *turn {
	t := &turn{}
	t.n.Store(rand.Uint32())
	return t
}

// next returns the next shard of shards.
func (t *turn) next(shards int) int { return int(t.n.Add(1) % uint32(shards)) }
