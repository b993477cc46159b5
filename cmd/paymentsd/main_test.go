package main

import (
	"io"
	"testing"
)

// --rate-limit 0 (or less) disables limiting, as its help says; the zero
// value of httpapi.Options would otherwise mean the default of 100/s.
func TestRateLimitFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want float64
	}{{nil, 100}, {[]string{"--rate-limit", "0"}, -1}, {[]string{"--rate-limit", "-3"}, -1}, {[]string{"--rate-limit", "250"}, 250}} {
		s, err := parseServe(c.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := rateLimitOption(s.rateLimit); got != c.want {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
}

func TestParseServe_Defaults(t *testing.T) {
	t.Setenv("PAYMENTS_ADDR", "")
	t.Setenv("PAYMENTS_DATABASE_URL", "")
	s, err := parseServe(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.addr != "127.0.0.1:8080" || s.databaseURL != "sqlite:./data/payments.db" || s.publicURL != "http://127.0.0.1:8080" {
		t.Fatalf("%+v", s)
	}
	if _, err := parseServe([]string{"extra"}, io.Discard); err == nil {
		t.Fatal("stray arguments must be refused")
	}
}
