package main

import (
	"strings"
	"testing"
	"time"
)

// Two nodes' expositions add up; other series, labelled ones and bad
// values are skipped; the figures over the load follow from the difference.
func TestCommitter_ParseAndDuring(t *testing.T) {
	const node = `# HELP paymentsd_group_commits_total Database transactions the group committer committed.
# TYPE paymentsd_group_commits_total counter
paymentsd_group_commits_total 100
paymentsd_group_commit_requests_total 250
paymentsd_group_commit_busy_seconds_total 1.5
paymentsd_group_commit_workers 2
paymentsd_http_requests_total{method="GET",route="x",status="200"} 7
paymentsd_group_commit_retries_total not-a-number
`
	var before committerSample
	if !parseCommitter(strings.NewReader(node), &before) || !parseCommitter(strings.NewReader(node), &before) {
		t.Fatal("commits counter not found")
	}
	if before != (committerSample{commits: 200, requests: 500, workers: 4, busy: 3}) {
		t.Fatalf("two nodes: %+v", before)
	}
	after := committerSample{commits: 600, requests: 1500, workers: 4, busy: 3 + 36}
	c := committerDuring(before, after, 800, 10*time.Second)
	if c.Commits != 400 || c.RequestsPerCommit != 2.5 || c.Workers != 4 || c.Busy != 0.9 || c.BusyMsPerTransfer != 45 {
		t.Fatalf("during: %+v", c)
	}
	var none committerSample
	if parseCommitter(strings.NewReader("process_resident_memory_bytes 1e+08\n"), &none) {
		t.Fatal("an exposition without the committer was taken for one")
	}
}
