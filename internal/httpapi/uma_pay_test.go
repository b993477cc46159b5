package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
)

// umaLookup looks $user@b up from a's customer and returns the lookupId.
func umaLookup(t *testing.T, a *umaInst, customerID, receiver string) string {
	t.Helper()
	r := a.do("GET", "/receiver/uma/"+receiver+"?customerId="+customerID+"&sendingCurrency=USD", nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)["lookupId"].(string)
}

// umaWait polls a transaction until it leaves PROCESSING.
func umaWait(t *testing.T, e *umaInst, txID string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		x := e.do("GET", "/transactions/"+txID, nil).JSON(t)
		if x["status"] != "PROCESSING" && x["status"] != "PENDING" || time.Now().After(deadline) {
			return x
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func umaQuoteBody(src, receiver, lookupID string, amount int64) cobj {
	return cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
		"destination":        cobj{"destinationType": "UMA_ADDRESS", "umaAddress": receiver, "currency": "MXN"},
		"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "lookupId": lookupID}
}

// A customer of one installation pays a customer of another over UMA: the
// lookup's lookupId quotes (R-RATE-13, R-QUOTE-08), the counterparty's pay
// request prices the receiving side, execution holds the sender's money and
// the payment settles over the Lightning simulator: the receiver is
// credited exactly the quoted amount, the sender debited exactly the quoted
// sending amount, both ledgers balance, both platforms get their webhooks,
// and the outgoing transaction reports the settlement leg's transactionHash
// (R-TXN-17).
func TestUma_PaymentAcrossInstallations(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, a, b *umaInst) {
		alice := a.umaCustomer(t, "alice", "USD")
		bob := b.umaCustomer(t, "bob", "MXN")
		src := a.qtAccountID(t, alice, "USD")
		a.acFund(t, src, 100_000)
		receiver := "$bob@" + b.domain
		// R-QUOTE-08: a UMA destination needs the lookupId.
		noLookup := umaQuoteBody(src, receiver, "", 10_000)
		delete(noLookup, "lookupId")
		expect(t, a.do("POST", "/quotes", noLookup), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, a.do("POST", "/quotes", umaQuoteBody(src, receiver, "Lookup:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", 10_000)), http.StatusNotFound, "LOOKUP_REQUEST_NOT_FOUND")
		lookupID := umaLookup(t, a, alice, receiver)
		// R-RATE-13: the lookup's lookupId is what the quote takes.
		q := a.qtQuote(t, umaQuoteBody(src, receiver, lookupID, 10_000))
		recv := qnum(t, q, "totalReceivingAmount")
		// $100 at 0.058 USD per peso is about 1724.14 pesos.
		if qnum(t, q, "totalSendingAmount") != 10_000 || recv < 170_000 || recv > 174_000 ||
			q["destination"].(map[string]any)["destinationType"] != "UMA_ADDRESS" {
			t.Fatalf("%v", q)
		}
		r := a.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil)
		expect(t, r, http.StatusOK, "")
		x := umaWait(t, a, q["transactionId"].(string))
		if x["status"] != "COMPLETED" {
			t.Fatalf("%v", x)
		}
		hash := x["reconciliationInstructions"].(map[string]any)["transactionHash"]
		if hash == nil || len(hash.(string)) != 64 {
			t.Fatalf("no transactionHash: %v", x)
		}
		if got := a.qtBalance(t, alice, "USD"); got != 90_000 {
			t.Fatalf("sender balance %d", got)
		}
		if got := b.qtBalance(t, bob, "MXN"); got != recv {
			t.Fatalf("receiver balance %d, quoted %d", got, recv)
		}
		for _, in := range []*umaInst{a, b} {
			if err := ledger.New(in.db).Audit(context.Background(), in.custTenant()); err != nil {
				t.Fatal(err)
			}
		}
		if evs := a.acEvents(t, q["transactionId"].(string)); len(evs) == 0 || evs[len(evs)-1]["type"] != "OUTGOING_PAYMENT.COMPLETED" {
			t.Fatalf("sender events %v", evs)
		}
		list := b.do("GET", "/transactions?type=INCOMING", nil).JSON(t)["data"].([]any)
		var incoming map[string]any
		for _, it := range list {
			if m := it.(map[string]any); m["reconciliationInstructions"].(map[string]any)["reference"] == hash {
				incoming = m
			}
		}
		if incoming == nil || qtAmount(t, incoming, "receivedAmount") != recv {
			t.Fatalf("no incoming transaction for %v: %v", hash, list)
		}
		if evs := b.acEvents(t, incoming["id"].(string)); len(evs) != 1 || evs[0]["type"] != "INCOMING_PAYMENT.COMPLETED" {
			t.Fatalf("receiver events %v", evs)
		}
	})
}

