package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/proccpu"
)

// Where the CPU time of a run goes, per acknowledged transfer. With the
// client, the server and the database on one machine, throughput is what
// the cores can do; CPU per transfer says which process spends them, and
// varies less between runs than transfers per second (docs/benchmarks.md).
// Linux only: without /proc the report leaves it out.

// cpuSample is the CPU time used so far, by the machine and by the processes
// of interest.
type cpuSample struct {
	Machine  time.Duration // busy time of all CPUs (not idle, iowait or steal)
	Server   time.Duration // paymentsd, every incarnation (spawned only)
	Tool     time.Duration // this process
	Postgres time.Duration // processes named postgres (a local server)
	HaveSrv  bool
}

// CPUPerTransfer is the report's split, in milliseconds per acknowledged
// transfer, and the cores the machine kept busy on average.
type CPUPerTransfer struct {
	MachineMs  float64 `json:"machineMs"`
	ServerMs   float64 `json:"serverMs,omitempty"`
	PostgresMs float64 `json:"postgresMs,omitempty"`
	ToolMs     float64 `json:"toolMs"`
	OtherMs    float64 `json:"otherMs"`
	BusyCores  float64 `json:"busyCores"`
	Note       string  `json:"note,omitempty"`
}

// takeCPU reads a sample; ok is false where /proc is missing. server is the
// spawned server's CPU time so far, or nil.
func takeCPU(server func() (time.Duration, bool)) (s cpuSample, ok bool) {
	var err error
	if s.Machine, err = machineBusy(); err != nil {
		return s, false
	}
	if s.Tool, err = proccpu.Of(os.Getpid()); err != nil {
		return s, false
	}
	if server != nil {
		s.Server, s.HaveSrv = server()
	}
	s.Postgres = postgresCPU()
	return s, true
}

// split turns two samples into per-transfer figures.
func split(a, b cpuSample, transfers int64, wall time.Duration) CPUPerTransfer {
	if transfers <= 0 {
		return CPUPerTransfer{}
	}
	per := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(transfers) }
	c := CPUPerTransfer{
		MachineMs: per(b.Machine - a.Machine), PostgresMs: max(0, per(b.Postgres-a.Postgres)), ToolMs: per(b.Tool - a.Tool),
	}
	if a.HaveSrv && b.HaveSrv {
		c.ServerMs = per(b.Server - a.Server)
	}
	c.OtherMs = max(0, c.MachineMs-c.ServerMs-c.PostgresMs-c.ToolMs)
	if wall > 0 {
		c.BusyCores = float64(b.Machine-a.Machine) / float64(wall)
	}
	return c
}

// machineBusy is the busy time of all CPUs so far, from /proc/stat.
func machineBusy() (time.Duration, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseMachineBusy(f)
}

// parseMachineBusy sums the busy fields of /proc/stat's first "cpu" line:
// user, nice, system, irq and softirq (guest time is inside user).
func parseMachineBusy(r io.Reader) (time.Duration, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[0] != "cpu" {
			continue
		}
		var busy int64
		for _, i := range []int{1, 2, 3, 6, 7} {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/stat: %w", err)
			}
			busy += v
		}
		return proccpu.Ticks(busy), nil
	}
	return 0, fmt.Errorf("/proc/stat: no cpu line")
}

// postgresCPU sums the CPU time of the live processes named postgres. A
// backend that exits between two samples takes its time with it: a run keeps
// its connections, but in crash mode every killed server's backends exit, so
// the report leaves PostgreSQL's share out there.
func postgresCPU() time.Duration {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		if comm, t, err := proccpu.Parse(string(b)); err == nil && comm == "postgres" {
			total += t
		}
	}
	return total
}
