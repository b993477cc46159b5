package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is a registry of its own per server, so tests never share counters.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// newMetrics registers the server's series; commits reads the store's
// group-commit counters at each scrape.
func newMetrics(commits func() store.BatchStats) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paymentsd_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "paymentsd_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and method.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	m.reg.MustRegister(m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.reg.MustRegister(groupCommitCollectors(commits)...)
	return m
}

// groupCommitCollectors expose the store's group committer (InBatchTx):
// how many commits, how many requests they carried, and how busy its
// workers were. busy_seconds over workers, per second of wall time, is the
// committer's saturation: near 1, writes queue for it.
func groupCommitCollectors(commits func() store.BatchStats) []prometheus.Collector {
	counter := func(name, help string, v func(store.BatchStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return v(commits()) })
	}
	return []prometheus.Collector{
		counter("paymentsd_group_commits_total", "Database transactions the group committer committed.",
			func(s store.BatchStats) float64 { return float64(s.Commits) }),
		counter("paymentsd_group_commit_requests_total", "Requests (write transactions) those commits carried.",
			func(s store.BatchStats) float64 { return float64(s.Transactions) }),
		counter("paymentsd_group_commit_failures_total", "Group commits that failed; their requests ran again.",
			func(s store.BatchStats) float64 { return float64(s.Failures) }),
		counter("paymentsd_group_commit_retries_total", "Requests the group committer ran again.",
			func(s store.BatchStats) float64 { return float64(s.Retries) }),
		counter("paymentsd_group_commit_busy_seconds_total", "Time the group committer's workers spent running batches, summed over the workers.",
			func(s store.BatchStats) float64 { return s.Busy.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "paymentsd_group_commit_workers",
			Help: "Group-commit workers (batches that run at once)."},
			func() float64 { return float64(commits().Workers) }),
	}
}

// observe counts one request. Every label value comes from a bounded set,
// whatever the client sends: route is a registered pattern or "unmatched"
// (Server.observe), method one of knownMethods or "OTHER", status a code the
// server wrote.
func (m *metrics) observe(route, method string, status int, d time.Duration) {
	method = methodLabel(method)
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
}

var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true,
}

// methodLabel is method if it is a standard one, else "OTHER": invented
// methods, which need no credentials, must not add series.
func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return "OTHER"
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
