package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// summary: one figure from one run moves with the machine (docs/benchmarks.md,
// "Gaps"), so scripts/bench.sh repeats the load and this reads the repeated
// reports back and gives, per engine, the median and the range of each
// figure, the ratio to the baseline taken round by round (each round's
// baseline ran right after its load, on the same machine state).

// Spread is the median and range of one figure over rounds.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1]}
}

func (s Spread) String() string {
	return fmt.Sprintf("%.2f [%.2f–%.2f]", s.Median, s.Min, s.Max)
}

// EngineSummary gathers one engine's rounds.
type EngineSummary struct {
	Engine      string `json:"engine"`
	Concurrency int    `json:"concurrency,omitempty"`
	Rounds      int    `json:"rounds"`
	// Baseline names the baseline whose ratio is summarised (the first one
	// each report compared with); empty if none did.
	Baseline        string `json:"baseline,omitempty"`
	Throughput      Spread `json:"transfersPerSecond"`
	BaselineTPS     Spread `json:"baselineTps"`
	Ratio           Spread `json:"oursOverTheirs"`
	P50             Spread `json:"p50Ms"`
	P99             Spread `json:"p99Ms"`
	CPUMs           Spread `json:"machineCpuMsPerTransfer"`
	BaselineCPUMs   Spread `json:"baselineMachineCpuMsPerTransaction"`
	WebhooksPerXfer Spread `json:"webhooksPerTransfer"`
	// SameWork is the same-work baseline (samework.go), when the rounds
	// ran it: its name, transactions per second and our ratio to it.
	SameWork      string `json:"sameWorkBaseline,omitempty"`
	SameWorkTPS   Spread `json:"sameWorkTps"`
	SameWorkRatio Spread `json:"oursOverSameWork"`
	// Committer: the group committer's saturation, its busy time per
	// transfer and the requests per commit, when the rounds read them.
	CommitterBusy     Spread `json:"committerBusy"`
	CommitterBusyMs   Spread `json:"committerBusyMsPerTransfer"`
	RequestsPerCommit Spread `json:"requestsPerCommit"`
	MaxPending        int64  `json:"maxWebhooksPendingAtLoadEnd"`
	FailedRounds      int    `json:"roundsWithAFailedCheck"`
}

// summarise groups reports by engine and concurrency, in the order they
// first appear.
func summarise(reports []Report) []EngineSummary {
	type group struct {
		engine string
		c      int
	}
	var order []group
	byGroup := map[group][]Report{}
	for _, r := range reports {
		g := group{r.Engine, r.Concurrency}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], r)
	}
	out := make([]EngineSummary, 0, len(order))
	for _, g := range order {
		rs := byGroup[g]
		s := EngineSummary{Engine: g.engine, Concurrency: g.c, Rounds: len(rs)}
		var tps, base, ratio, p50, p99, cpu, baseCPU, hooks, swTPS, swRatio, busy, busyMs, perCommit []float64
		for _, r := range rs {
			tps, p50, p99 = append(tps, r.Throughput), append(p50, r.Latency.P50), append(p99, r.Latency.P99)
			if c := r.Committer; c != nil {
				busy, busyMs = append(busy, c.Busy), append(busyMs, c.BusyMsPerTransfer)
				perCommit = append(perCommit, c.RequestsPerCommit)
			}
			if r.CPU != nil {
				cpu = append(cpu, r.CPU.MachineMs)
			}
			if r.Acked > 0 {
				hooks = append(hooks, float64(r.WebhooksReceived)/float64(r.Acked))
			}
			s.MaxPending = max(s.MaxPending, r.WebhooksPending)
			if r.Failed() {
				s.FailedRounds++
			}
			for _, c := range r.Compare {
				if strings.HasPrefix(c.Name, "same-work") && c.TPS > 0 {
					s.SameWork = c.Name
					swTPS, swRatio = append(swTPS, c.TPS), append(swRatio, c.Ratio)
				}
			}
			if len(r.Compare) > 0 && !strings.HasPrefix(r.Compare[0].Name, "same-work") {
				c := r.Compare[0]
				if s.Baseline == "" {
					s.Baseline = c.Name
				}
				if c.Name == s.Baseline && c.TPS > 0 {
					base, ratio = append(base, c.TPS), append(ratio, c.Ratio)
					if c.MachineMs > 0 {
						baseCPU = append(baseCPU, c.MachineMs)
					}
				}
			}
		}
		s.Throughput, s.BaselineTPS, s.Ratio = spreadOf(tps), spreadOf(base), spreadOf(ratio)
		s.P50, s.P99, s.CPUMs, s.BaselineCPUMs = spreadOf(p50), spreadOf(p99), spreadOf(cpu), spreadOf(baseCPU)
		s.WebhooksPerXfer = spreadOf(hooks)
		s.SameWorkTPS, s.SameWorkRatio = spreadOf(swTPS), spreadOf(swRatio)
		s.CommitterBusy, s.CommitterBusyMs, s.RequestsPerCommit = spreadOf(busy), spreadOf(busyMs), spreadOf(perCommit)
		out = append(out, s)
	}
	return out
}

