package store

import "testing"

// Executions running at the same time should hold different shard rows:
// any volumeShards consecutive picks of one process cover every shard.
func TestDailyVolume_ShardsTakenInTurn(t *testing.T) {
	for round := range 3 {
		seen := map[int]bool{}
		for range volumeShards {
			k := nextVolumeShard()
			if k < 0 || k >= volumeShards {
				t.Fatalf("shard %d out of range", k)
			}
			seen[k] = true
		}
		if len(seen) != volumeShards {
			t.Fatalf("round %d: %d consecutive picks took %d distinct shards", round, volumeShards, len(seen))
		}
	}
}
