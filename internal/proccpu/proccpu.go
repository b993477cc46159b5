// Package proccpu reads a process's CPU time from Linux's /proc: the
// benchmark tool's per-process shares (cmd/paymentsbench) and a PostgreSQL
// backend's CPU in the store's benchmarks.
package proccpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc's CPU times (100 on Linux for
// every architecture Go supports).
const clockTick = 100

// tick is one clock tick of /proc's CPU times.
const tick = time.Second / clockTick

// maxTicks is the most ticks a time.Duration holds.
const maxTicks = int64(1<<63-1) / int64(tick)

// Ticks is n clock ticks of /proc's CPU times as a duration (n at most
// maxTicks).
func Ticks(n int64) time.Duration { return time.Duration(n) * tick }

// Of is a process's user and system time, from /proc/PID/stat; an error
// where there is no such file (no /proc, or no such process here).
func Of(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	_, t, err := Parse(string(b))
	return t, err
}

// Parse reads the command name and utime+stime of a /proc/PID/stat line.
// The name is in parentheses and may hold spaces, so the fields are counted
// from the last ")".
func Parse(line string) (comm string, cpu time.Duration, err error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return "", 0, fmt.Errorf("/proc stat: no command name")
	}
	f := strings.Fields(line[end+1:])
	// After the name: state(3) ppid(4) … utime(14) stime(15).
	if len(f) < 13 {
		return "", 0, fmt.Errorf("/proc stat: %d fields", len(f))
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || u < 0 || s < 0 || u > maxTicks-s {
		return "", 0, fmt.Errorf("/proc stat: bad utime or stime")
	}
	return line[open+1 : end], Ticks(u + s), nil
}
