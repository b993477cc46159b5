package webhooks

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The CPU of one delivery attempt on the sender's side (docs/benchmarks.md,
// "Eighth session"): BenchmarkSend is a whole attempt (configuration, address
// rules, both signatures, the POST to a receiver on loopback that answers 200
// at once); BenchmarkSignedRequest only builds the signed request. A body
// of the size of a transfer's event envelope. SQLite; the settings the sender
// reads are served from the store's cache, as under load.
//
//	go test -run '^$' -bench 'Send|SignedRequest' -benchmem ./internal/webhooks/
func BenchmarkSend(b *testing.B) {
	s, tn, body := benchSender(b)
	b.ReportAllocs()
	for b.Loop() {
		if o := s.send(ctx, tn, "Event:0190f3c2-7a4e-7b4c-9f1e-0d6c3e1a2b3c", body); !o.delivered() {
			b.Fatalf("%+v", o)
		}
	}
}

func BenchmarkSignedRequest(b *testing.B) {
	s, tn, body := benchSender(b)
	u, err := policy{}.checkURL(ctx, "http://127.0.0.1:1/hook")
	if err != nil {
		b.Fatal(err)
	}
	at := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.signedRequest(ctx, tn, u, "Event:0190f3c2-7a4e-7b4c-9f1e-0d6c3e1a2b3c", at, body); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSender(b *testing.B) (*sender, store.Tenant, []byte) {
	db := storetest.OpenSQLite(b)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	b.Cleanup(rc.Close)
	tn := benchTenant(b, db, rc.URL+"/hook")
	s := newSender(db, slog.New(slog.DiscardHandler), 5*time.Second, NewGuard(db, AddressesAny), nil, 4)
	body := []byte(`{"id":"Event:0190f3c2-7a4e-7b4c-9f1e-0d6c3e1a2b3c","type":"OUTGOING_PAYMENT.COMPLETED","timestamp":"2026-11-26T06:00:00.123456Z","data":{` +
		strings.Repeat(`"field":"value of a transaction field",`, 30) + `"end":true}}`)
	return s, tn, body
}
