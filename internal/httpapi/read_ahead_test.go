package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// POST /quotes reads the internal accounts its body names with its
// credential, in the credential's statement (route.readAhead,
// store.TokenByClientIDSeeing), and the quote's own read of them is
// answered from that: a statement less for every quote. Reading the body
// before authenticating changes no answer.
func TestQuotes_AccountsReadAheadWithTheCredential(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 100000)
		body := qtBody(src, dst, "SENDING", 1000, "immediatelyExecute", true)
		idem := withHeader("Idempotency-Key", "read-ahead-1")

		before := e.db.ReadAheadStats()
		if q := e.qtQuote(t, body, idem); q["status"] != "PROCESSING" || e.qtBalance(t, a, "USD") != 99000 {
			t.Fatalf("quote: %v", q)
		}
		if got := e.db.ReadAheadStats(); got.Made != before.Made+1 || got.Used != before.Used+1 {
			t.Fatalf("read-aheads %+v, then %+v; want one made and used", before, got)
		}
		// A replay reads the accounts ahead, and reads no accounts.
		before = e.db.ReadAheadStats()
		replay := e.do("POST", "/quotes", body, idem)
		expect(t, replay, http.StatusOK, "")
		if replay.Header.Get("Idempotent-Replayed") != "true" || e.qtBalance(t, a, "USD") != 99000 {
			t.Fatalf("replay: %s", replay.Body)
		}
		if got := e.db.ReadAheadStats(); got.Made != before.Made+1 || got.Used != before.Used {
			t.Fatalf("replay: read-aheads %+v, then %+v", before, got)
		}

		// An account the tenant does not have is not found, from the read-ahead.
		before = e.db.ReadAheadStats()
		expect(t, e.do("POST", "/quotes", qtBody(id.New(id.InternalAccount), dst, "SENDING", 1000)), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if got := e.db.ReadAheadStats(); got.Used != before.Used+1 {
			t.Fatalf("unknown account: read-aheads %+v, then %+v", before, got)
		}

		// Without credentials the body is read and nothing else: 401, whatever
		// the body. A body that is not JSON names no accounts and is 400 as
		// it always was; so is one over the size limit, without credentials 401.
		before = e.db.ReadAheadStats()
		expect(t, e.do("POST", "/quotes", body, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, e.do("POST", "/quotes", `{"source":`, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, e.do("POST", "/quotes", `{"source":`), http.StatusBadRequest, "INVALID_INPUT")
		big := `{"description":"` + strings.Repeat("x", int(e.srv.opts.MaxBodyBytes)) + `"}`
		expect(t, e.do("POST", "/quotes", big, withCreds("")), http.StatusUnauthorized, "UNAUTHORIZED")
		expect(t, e.do("POST", "/quotes", big), http.StatusRequestEntityTooLarge, "")
		if got := e.db.ReadAheadStats(); got != before {
			t.Fatalf("read-aheads %+v, then %+v; want none", before, got)
		}
	})
}

// A client that waits to be told to send its body (Expect: 100-continue)
// is answered 401 without being asked for it, as before POST /quotes read
// its body ahead: the read-ahead leaves such a request alone. A client that
// sends its body at once gets 401 too.
func TestQuotes_ReadAheadLeavesExpectContinueAlone(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite(t), Options{})
	addr := serveTCP(t, e)
	head := "POST /" + Version + "/quotes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
	res, body := rawExchange(t, addr, head+"Expect: 100-continue\r\n\r\n") // the body is never sent
	checkJSONError(t, res, body, http.StatusUnauthorized, "UNAUTHORIZED")
	res, body = rawExchange(t, addr, head+"Connection: close\r\n\r\n{}")
	checkJSONError(t, res, body, http.StatusUnauthorized, "UNAUTHORIZED")
}
