package httpapi

import (
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/idempotency"
)

// countsMarshal counts how often it is encoded.
type countsMarshal struct{ n *int }

func (c countsMarshal) MarshalJSON() ([]byte, error) {
	*c.n++
	return []byte(`{"encoded":true}`), nil
}

// A handler under an optimistic claim whose service recorded its response
// answers with the recorded bytes: idempotentInTx sends those in any case,
// so writeJSON does not encode the response again. Anywhere else it encodes.
func TestWriteJSON_RecordedResponseNotEncodedTwice(t *testing.T) {
	recorded := []byte("{\"id\":\"Quote:1\"}\n")
	cases := []struct {
		name    string
		claim   *idempotency.Claim
		encodes int
		body    string
	}{
		{"recorded", &idempotency.Claim{Optimistic: true, Body: recorded}, 0, string(recorded)},
		{"claim, nothing recorded", &idempotency.Claim{Optimistic: true}, 1, "{\"encoded\":true}\n"},
		{"no claim", nil, 1, "{\"encoded\":true}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			rec := &recorder{header: http.Header{}, claim: c.claim}
			writeJSON(rec, http.StatusCreated, countsMarshal{&n})
			if n != c.encodes || string(rec.body) != c.body || rec.status != http.StatusCreated ||
				rec.header.Get("Content-Type") != "application/json" {
				t.Fatalf("encoded %d times, status %d, type %q, body %q", n, rec.status, rec.header.Get("Content-Type"), rec.body)
			}
		})
	}
}
