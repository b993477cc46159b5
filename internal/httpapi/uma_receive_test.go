package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/uma"
)

const sandboxSender = "$alice@" + uma.SandboxDomain

// POST /sandbox/uma/receive pays a customer over the protocol (signed
// discovery, signed pay request, simulator invoice, HTLC): the customer is
// credited exactly the receiving amount through the ledger, an INCOMING
// COMPLETED transaction from the UMA address reports it with its webhook,
// and the ledger balances. A second HTLC for the paid invoice moves nothing.
func TestUma_SandboxReceive(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, _, b *umaInst) {
		bob := b.umaCustomer(t, "bob", "MXN")
		r := b.do("POST", "/sandbox/uma/receive", cobj{"senderUmaAddress": sandboxSender,
			"receiverUmaAddress": "$bob@" + b.domain, "receivingCurrencyCode": "MXN", "receivingCurrencyAmount": 5000})
		expect(t, r, http.StatusOK, "")
		x := r.JSON(t)
		if x["type"] != "INCOMING" || x["status"] != "COMPLETED" || x["source"].(map[string]any)["sourceType"] != "UMA_ADDRESS" ||
			qtAmount(t, x, "receivedAmount") != 5000 {
			t.Fatalf("%v", x)
		}
		if got := b.qtBalance(t, bob, "MXN"); got != 5000 {
			t.Fatalf("balance %d", got)
		}
		evs := b.acEvents(t, x["id"].(string))
		if len(evs) != 1 || evs[0]["type"] != "INCOMING_PAYMENT.COMPLETED" {
			t.Fatalf("%v", evs)
		}
		if err := ledger.New(b.db).Audit(context.Background(), b.custTenant()); err != nil {
			t.Fatal(err)
		}
		// The HTLC again: the same preimage, nothing moves.
		hash := x["reconciliationInstructions"].(map[string]any)["reference"].(string)
		host := func(r *http.Request) { r.Host = b.domain }
		h := b.do("POST", "//.well-known/lnsim/htlc", cobj{"paymentHash": hash, "amountMsat": 1 << 40}, host)
		expect(t, h, http.StatusOK, "")
		pre, _ := hex.DecodeString(h.JSON(t)["preimage"].(string))
		if sum := sha256.Sum256(pre); hex.EncodeToString(sum[:]) != hash {
			t.Fatal("preimage does not match the payment hash")
		}
		if got := b.qtBalance(t, bob, "MXN"); got != 5000 {
			t.Fatalf("balance after replay %d", got)
		}
		expect(t, b.do("POST", "//.well-known/lnsim/htlc", cobj{"paymentHash": hex.EncodeToString(make([]byte, 32)), "amountMsat": 1}, host),
			http.StatusNotFound, "REFERENCE_NOT_FOUND")
		// By customer id too.
		expect(t, b.do("POST", "/sandbox/uma/receive", cobj{"senderUmaAddress": sandboxSender, "customerId": bob,
			"receivingCurrencyCode": "MXN", "receivingCurrencyAmount": 100}), http.StatusOK, "")
		if got := b.qtBalance(t, bob, "MXN"); got != 5100 {
			t.Fatalf("balance %d", got)
		}
	})
}

// Refusals of the sandbox receive and of the public pay request move no
// money.
func TestUma_SandboxReceiveRefusals(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, _, b *umaInst) {
		bob := b.umaCustomer(t, "bob", "MXN")
		body := func(kv ...any) cobj {
			return cwith(cobj{"senderUmaAddress": sandboxSender, "receiverUmaAddress": "$bob@" + b.domain,
				"receivingCurrencyCode": "MXN", "receivingCurrencyAmount": 5000}, kv...)
		}
		expect(t, b.do("POST", "/sandbox/uma/receive", body("senderUmaAddress", "$alice@elsewhere.example")), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		expect(t, b.do("POST", "/sandbox/uma/receive", body("receiverUmaAddress", "$nobody@"+b.domain)), http.StatusNotFound, "UMA_NOT_FOUND")
		expect(t, b.do("POST", "/sandbox/uma/receive", body("receivingCurrencyCode", "EUR")), http.StatusBadRequest, "INVALID_CURRENCY")
		expect(t, b.do("POST", "/sandbox/uma/receive", body("receivingCurrencyAmount", 0)), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, b.do("POST", "/sandbox/uma/receive", body("receivingCurrencyAmount", 1_000_000_000)), http.StatusBadRequest, "AMOUNT_OUT_OF_RANGE")
		expect(t, b.do("POST", "/sandbox/uma/receive", body(), withCreds(b.production)), http.StatusForbidden, "")
		host := func(r *http.Request) { r.Host = b.domain }
		expect(t, b.do("POST", "//.well-known/lnurlp/bob/payreq", `not json`, host), http.StatusBadRequest, "INVALID_REQUEST_FORMAT")
		expect(t, b.do("POST", "//.well-known/lnurlp/bob/payreq", cobj{"amount": 100, "convert": "MXN"}, host), http.StatusBadRequest, "MISSING_REQUIRED_UMA_PARAMETERS")
		expect(t, b.do("GET", "//.well-known/lnurlp/bob", nil, host), http.StatusBadRequest, "MISSING_REQUIRED_UMA_PARAMETERS")
		expect(t, b.do("GET", "//.well-known/lnurlp/nobody", nil, host), http.StatusNotFound, "UMA_NOT_FOUND")
		if got := b.qtBalance(t, bob, "MXN"); got != 0 {
			t.Fatalf("money moved: %d", got)
		}
	})
}
