package store

import "testing"

// Transactions running at the same time should hold different shard rows:
// any n consecutive picks of one process cover every one of n shards.
func TestTurn_ShardsTakenInTurn(t *testing.T) {
	for name, c := range map[string]struct {
		turn   *turn
		shards int
	}{
		"daily volume":       {volumeTurn, volumeShards},
		"transaction counts": {countTurn, countShards},
	} {
		next, shards := func() int { return c.turn.next(c.shards) }, c.shards
		for round := range 3 {
			seen := map[int]bool{}
			for range shards {
				k := next()
				if k < 0 || k >= shards {
					t.Fatalf("%s: shard %d out of range", name, k)
				}
				seen[k] = true
			}
			if len(seen) != shards {
				t.Fatalf("%s, round %d: %d consecutive picks took %d distinct shards", name, round, shards, len(seen))
			}
		}
	}
}
