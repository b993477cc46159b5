package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/signedretry"
)

// Concurrent copies of one signed retry run the operation once: exactly one
// creates the delegated key, the others find the Request-Id burned.
func TestWallets_SignedRetryExactlyOnceUnderConcurrency(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		card := e.cdFixtureCard(t, e.wlOwner(t, c), c.accountID, "ACTIVE") // a card the wallet funds
		body := cobj{"internalAccountId": c.accountID, "nickname": "k", "cardId": card}
		payload, rid := c.first("POST", "/auth/delegated-keys", body)
		raw, _ := json.Marshal(body)
		sig := stamp(t, key, payload)
		const n = 8
		codes := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := httptest.NewRequest("POST", "/"+Version+"/auth/delegated-keys", bytes.NewReader(raw))
				req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(e.sandbox)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(signedretry.HeaderSignature, sig)
				req.Header.Set(signedretry.HeaderRequestID, rid)
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, req)
				codes[i] = rec.Code
			}()
		}
		wg.Wait()
		created := 0
		for _, code := range codes {
			switch code {
			case http.StatusCreated:
				created++
			case http.StatusUnauthorized:
			default:
				t.Fatalf("unexpected status %d among %v", code, codes)
			}
		}
		list := c.do("GET", "/auth/delegated-keys?accountId="+c.accountID, nil).JSON(t)["data"].([]any)
		if created != 1 || len(list) != 1 {
			t.Fatalf("%d created answers, %d keys; want 1 and 1 (%v)", created, len(list), codes)
		}
	})
}
