package main

import (
	"context"
	"io"
	"net/http"
	"time"
)

// The group committer's counters, read from each node's /metrics before and
// after the load: how many commits, how many requests they carried, and how
// busy the committer's workers were. A committer busy near 100% is what
// bounds the transfer rate; its busy time per transfer moves with the cost
// of a batch and is steadier from run to run than the rate itself.

// Committer is the group committer during the load, over every node.
type Committer struct {
	Commits           int64   `json:"commits"`
	RequestsPerCommit float64 `json:"requestsPerCommit"`
	Workers           int     `json:"workers"`
	// Busy is the workers' busy time over workers × the load's wall time.
	Busy float64 `json:"busy"`
	// BusyMsPerTransfer is the workers' busy time per acknowledged transfer
	// (the webhook outcomes the committer also writes included).
	BusyMsPerTransfer float64 `json:"busyMsPerTransfer"`
}

// committerSample is the counters of one scrape, summed over nodes.
type committerSample struct {
	commits, requests, workers int64
	busy                       float64 // seconds
}

var committerSeries = map[string]func(*committerSample, float64){
	"paymentsd_group_commits_total":             func(s *committerSample, v float64) { s.commits += int64(v) },
	"paymentsd_group_commit_requests_total":     func(s *committerSample, v float64) { s.requests += int64(v) },
	"paymentsd_group_commit_busy_seconds_total": func(s *committerSample, v float64) { s.busy += v },
	"paymentsd_group_commit_workers":            func(s *committerSample, v float64) { s.workers += int64(v) },
}

// parseCommitter adds the committer's series of a Prometheus text
// exposition to s and reports whether it found the commits counter.
func parseCommitter(r io.Reader, s *committerSample) (found bool) {
	eachSample(r, func(name string, v float64) {
		if add, known := committerSeries[name]; known {
			add(s, v)
			found = found || name == "paymentsd_group_commits_total"
		}
	})
	return found
}

// readCommitter scrapes every node; ok is false if one did not answer or
// does not expose the committer (an older server).
func readCommitter(ctx context.Context, urls []string) (s committerSample, ok bool) {
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"/metrics", nil)
		if err != nil {
			return s, false
		}
		resp, err := hc.Do(req)
		if err != nil {
			return s, false
		}
		found := resp.StatusCode == http.StatusOK && parseCommitter(resp.Body, &s)
		resp.Body.Close()
		if !found {
			return s, false
		}
	}
	return s, true
}

// committerDuring is what the committer did between two scrapes.
func committerDuring(a, b committerSample, transfers int64, wall time.Duration) Committer {
	c := Committer{Commits: b.commits - a.commits, Workers: int(b.workers)}
	if c.Commits > 0 {
		c.RequestsPerCommit = float64(b.requests-a.requests) / float64(c.Commits)
	}
	busy := b.busy - a.busy
	if b.workers > 0 && wall > 0 {
		c.Busy = busy / (float64(b.workers) * wall.Seconds())
	}
	if transfers > 0 {
		c.BusyMsPerTransfer = busy * 1000 / float64(transfers)
	}
	return c
}
