package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{3}, Spread{3, 3, 3}},
		{[]float64{5, 1, 3}, Spread{3, 1, 5}},
		{[]float64{4, 1, 2, 3}, Spread{2.5, 1, 4}},
	} {
		in := append([]float64(nil), c.in...)
		if got := spreadOf(c.in); got != c.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("spreadOf reordered its input: %v", c.in)
			}
		}
	}
}

func round(engine string, tps, baseTPS, p99 float64, pass bool) Report {
	r := Report{Engine: engine, Throughput: tps, Acked: int64(tps * 10), Latency: Latency{P50: p99 / 2, P99: p99},
		WebhooksReceived: int64(tps * 40), CPU: &CPUPerTransfer{MachineMs: 2000 / tps},
		Committer: &Committer{Busy: tps / 400, BusyMsPerTransfer: 1000 / tps, RequestsPerCommit: tps / 100},
		Checks:    []CheckResult{{Name: "db: money", Pass: pass}}}
	if baseTPS > 0 {
		r.Compare = []Comparison{{Name: "pgbench tpcb-like", TPS: baseTPS, Ratio: tps / baseTPS, MachineMs: 0.8}}
	}
	return r
}

// The ratio is taken round by round, not as the median over the median.
func TestSummarise_RatioPerRound(t *testing.T) {
	ss := summarise([]Report{
		round("postgres", 200, 2000, 80, true),
		round("sqlite", 300, 3000, 40, true),
		round("postgres", 300, 1500, 60, true),
		round("postgres", 250, 2500, 70, false),
	})
	if len(ss) != 2 || ss[0].Engine != "postgres" || ss[1].Engine != "sqlite" {
		t.Fatalf("engines %+v", ss)
	}
	pg := ss[0]
	if pg.Rounds != 3 || pg.FailedRounds != 1 || pg.Baseline != "pgbench tpcb-like" {
		t.Fatalf("%+v", pg)
	}
	if pg.Throughput != (Spread{250, 200, 300}) || pg.BaselineTPS != (Spread{2000, 1500, 2500}) {
		t.Fatalf("throughput %+v, baseline %+v", pg.Throughput, pg.BaselineTPS)
	}
	if pg.Ratio != (Spread{0.1, 0.1, 0.2}) {
		t.Fatalf("ratio %+v, want median 0.1 over rounds 0.1, 0.2, 0.1", pg.Ratio)
	}
	if pg.P99 != (Spread{70, 60, 80}) || pg.WebhooksPerXfer != (Spread{4, 4, 4}) {
		t.Fatalf("p99 %+v, webhooks %+v", pg.P99, pg.WebhooksPerXfer)
	}
}

// A round without a baseline counts for our figures, not for the ratio.
func TestSummarise_RoundWithoutBaseline(t *testing.T) {
	ss := summarise([]Report{round("sqlite", 300, 3000, 40, true), round("sqlite", 400, 0, 30, true)})
	s := ss[0]
	if s.Rounds != 2 || s.Throughput.Median != 350 || s.Ratio != (Spread{0.1, 0.1, 0.1}) {
		t.Fatalf("%+v", s)
	}
}

func TestSummaryMain(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, r := range []Report{round("postgres", 200, 2000, 80, true), round("postgres", 320, 2000, 60, true)} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "r"+string(rune('0'+i))+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out bytes.Buffer
	code, err := summaryMain(append([]string{"-json", filepath.Join(dir, "s.json")}, paths...), &out, &out)
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v\n%s", code, err, out.String())
	}
	for _, want := range []string{"engine postgres: 2 rounds", "ours / baseline        0.13 [0.10–0.16]", "every check PASS",
		"group committer        busy 0.65 [0.50–0.80] of the load, 4.06 [3.12–5.00] ms per transfer, 2.60 [2.00–3.20] requests per commit"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var back []EngineSummary
	b, err := os.ReadFile(filepath.Join(dir, "s.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 1 || back[0].Rounds != 2 {
		t.Fatalf("JSON summary %s (%v)", b, err)
	}

	// A failed round fails the summary; a file that is not a report is refused.
	failed := round("postgres", 200, 2000, 80, false)
	b, _ = json.Marshal(failed)
	bad := filepath.Join(dir, "failed.json")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _ := summaryMain([]string{bad}, &out, &out); code != 1 {
		t.Fatalf("a failed round gave exit %d, want 1", code)
	}
	notReport := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notReport, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, err := summaryMain([]string{notReport}, &out, &out); code != 2 || err == nil {
		t.Fatalf("not a report: exit %d, err %v", code, err)
	}
	if code, err := summaryMain(nil, &out, &out); code != 2 || err == nil {
		t.Fatalf("no reports: exit %d, err %v", code, err)
	}
}

// The same-work baseline's ratio is summarised beside the classic one, and
// rounds at different concurrencies are kept apart.
func TestSummarise_SameWorkAndConcurrency(t *testing.T) {
	var rs []Report
	for i, c := range []int{8, 64, 8, 64, 8} {
		r := round("postgres", float64(100+i), 1000, 20, true)
		r.Concurrency = c
		r.Compare = append(r.Compare, Comparison{Name: "same-work pgbench (PostgreSQL)", TPS: float64(50 * (i + 1)), Ratio: float64(i + 1)})
		rs = append(rs, r)
	}
	ss := summarise(rs)
	if len(ss) != 2 || ss[0].Concurrency != 8 || ss[1].Concurrency != 64 || ss[0].Rounds != 3 || ss[1].Rounds != 2 {
		t.Fatalf("groups %+v", ss)
	}
	c8 := ss[0]
	if c8.Baseline != "pgbench tpcb-like" || c8.SameWork != "same-work pgbench (PostgreSQL)" {
		t.Fatalf("baselines %q %q", c8.Baseline, c8.SameWork)
	}
	if c8.SameWorkRatio != (Spread{3, 1, 5}) || c8.SameWorkTPS != (Spread{150, 50, 250}) {
		t.Fatalf("same-work %+v %+v", c8.SameWorkRatio, c8.SameWorkTPS)
	}
	var b strings.Builder
	writeSummary(&b, ss)
	for _, want := range []string{"engine postgres, concurrency 64: 2 rounds", "ours / same-work       3.00 [1.00–5.00]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}
