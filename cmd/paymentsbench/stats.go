package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest value such that at least p% of the
// values are at or below it. It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if p <= 0 {
		return sorted[0]
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	if rank < 1 {
		rank = 1
	}
	if rank > n {
		rank = n
	}
	return sorted[rank-1]
}

// Latency summarises a set of durations in milliseconds.
type Latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Ms"`
	P95   float64 `json:"p95Ms"`
	P99   float64 `json:"p99Ms"`
	Max   float64 `json:"maxMs"`
	Mean  float64 `json:"meanMs"`
}

// Summarise sorts ds in place and summarises it.
func Summarise(ds []time.Duration) Latency {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	l := Latency{Count: len(ds)}
	if len(ds) == 0 {
		return l
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	ms := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
	l.P50, l.P95, l.P99 = ms(Percentile(ds, 50)), ms(Percentile(ds, 95)), ms(Percentile(ds, 99))
	l.Max, l.Mean = ms(ds[len(ds)-1]), ms(sum/time.Duration(len(ds)))
	return l
}

// CheckResult is the outcome of one invariant.
type CheckResult struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

// Comparison is a baseline measured in the same run.
type Comparison struct {
	Name  string  `json:"name"`
	TPS   float64 `json:"tps"`
	Ratio float64 `json:"oursOverTheirs"`
	Note  string  `json:"note,omitempty"`
	// MachineMs is the machine's CPU time per baseline transaction (Linux).
	MachineMs float64 `json:"machineCpuMsPerTransaction,omitempty"`
}

// Report is everything a run measured.
type Report struct {
	Engine      string  `json:"engine"`
	Database    string  `json:"database"`
	Concurrency int     `json:"concurrency"`
	Duration    float64 `json:"durationSeconds"`
	Customers   int     `json:"customers"`
	Attempted   int64   `json:"attempted"`
	Acked       int64   `json:"acknowledged"`
	// CrossCurrency counts the acknowledged USD → EUR transfers (-fx).
	CrossCurrency int64 `json:"crossCurrency,omitempty"`
	// Payouts counts the acknowledged payouts to external accounts
	// (-payout), PayoutsFailing those the sandbox fails or returns (magic
	// amounts) and refunds.
	Payouts        int64          `json:"payouts,omitempty"`
	PayoutsFailing int64          `json:"payoutsFailing,omitempty"`
	Retries        int64          `json:"retries"`
	Unresolved     int64          `json:"unresolved"`
	Throughput     float64        `json:"transfersPerSecond"`
	Latency        Latency        `json:"latency"`
	Errors         map[string]int `json:"errorsByCode"`
	PeakRSS        int64          `json:"serverPeakRssBytes"`
	PeakRSSFrom    string         `json:"serverPeakRssSource,omitempty"`
	Kills          int            `json:"kills"`
	KillsPerNode   []int          `json:"killsPerNode,omitempty"`
	Nodes          int            `json:"nodes,omitempty"`
	Checks         []CheckResult  `json:"checks,omitempty"`
	Compare        []Comparison   `json:"compare,omitempty"`
	Timeline       []float64      `json:"throughputEvery5s,omitempty"`
	// Webhooks: the deliveries the tool's receiver got during the load,
	// and those still pending in the database when it ended (-1: no -db).
	// The server's transfer rate is sustainable only if deliveries keep up.
	WebhooksReceived int64 `json:"webhooksReceivedDuringLoad"`
	WebhooksPending  int64 `json:"webhooksPendingAtLoadEnd"`
	// CPU is the machine's CPU time per acknowledged transfer during the
	// load, and which processes used it (Linux).
	CPU *CPUPerTransfer `json:"cpuPerTransfer,omitempty"`
	// Committer is the group committer's work during the load (not in
	// crash mode, whose restarts reset its counters).
	Committer *Committer `json:"committer,omitempty"`
	// PGPerTransfer is pg_stat_database's growth per acknowledged transfer.
	PGPerTransfer map[string]float64 `json:"postgresPerTransfer,omitempty"`
	Reads         *readLatency       `json:"reads,omitempty"`
	// Deletes is what -delete-every did.
	Deletes *DeleteSummary `json:"deletes,omitempty"`
	Extra   map[string]any `json:"extra,omitempty"`
}

// DeleteSummary is what deleting customers during the load did: customers
// deleted, deletes refused while money was there, drain transfers, and the
// platform's USD suspense balance after the run (what arrived for deleted
// customers after they went).
type DeleteSummary struct {
	Deleted     int   `json:"customersDeleted"`
	Refused     int   `json:"deletesRefused"`
	Drains      int   `json:"drainTransfers"`
	SuspenseUSD int64 `json:"suspenseUsdAfterRun"`
}

// Failed reports whether an invariant failed.
func (r *Report) Failed() bool {
	for _, c := range r.Checks {
		if !c.Pass {
			return true
		}
	}
	return false
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "engine %s, concurrency %d, %.1fs, %d customers\n", r.Engine, r.Concurrency, r.Duration, r.Customers)
	fmt.Fprintf(w, "transfers: %d attempted, %d acknowledged, %d retries, %d unresolved\n", r.Attempted, r.Acked, r.Retries, r.Unresolved)
	if r.CrossCurrency > 0 {
		fmt.Fprintf(w, "cross-currency (USD to EUR): %d of the acknowledged\n", r.CrossCurrency)
	}
	if r.Payouts > 0 {
		fmt.Fprintf(w, "payouts (USD to external bank accounts): %d of the acknowledged, %d of them failed or returned by magic amounts\n", r.Payouts, r.PayoutsFailing)
	}
	if cs, ok := r.Extra["cards"].(cardSummary); ok {
		fmt.Fprintf(w, "cards: %d cards, %d card transactions (%d declined: %v)\n", cs.Cards, cs.Transactions, cs.declined(), cs.Declined)
		fmt.Fprintf(w, "card messages and changes: %v\n", cs.Messages)
		fmt.Fprintf(w, "cards: %d retries, %d unresolved, %d outcomes not as modelled, %d open authorizations cleared after the load; %d cents of purchases settled, %d of merchant credits, %d returned\n",
			cs.Retries, cs.Unresolved, cs.Mismatches, cs.Drained, cs.Settled, cs.Credited, cs.Returned)
		if len(cs.Refused) > 0 {
			fmt.Fprintf(w, "card messages refused: %v\n", cs.Refused)
		}
	}
	fmt.Fprintf(w, "throughput: %.1f acknowledged transfers/s\n", r.Throughput)
	fmt.Fprintf(w, "latency ms: p50 %.2f  p95 %.2f  p99 %.2f  max %.2f  mean %.2f (n=%d)\n",
		r.Latency.P50, r.Latency.P95, r.Latency.P99, r.Latency.Max, r.Latency.Mean, r.Latency.Count)
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "errors: none")
	} else {
		codes := make([]string, 0, len(r.Errors))
		for c := range r.Errors {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		parts := make([]string, 0, len(codes))
		for _, c := range codes {
			parts = append(parts, fmt.Sprintf("%s=%d", c, r.Errors[c]))
		}
		fmt.Fprintf(w, "errors: %s\n", strings.Join(parts, " "))
	}
	if len(r.Timeline) > 0 {
		parts := make([]string, len(r.Timeline))
		for i, v := range r.Timeline {
			parts[i] = fmt.Sprintf("%.0f", v)
		}
		fmt.Fprintf(w, "throughput every 5 s: %s\n", strings.Join(parts, " "))
	}
	if r.Acked > 0 {
		pending := "not read (no -db)"
		if r.WebhooksPending >= 0 {
			pending = fmt.Sprintf("%d pending in the database", r.WebhooksPending)
		}
		fmt.Fprintf(w, "webhooks: %d received during the load (%.2f per acknowledged transfer); at its end %s\n",
			r.WebhooksReceived, float64(r.WebhooksReceived)/float64(r.Acked), pending)
	}
	if c := r.Committer; c != nil {
		fmt.Fprintf(w, "group committer: %d commits, %.2f requests per commit; %d worker(s), busy %.0f%% of the load (%.2f ms per transfer)\n",
			c.Commits, c.RequestsPerCommit, c.Workers, c.Busy*100, c.BusyMsPerTransfer)
	}
	if c := r.CPU; c != nil {
		fmt.Fprintf(w, "cpu per transfer: %.2f ms on the machine (%.2f of its cores busy): server %.2f, postgres %.2f, this tool %.2f, other %.2f",
			c.MachineMs, c.BusyCores, c.ServerMs, c.PostgresMs, c.ToolMs, c.OtherMs)
		if c.Note != "" {
			fmt.Fprintf(w, " (%s)", c.Note)
		}
		fmt.Fprintln(w)
	}
	if len(r.PGPerTransfer) > 0 {
		keys := make([]string, 0, len(r.PGPerTransfer))
		for k := range r.PGPerTransfer {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%.2f", k, r.PGPerTransfer[k])
		}
		fmt.Fprintf(w, "postgres per transfer (whole server): %s\n", strings.Join(parts, " "))
	}
	if r.Reads != nil {
		fmt.Fprintf(w, "reads at %d transactions: GET /transactions page p50 %.2f p99 %.2f ms; balance-changes page p50 %.2f p99 %.2f ms\n",
			r.Reads.Transactions, r.Reads.ListPage.P50, r.Reads.ListPage.P99, r.Reads.BalanceChanges.P50, r.Reads.BalanceChanges.P99)
	}
	if r.PeakRSS > 0 {
		fmt.Fprintf(w, "server peak RSS: %.1f MiB (%s)\n", float64(r.PeakRSS)/(1<<20), r.PeakRSSFrom)
	}
	if r.Nodes > 1 {
		fmt.Fprintf(w, "nodes: %d paymentsd processes on one database, load worker w on node w mod %d\n", r.Nodes, r.Nodes)
	}
	if r.Kills > 0 {
		fmt.Fprintf(w, "crash mode: %d SIGKILLs\n", r.Kills)
		if len(r.KillsPerNode) > 0 {
			fmt.Fprintf(w, "kills per node: %v\n", r.KillsPerNode)
		}
	}
	if d := r.Deletes; d != nil {
		fmt.Fprintf(w, "deletes: %d customers deleted during the load (%d deletes refused while money was there, %d drain transfers and late payouts); USD suspense after the run %d\n",
			d.Deleted, d.Refused, d.Drains, d.SuspenseUSD)
	}
	for _, c := range r.Compare {
		fmt.Fprintf(w, "compare %s: %.1f tps; ours/theirs = %.2f", c.Name, c.TPS, c.Ratio)
		if c.MachineMs > 0 {
			fmt.Fprintf(w, "; %.2f ms of machine CPU per transaction", c.MachineMs)
		}
		if c.Note != "" {
			fmt.Fprintf(w, " (%s)", c.Note)
		}
		fmt.Fprintln(w)
	}
	for _, c := range r.Checks {
		status := "PASS"
		if !c.Pass {
			status = "FAIL"
		}
		fmt.Fprintf(w, "%s %s", status, c.Name)
		if c.Detail != "" {
			fmt.Fprintf(w, ": %s", c.Detail)
		}
		fmt.Fprintln(w)
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
