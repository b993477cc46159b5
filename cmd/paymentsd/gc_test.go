package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// paymentsd applies its collector defaults only where the operator left GOGC
// or GOMEMLIMIT unset.
func TestEnvSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		set  bool
	}{
		{"unset", map[string]string{}, false},
		{"empty", map[string]string{"GOGC": "", "GOMEMLIMIT": ""}, false},
		{"operator's value", map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}, true},
		{"operator's off", map[string]string{"GOGC": "off", "GOMEMLIMIT": "off"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
				if got := envSet(lookup, name); got != tc.set {
					t.Fatalf("envSet(%s) = %v, want %v", name, got, tc.set)
				}
			}
		})
	}
}

// tuneGC sets each engine's defaults where the operator set nothing and
// leaves the operator's settings alone.
func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(beforeLimit) })
	for _, tc := range []struct {
		engine       store.Engine
		gogc, limit  string
		wantPercent  int
		wantLimitMiB int64 // 0: no limit (math.MaxInt64)
	}{
		{store.Postgres, "", "", 800, 192},
		{store.SQLite, "", "", 400, 0},
		{store.Postgres, "150", "1GiB", 100, 1024}, // the runtime's reading of them stands
		{store.SQLite, "150", "", 100, 0},
	} {
		t.Run(string(tc.engine)+"/GOGC="+tc.gogc+"/GOMEMLIMIT="+tc.limit, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.limit)
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			if tc.limit != "" {
				debug.SetMemoryLimit(tc.wantLimitMiB << 20) // as the runtime read it at start
			}
			tuneGC(tc.engine)
			if got := debug.SetGCPercent(-1); got != tc.wantPercent {
				t.Errorf("GC percent = %d, want %d", got, tc.wantPercent)
			}
			want := int64(math.MaxInt64)
			if tc.wantLimitMiB > 0 {
				want = tc.wantLimitMiB << 20
			}
			if got := debug.SetMemoryLimit(-1); got != want {
				t.Errorf("memory limit = %d, want %d", got, want)
			}
		})
	}
}