func writeSummary(w io.Writer, ss []EngineSummary) {
	for _, s := range ss {
		if s.Concurrency > 0 {
			fmt.Fprintf(w, "engine %s, concurrency %d: %d rounds; median [min–max]\n", s.Engine, s.Concurrency, s.Rounds)
		} else {
			fmt.Fprintf(w, "engine %s: %d rounds; median [min–max]\n", s.Engine, s.Rounds)
		}
		fmt.Fprintf(w, "  transfers/s            %s\n", s.Throughput)
		if s.Baseline != "" {
			fmt.Fprintf(w, "  baseline tps           %s (%s)\n", s.BaselineTPS, s.Baseline)
			fmt.Fprintf(w, "  ours / baseline        %s (each round against its own baseline)\n", s.Ratio)
		}
		if s.SameWork != "" {
			fmt.Fprintf(w, "  same-work tps          %s (%s)\n", s.SameWorkTPS, s.SameWork)
			fmt.Fprintf(w, "  ours / same-work       %s\n", s.SameWorkRatio)
		}
		fmt.Fprintf(w, "  p50 / p99 ms           %s / %s\n", s.P50, s.P99)
		if s.CPUMs.Max > 0 {
			fmt.Fprintf(w, "  CPU ms per transfer    %s", s.CPUMs)
			if s.BaselineCPUMs.Max > 0 {
				fmt.Fprintf(w, " (baseline %s per transaction)", s.BaselineCPUMs)
			}
			fmt.Fprintln(w)
		}
		if s.CommitterBusy.Max > 0 {
			fmt.Fprintf(w, "  group committer        busy %s of the load, %s ms per transfer, %s requests per commit\n",
				s.CommitterBusy, s.CommitterBusyMs, s.RequestsPerCommit)
		}
		fmt.Fprintf(w, "  webhooks per transfer  %s during the load; at most %d pending at a load's end\n",
			s.WebhooksPerXfer, s.MaxPending)
		verdict := "every check PASS in every round"
		if s.FailedRounds > 0 {
			verdict = fmt.Sprintf("%d of %d rounds FAILED a check", s.FailedRounds, s.Rounds)
		}
		fmt.Fprintf(w, "  invariants             %s\n", verdict)
	}
}

// summaryMain is `paymentsbench summary [-json FILE] REPORT.json...`. It
// exits 1 if a round failed a check, as the runs themselves do.
func summaryMain(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("paymentsbench summary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.String("json", "", "also write the summary as JSON to this file")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if fs.NArg() == 0 {
		return 2, errors.New("give the JSON reports of the rounds (paymentsbench -json)")
	}
	reports, err := readReports(fs.Args())
	if err != nil {
		return 2, err
	}
	ss := summarise(reports)
	writeSummary(stdout, ss)
	if *jsonOut != "" {
		b, err := json.MarshalIndent(ss, "", "  ")
		if err != nil {
			return 2, err
		}
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			return 2, err
		}
	}
	for _, s := range ss {
		if s.FailedRounds > 0 {
			return 1, nil
		}
	}
	return 0, nil
}

// readReports reads the JSON reports (paymentsbench -json) at paths.
func readReports(paths []string) ([]Report, error) {
	var reports []Report
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if strings.TrimSpace(r.Engine) == "" {
			return nil, fmt.Errorf("%s: not a paymentsbench report (no engine)", p)
		}
		reports = append(reports, r)
	}
	return reports, nil
}
