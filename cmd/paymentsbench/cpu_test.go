package main

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseMachineBusy(t *testing.T) {
	// user nice system idle iowait irq softirq steal: busy is
	// user+nice+system+irq+softirq.
	got, err := parseMachineBusy(strings.NewReader("cpu  100 5 40 9000 70 3 2 11 0 0\ncpu0 50 2 20 4500 35 1 1 5 0 0\n"))
	if err != nil || got != 150*10*time.Millisecond {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := parseMachineBusy(strings.NewReader("intr 1 2 3\n")); err == nil {
		t.Fatal("no cpu line accepted")
	}
	if _, err := parseMachineBusy(strings.NewReader("cpu  1 x 3 4 5 6 7 8\n")); err == nil {
		t.Fatal("a bad field accepted")
	}
}

func TestSplit(t *testing.T) {
	a := cpuSample{Machine: time.Second, Server: 100 * time.Millisecond, Tool: 0, Postgres: 0, HaveSrv: true}
	b := cpuSample{Machine: 21 * time.Second, Server: 8100 * time.Millisecond, Tool: time.Second, Postgres: 10 * time.Second, HaveSrv: true}
	c := split(a, b, 1000, 10*time.Second)
	want := CPUPerTransfer{MachineMs: 20, ServerMs: 8, PostgresMs: 10, ToolMs: 1, OtherMs: 1, BusyCores: 2}
	if math.Abs(c.MachineMs-want.MachineMs) > 1e-9 || math.Abs(c.ServerMs-want.ServerMs) > 1e-9 ||
		math.Abs(c.OtherMs-want.OtherMs) > 1e-9 || math.Abs(c.BusyCores-want.BusyCores) > 1e-9 || c.ToolMs != 1 || c.PostgresMs != 10 {
		t.Fatalf("%+v, want %+v", c, want)
	}
	// Without the server's figure it is not guessed; tick rounding never
	// makes "other" negative.
	b.HaveSrv = false
	b.Machine = a.Machine + 10*time.Second
	if c := split(a, b, 1000, 10*time.Second); c.ServerMs != 0 || c.OtherMs != 0 {
		t.Fatalf("%+v", c)
	}
	// Backends that exited between the samples never make a negative share.
	a.Postgres, b.Postgres = time.Second, 0
	if c := split(a, b, 1000, 10*time.Second); c.PostgresMs != 0 {
		t.Fatalf("%+v", c)
	}
	if c := split(a, b, 0, time.Second); c != (CPUPerTransfer{}) {
		t.Fatalf("no transfers: %+v", c)
	}
	if got := perTx(2*time.Second, 100, 10*time.Second); math.Abs(got-2) > 1e-9 {
		t.Fatalf("perTx %v", got)
	}
	if perTx(0, 100, time.Second) != 0 || perTx(time.Second, 0, time.Second) != 0 {
		t.Fatal("perTx without a measurement")
	}
}

// On Linux a sample reads the machine and this process, and this process's
// time grows with work it does.
func TestTakeCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	a, ok := takeCPU(func() (time.Duration, bool) { return 5 * time.Millisecond, true })
	if !ok || a.Machine <= 0 || !a.HaveSrv || a.Server != 5*time.Millisecond {
		t.Fatalf("%+v %v", a, ok)
	}
	deadline := time.Now().Add(3 * time.Second)
	x := 0
	for {
		for i := 0; i < 1e6; i++ {
			x += i
		}
		b, _ := takeCPU(nil)
		if b.Tool > a.Tool && b.Machine > a.Machine {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU time did not grow: %+v then %+v (%d)", a, b, x)
		}
	}
}
