package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// pairs: two versions of paymentsd compare only in runs alternated on one
// machine within minutes (a machine's rate drifts by more than most changes
// move it; docs/benchmarks.md). scripts/bench.sh ab runs such pairs, version
// A then version B in each, and this reads their reports back: each pair's
// B over A for the rate and for machine CPU per transfer and its parts, and
// the median and range of each ratio over the pairs, with how many pairs
// moved each figure the way a better version would.

// PairFigure is one figure's B-over-A ratio across the pairs.
type PairFigure struct {
	Name   string    `json:"name"`
	Ratios []float64 `json:"ratios"`
	Spread Spread    `json:"spread"`
	// Better counts the pairs in which B did better: a higher rate, less
	// CPU.
	Better int `json:"better"`
}

// pairFigures are the figures compared, with their value in a report and
// whether more is better.
var pairFigures = []struct {
	name   string
	value  func(Report) float64
	higher bool
}{
	{"transfers/s", func(r Report) float64 { return r.Throughput }, true},
	{"machine CPU ms per transfer", func(r Report) float64 { return cpuOf(r).MachineMs }, false},
	{"server CPU ms per transfer", func(r Report) float64 { return cpuOf(r).ServerMs }, false},
	{"PostgreSQL CPU ms per transfer", func(r Report) float64 { return cpuOf(r).PostgresMs }, false},
}

func cpuOf(r Report) CPUPerTransfer {
	if r.CPU == nil {
		return CPUPerTransfer{}
	}
	return *r.CPU
}

// comparePairs takes reports as A, B, A, B, …: pair i is reports 2i and
// 2i+1, of one engine and concurrency. A figure either side lacks (no CPU where /proc is missing, no
// PostgreSQL on SQLite) is left out.
func comparePairs(reports []Report) ([]PairFigure, error) {
	if len(reports) == 0 || len(reports)%2 != 0 {
		return nil, fmt.Errorf("%d reports: give them in pairs, A then B", len(reports))
	}
	for i := 0; i < len(reports); i += 2 {
		if a, b := reports[i], reports[i+1]; a.Engine != b.Engine || a.Concurrency != b.Concurrency {
			return nil, fmt.Errorf("pair %d: %s at c=%d against %s at c=%d", i/2+1, a.Engine, a.Concurrency, b.Engine, b.Concurrency)
		}
	}
	var out []PairFigure
	for _, f := range pairFigures {
		pf := PairFigure{Name: f.name}
		for i := 0; i < len(reports); i += 2 {
			a, b := f.value(reports[i]), f.value(reports[i+1])
			if a <= 0 || b <= 0 {
				continue
			}
			pf.Ratios = append(pf.Ratios, b/a)
			if (b > a) == f.higher && a != b {
				pf.Better++
			}
		}
		if len(pf.Ratios) > 0 {
			pf.Spread = spreadOf(pf.Ratios)
			out = append(out, pf)
		}
	}
	return out, nil
}

func writePairs(w io.Writer, pairs int, fs []PairFigure) {
	fmt.Fprintf(w, "%d pairs, B over A: median [min–max], pairs in which B did better\n", pairs)
	for _, f := range fs {
		fmt.Fprintf(w, "  %-32s %.3f [%.3f–%.3f]  %d of %d\n", f.Name, f.Spread.Median, f.Spread.Min, f.Spread.Max,
			f.Better, len(f.Ratios))
	}
}

func pairsMain(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("paymentsbench pairs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if fs.NArg() == 0 {
		return 2, errors.New("give the JSON reports of the pairs, A then B in each (paymentsbench -json)")
	}
	reports, err := readReports(fs.Args())
	if err != nil {
		return 2, err
	}
	figs, err := comparePairs(reports)
	if err != nil {
		return 2, err
	}
	writePairs(stdout, len(reports)/2, figs)
	return 0, nil
}
