package main

import (
	"bytes"
	"strings"
	"testing"
)

func pairRun(tps, machine, server, pg float64) Report {
	return Report{Engine: "postgres", Throughput: tps,
		CPU: &CPUPerTransfer{MachineMs: machine, ServerMs: server, PostgresMs: pg}}
}

// Each pair's B is taken over its own A (not median over median), and a
// pair counts as better for B where its rate is higher or its CPU lower.
func TestComparePairs_RatioPerPair(t *testing.T) {
	figs, err := comparePairs([]Report{
		pairRun(500, 2.0, 1.0, 0.8), pairRun(550, 1.8, 0.9, 0.8), // B better
		pairRun(400, 2.5, 1.2, 1.0), pairRun(380, 2.6, 1.3, 1.1), // B worse
		pairRun(600, 2.0, 1.0, 0.9), pairRun(630, 1.9, 0.95, 0.9), // B better
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 4 {
		t.Fatalf("%d figures: %+v", len(figs), figs)
	}
	rate, machine, pg := figs[0], figs[1], figs[3]
	if rate.Better != 2 || machine.Better != 2 || pg.Better != 0 {
		t.Fatalf("better counts: rate %d, machine %d, PostgreSQL %d", rate.Better, machine.Better, pg.Better)
	}
	if rate.Spread != (Spread{1.05, 0.95, 1.1}) || !near(machine.Spread.Median, 0.95) {
		t.Fatalf("rate %+v, machine %+v", rate.Spread, machine.Spread)
	}
}

// Figures a side lacks are left out; an odd number of reports, or a pair
// of two engines, is refused.
func TestComparePairs_MissingFiguresAndOddReports(t *testing.T) {
	sq := Report{Engine: "sqlite", Throughput: 600, CPU: &CPUPerTransfer{MachineMs: 2, ServerMs: 1.8}}
	figs, err := comparePairs([]Report{sq, sq})
	if err != nil || len(figs) != 3 {
		t.Fatalf("figures %+v, err %v (want no PostgreSQL figure)", figs, err)
	}
	if _, err := comparePairs([]Report{sq}); err == nil {
		t.Fatal("one report accepted as a pair")
	}
	if _, err := comparePairs([]Report{sq, pairRun(600, 2, 1, 1)}); err == nil {
		t.Fatal("SQLite against PostgreSQL accepted as a pair")
	}
	var out bytes.Buffer
	writePairs(&out, 1, figs)
	if !strings.Contains(out.String(), "transfers/s") || !strings.Contains(out.String(), "1 pairs") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
