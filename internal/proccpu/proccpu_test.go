package proccpu

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	// The command name may hold spaces and parentheses; utime and stime
	// are the 14th and 15th fields.
	line := "4242 (post gres) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 1 0 100 0 0"
	comm, cpu, err := Parse(line)
	if err != nil || comm != "post gres) (x)" || cpu != 325*10*time.Millisecond {
		t.Fatalf("%q %v %v", comm, cpu, err)
	}
	if _, _, err := Parse("4242 (short) S 1 2"); err == nil {
		t.Fatal("a short line accepted")
	}
	if _, _, err := Parse("no name here"); err == nil {
		t.Fatal("a line without a name accepted")
	}
	for _, times := range []string{"u 75", "-1 75", "922337203685477580 1"} { // the last overflows a duration
		if _, _, err := Parse("4242 (x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 " + times + " 0"); err == nil {
			t.Fatalf("utime and stime %q accepted", times)
		}
	}
}

// This process's own entry reads where /proc exists.
func TestOf_ThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	if _, err := Of(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := Of(-1); err == nil {
		t.Fatal("a process that cannot exist was read")
	}
}

// Parse never panics, and what it accepts has its name between the first
// "(" and the last ")" and a CPU time that is whole clock ticks.
func FuzzParse(f *testing.F) {
	f.Add("4242 (post gres) (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 1 0 100 0 0")
	f.Add("1 (a) S")
	f.Add(")(")
	f.Fuzz(func(t *testing.T, line string) {
		comm, cpu, err := Parse(line)
		if err != nil {
			return
		}
		if want := line[strings.IndexByte(line, '(')+1 : strings.LastIndexByte(line, ')')]; comm != want {
			t.Fatalf("name %q, want %q", comm, want)
		}
		if cpu%(time.Second/clockTick) != 0 {
			t.Fatalf("cpu %v is not whole ticks", cpu)
		}
	})
}