// A counterparty that stops between the quote and the payment: the payment
// fails with LNURLP_FAILED once its retries run out and the hold is voided:
// no money moves on either side.
func TestUma_PaymentCounterpartyStops(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, a, b *umaInst) {
		alice := a.umaCustomer(t, "alice", "USD")
		bob := b.umaCustomer(t, "bob", "MXN")
		src := a.qtAccountID(t, alice, "USD")
		a.acFund(t, src, 100_000)
		receiver := "$bob@" + b.domain
		q := a.qtQuote(t, umaQuoteBody(src, receiver, umaLookup(t, a, alice, receiver), 10_000))
		// The receiving node refuses the HTLC (as a node that lost the
		// invoice would): a definitive failure.
		b.tamper(func(r *http.Request) {
			if r.URL.Path == "/.well-known/lnsim/htlc" {
				r.URL.Path = "/.well-known/lnsim/none"
			}
		}, nil)
		expect(t, a.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil), http.StatusOK, "")
		x := umaWait(t, a, q["transactionId"].(string))
		if x["status"] != "FAILED" || x["failureReason"] != "LNURLP_FAILED" {
			t.Fatalf("%v", x)
		}
		if got := a.qtBalance(t, alice, "USD"); got != 100_000 {
			t.Fatalf("sender balance %d", got)
		}
		if got := b.qtBalance(t, bob, "MXN"); got != 0 {
			t.Fatalf("receiver balance %d", got)
		}
		if err := ledger.New(a.db).Audit(context.Background(), a.custTenant()); err != nil {
			t.Fatal(err)
		}
	})
}

// Counterparty failures at quote time have their codes and leave nothing
// behind: an unparsable pay-request answer (400 PARSE_PAYREQ_RESPONSE_ERROR),
// a tampered signature on it (502 INVALID_PAYREQ_RESPONSE), a receiver that
// stopped (504 QUOTE_REQUEST_FAILED, retryable).
func TestUma_QuoteFailures(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, a, b *umaInst) {
		alice := a.umaCustomer(t, "alice", "USD")
		b.umaCustomer(t, "bob", "MXN")
		src := a.qtAccountID(t, alice, "USD")
		a.acFund(t, src, 100_000)
		receiver := "$bob@" + b.domain
		lookupID := umaLookup(t, a, alice, receiver)
		before := a.qtCounts(t)
		payreq := func(path string) bool { return len(path) > 7 && path[len(path)-7:] == "/payreq" }
		b.tamper(nil, func(path string, body []byte) []byte {
			if payreq(path) {
				return []byte(`{"pr": 5}`)
			}
			return body
		})
		expect(t, a.do("POST", "/quotes", umaQuoteBody(src, receiver, lookupID, 10_000)), http.StatusBadRequest, "PARSE_PAYREQ_RESPONSE_ERROR")
		b.tamper(nil, func(path string, body []byte) []byte {
			if !payreq(path) {
				return body
			}
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			c := m["payeeData"].(map[string]any)["compliance"].(map[string]any)
			c["signature"] = flipHex(c["signature"].(string))
			out, _ := json.Marshal(m)
			return out
		})
		expect(t, a.do("POST", "/quotes", umaQuoteBody(src, receiver, lookupID, 10_000)), http.StatusBadGateway, "INVALID_PAYREQ_RESPONSE")
		b.tamper(nil, nil)
		b.srv.Close()
		r := a.do("POST", "/quotes", umaQuoteBody(src, receiver, lookupID, 10_000))
		expect(t, r, http.StatusGatewayTimeout, "QUOTE_REQUEST_FAILED")
		if r.JSON(t)["details"].(map[string]any)["retryable"] != true {
			t.Fatalf("%s", r.Body)
		}
		if after := a.qtCounts(t); after != before {
			t.Fatalf("something was stored: %s → %s", before, after)
		}
		if got := a.qtBalance(t, alice, "USD"); got != 100_000 {
			t.Fatalf("balance %d", got)
		}
	})
}
