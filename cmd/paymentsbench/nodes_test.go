package main

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestNodeForSpreadsWorkers(t *testing.T) {
	for _, tc := range []struct{ workers, nodes int }{{8, 1}, {8, 2}, {64, 2}, {7, 3}} {
		per := make([]int, tc.nodes)
		for w := 0; w < tc.workers; w++ {
			n := nodeFor(w, tc.nodes)
			if n < 0 || n >= tc.nodes {
				t.Fatalf("worker %d of %d nodes on node %d", w, tc.nodes, n)
			}
			per[n]++
		}
		for n, k := range per {
			if k < tc.workers/tc.nodes || k > tc.workers/tc.nodes+1 {
				t.Errorf("%d workers on %d nodes: node %d has %d (%v)", tc.workers, tc.nodes, n, k, per)
			}
		}
	}
}

func TestCrashPickerAlternates(t *testing.T) {
	pick, err := crashPicker("alternate", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []int{0, 1, 0, 1, 0} {
		if got := pick(k); got != want {
			t.Fatalf("kill %d takes node %d, want %d", k, got, want)
		}
	}
	one, _ := crashPicker("random", 1, nil)
	if one(5) != 0 {
		t.Fatal("one node: every kill takes it")
	}
}

func TestCrashPickerRandomTakesEveryNode(t *testing.T) {
	pick, err := crashPicker("random", 3, rand.New(rand.NewPCG(4, 5)))
	if err != nil {
		t.Fatal(err)
	}
	per := make([]int, 3)
	for k := 0; k < 300; k++ {
		n := pick(k)
		if n < 0 || n > 2 {
			t.Fatalf("kill %d takes node %d", k, n)
		}
		per[n]++
	}
	for n, k := range per {
		if k < 50 {
			t.Errorf("node %d killed %d times of 300: %v", n, k, per)
		}
	}
	if _, err := crashPicker("everyone", 2, nil); err == nil {
		t.Fatal("an unknown -crash-nodes mode was accepted")
	}
}

func TestNodesFlagsNeedPostgres(t *testing.T) {
	if _, err := parseFlags([]string{"-spawn", "-db", "sqlite:/tmp/x.db", "-nodes", "2"}, discard{}); err == nil {
		t.Error("-nodes 2 on SQLite accepted")
	}
	if _, err := parseFlags([]string{"-server", "http://x", "-token", "a:b", "-db", "postgres://h/db", "-nodes", "2"}, discard{}); err == nil {
		t.Error("-nodes 2 without -spawn accepted")
	}
	o, err := parseFlags([]string{"-db", "postgres://h/db", "-nodes", "2", "-crash-every", "3s"}, discard{})
	if err != nil || o.nodes != 2 || !o.spawn || o.crashNodes != "alternate" {
		t.Errorf("-nodes 2 -crash-every 3s: %+v %v", o, err)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// The server CPU of a run with several nodes is the sum over every node and
// every incarnation (here: exited ones only).
func TestNodesCPUSumsEveryNode(t *testing.T) {
	a, b := &server{exitedCPU: 1500 * time.Millisecond}, &server{exitedCPU: 700 * time.Millisecond}
	a.peakRSS, b.peakRSS = 100, 300
	got, ok := nodesCPU([]*server{a, b})()
	if !ok || got != 2200*time.Millisecond {
		t.Fatalf("nodesCPU = %v %v, want 2.2s", got, ok)
	}
	if p := nodesPeakRSS([]*server{a, b}); p != 300 {
		t.Fatalf("nodesPeakRSS = %d, want the largest, 300", p)
	}
}
