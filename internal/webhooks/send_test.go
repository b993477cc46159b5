package webhooks

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes; the limit cuts a character in two
	got := excerpt([]byte(long))
	if len(got) > ExcerptLimit || !utf8.ValidString(got) || len(got) < ExcerptLimit-1 {
		t.Fatalf("excerpt of %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if excerpt([]byte("ok\xff")) != "ok" || excerpt(nil) != "" {
		t.Fatal("invalid bytes are dropped")
	}
}

func TestRedactURL(t *testing.T) {
	if got := redactURL("https://user:pw@hooks.example.com/x?sig=1"); got != "https://hooks.example.com/x?sig=1" {
		t.Fatal(got)
	}
	if got := hostOf("https://user:pw@hooks.example.com:8443/x?token=t"); got != "hooks.example.com:8443" {
		t.Fatal(got)
	}
}

// A receiver slower than the request timeout costs one failed attempt, no
// more: the worker gives up at the timeout, records why and retries later.
// A long answer is kept as a 1 KiB excerpt.
func TestDelivery_TimeoutAndLongAnswers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		newClock(db)
		release := make(chan struct{})
		defer close(release)
		slow := newReceiver(t, func(http.ResponseWriter, *http.Request) int { <-release; return http.StatusOK })
		chatty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(strings.Repeat("x", 5000)))
		}))
		defer chatty.Close()
		a := newTenant(t, db, store.EnvSandbox, slow.URL("/slow"))
		b := newTenant(t, db, store.EnvSandbox, chatty.URL+"/chatty")
		evA, evB := emit(t, db, a, "TEST"), emit(t, db, b, "TEST")
		opts := testOptions()
		// Long enough that the fast receiver always answers in time on a
		// loaded machine under -race; the slow one never answers.
		opts.RequestTimeout = 2 * time.Second
		began := time.Now()
		start(t, NewRunner(db, nil, opts))
		drive(t, nil, 0, func() bool {
			return len(attempts(t, db, a, evA.ID)) == 1 && len(attempts(t, db, b, evB.ID)) == 1
		})
		if took := time.Since(began); took > 10*time.Second {
			t.Fatalf("a %v timeout took %v", opts.RequestTimeout, took)
		}
		at := attempts(t, db, a, evA.ID)[0]
		if at.StatusCode != 0 || at.Error != "no response before the timeout" {
			t.Fatalf("timeout attempt %+v", at)
		}
		if d := delivery(t, db, a, evA.ID); d.State != store.DeliveryPending || d.LeaseUntil != nil {
			t.Fatalf("a timed-out delivery is retried later: %+v", d)
		}
		bt := attempts(t, db, b, evB.ID)[0]
		if bt.StatusCode != 400 || len(bt.ResponseExcerpt) != ExcerptLimit {
			t.Fatalf("long answer: status %d, excerpt %d bytes", bt.StatusCode, len(bt.ResponseExcerpt))
		}
	})
}
