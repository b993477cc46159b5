package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Routes that record in their effect's transaction take optimistic claims:
// the same guarantees as claimed keys (R-IDEM-02, R-IDEM-12) without a
// claim row written first.

func TestIdempotencyInTx_Replay_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		first := e.do("POST", "/effects-intx", `{"name":"a"}`, key("k-1"))
		expect(t, first, http.StatusCreated, "")
		second := e.do("POST", "/effects-intx", `{"name":"a"}`, key("k-1"))
		expect(t, second, http.StatusCreated, "")
		if string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay differs: %s vs %s", first.Body, second.Body)
		}
		if n := e.countEffects(t, "a"); n != 1 {
			t.Fatalf("%d effects, want 1", n)
		}
		expect(t, e.do("POST", "/effects-intx", `{"name":"other"}`, key("k-1")), http.StatusConflict, "CONFLICT")
	})
}

func TestIdempotencyInTx_ErrorsReplayedOrRerun_R_IDEM_12(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		first := e.do("POST", "/effects-intx", `{"name":"x","fail":"400"}`, key("k400"))
		expect(t, first, http.StatusBadRequest, "INVALID_INPUT")
		fixed := e.do("POST", "/effects-intx", `{"name":"x"}`, key("k400"))
		expect(t, fixed, http.StatusBadRequest, "INVALID_INPUT")
		if e.countEffects(t, "x") != 0 {
			t.Fatal("a spent key ran a corrected request")
		}
		expect(t, e.do("POST", "/effects-intx", `{"name":"y","fail":"500"}`, key("k500")), http.StatusInternalServerError, "INTERNAL_ERROR")
		expect(t, e.do("POST", "/effects-intx", `{"name":"y"}`, key("k500")), http.StatusCreated, "")
		if e.countEffects(t, "y") != 1 {
			t.Fatal("a 500 must leave the key free for a retry")
		}
	})
}

// Of concurrent duplicates exactly one effect commits; the others' effects
// roll back and they replay its response.
func TestIdempotencyInTx_ConcurrentDuplicates(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		sameAnswers(t, 20, func() resp {
			return e.do("POST", "/effects-intx", `{"name":"conc","sleep":5000000}`, key("same"))
		})
		if n := e.countEffects(t, "conc"); n != 1 {
			t.Fatalf("%d effects from 20 concurrent duplicates", n)
		}
	})
}

// A process that dies mid-request leaves nothing locked: there is no claim
// row until the effect commits, so a retry runs at once (the claimed path
// waits out IdempotencyLock). A 5xx leaves no row either.
func TestIdempotencyInTx_NothingLockedWithoutEffect(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		expect(t, e.do("POST", "/effects-intx", `{"name":"z","fail":"500"}`, key("k-crash")), http.StatusInternalServerError, "INTERNAL_ERROR")
		tn := store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}
		if _, err := e.db.Read().GetIdempotencyKey(context.Background(), tn, "k-crash"); err != store.ErrNotFound {
			t.Fatalf("key row after a failed request: %v", err)
		}
	})
}

// POST /quotes takes optimistic claims: twenty concurrent copies of one
// immediately executed transfer under one key move the money once, and every
// caller sees the same quote (R-IDEM-02, R-QUOTE-01).
func TestIdempotencyInTx_Quotes_ConcurrentDuplicatesMoveMoneyOnce(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 100000)
		body := qtBody(src, dst, "SENDING", 1234, "immediatelyExecute", true)
		if got := sameAnswers(t, 20, func() resp { return e.do("POST", "/quotes", body, key("pay-once")) }); !strings.HasPrefix(got, "200 ") {
			t.Fatalf("every copy answered %s", got)
		}
		if got := e.qtBalance(t, a, "USD"); got != 100000-1234 {
			t.Fatalf("sender balance %d, want %d", got, 100000-1234)
		}
		if got := e.qtBalance(t, b, "USD"); got != 1234 {
			t.Fatalf("receiver balance %d, want 1234", got)
		}
		n, err := e.db.Read().CountQuotes(context.Background(), e.acTenant())
		if err != nil || n != 1 {
			t.Fatalf("%d quotes (%v), want 1", n, err)
		}
	})
}

// sameAnswers sends n copies of one request at once and fails unless every
// caller got the same status and body; it returns that answer.
func sameAnswers(t *testing.T, n int, send func() resp) string {
	t.Helper()
	var wg sync.WaitGroup
	answers := make([]string, n)
	for i := range answers {
		wg.Go(func() {
			r := send()
			answers[i] = fmt.Sprint(r.Status, " ", string(r.Body))
		})
	}
	wg.Wait()
	for _, a := range answers {
		if a != answers[0] {
			t.Fatalf("different responses:\n%s\n%s", a, answers[0])
		}
	}
	return answers[0]
}
