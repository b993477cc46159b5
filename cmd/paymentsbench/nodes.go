package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Several nodes (issue 23): -nodes N spawns N paymentsd processes on one
// PostgreSQL database, each on its own port. Load worker w talks to node
// w mod N (nodeFor); in crash mode each kill takes the node crashTarget
// names, alternating or at random (-crash-nodes), and restarts it while the
// others keep serving.

// nodeFor is the node load worker w sends its requests to.
func nodeFor(worker, nodes int) int {
	if nodes <= 1 {
		return 0
	}
	return worker % nodes
}

// crashPicker names the node each kill takes: kill k (0-based) takes node k
// mod nodes with "alternate", a uniform draw with "random".
func crashPicker(mode string, nodes int, rng *rand.Rand) (func(k int) int, error) {
	switch {
	case nodes <= 1:
		return func(int) int { return 0 }, nil
	case mode == "alternate" || mode == "":
		return func(k int) int { return k % nodes }, nil
	case mode == "random":
		return func(int) int { return rng.IntN(nodes) }, nil
	}
	return nil, fmt.Errorf("-crash-nodes is alternate or random, not %q", mode)
}

// crashNodes SIGKILLs a node every interval (the one pick names) and
// restarts it on the same database and port until ctx ends; it returns the
// kills per node.
func crashNodes(ctx context.Context, srvs []*server, every time.Duration, pick func(int) int, logf func(string, ...any)) []int {
	kills := make([]int, len(srvs))
	t := time.NewTicker(every)
	defer t.Stop()
	for k := 0; ; k++ {
		select {
		case <-ctx.Done():
			return kills
		case <-t.C:
		}
		n := pick(k)
		s := srvs[n]
		s.kill()
		kills[n]++
		for {
			err := s.start(context.Background())
			if err == nil {
				break
			}
			logf("restart of node %d after kill %d: %v; retrying", n+1, k+1, err)
			s.kill()
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// nodesCPU is the CPU time of every node so far; ok is false if one's
// cannot be read.
func nodesCPU(srvs []*server) func() (time.Duration, bool) {
	return func() (time.Duration, bool) {
		var total time.Duration
		for _, s := range srvs {
			t, ok := s.CPU()
			if !ok {
				return 0, false
			}
			total += t
		}
		return total, true
	}
}

// nodesPeakRSS is the largest VmHWM of any node.
func nodesPeakRSS(srvs []*server) int64 {
	var peak int64
	for _, s := range srvs {
		peak = max(peak, s.PeakRSS())
	}
	return peak
}
