package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/rails"
)

// txGet reads a transaction and decodes it keeping numbers exact.
func (e *env) txGet(t *testing.T, txID string) (map[string]any, resp) {
	t.Helper()
	r := e.qdo("GET", "/transactions/"+txID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t), r
}

// txPayoutSetup funds a USD account and returns it, its owner and a
// validated US bank account of theirs.
func (e *env) txPayoutSetup(t *testing.T) (src, owner, ext string) {
	t.Helper()
	owner, _ = e.qtSetup(t)
	src = e.qtAccountID(t, owner, "USD")
	expect(t, e.qdo("POST", "/sandbox/internal-accounts/"+src+"/fund", cobj{"amount": 10_000_000}), http.StatusOK, "")
	ext = e.eaCreate(t, eaCustomers, eaUSD(owner, "123456789"))["id"].(string)
	return src, owner, ext
}

// txPay executes a payout at once over rail.
func (e *env) txPay(t *testing.T, src, ext, rail string, amount int64, kv ...any) map[string]any {
	t.Helper()
	return e.qtQuote(t, cwith(cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
		"destination":        cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": rail},
		"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "immediatelyExecute": true}, kv...))
}

// intsOnly fails unless every named amount in body is a JSON integer
// (no fraction, no exponent, not a string).
func intsOnly(t *testing.T, body []byte, paths ...string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		var v any = m
		for _, k := range strings.Split(p, ".") {
			v = v.(map[string]any)[k]
		}
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			t.Fatalf("%s is %T %v, not an integer", p, v, v)
		}
		if _, err := n.Int64(); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}

// utcTimes fails unless each named field is an RFC 3339 date-time in UTC.
func utcTimes(t *testing.T, m map[string]any, fields ...string) {
	t.Helper()
	for _, f := range fields {
		s, ok := m[f].(string)
		if !ok {
			t.Fatalf("%s is %v", f, m[f])
		}
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !(strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "+00:00")) || at.Location() != time.UTC {
			t.Fatalf("%s = %q is not an ISO 8601 UTC date-time", f, s)
		}
	}
}

// Payouts over each US rail carry the remittance text and descriptor where
// the rail puts them, and each railDetails variant has its fields.
// R-QUOTE-14: remittanceInformation travels as ACH addenda, RTP/FedNow
// remittanceInformation and wire originatorToBeneficiaryInformation.
// R-QUOTE-17: ACH railDetails.statementDescriptor is the quote's descriptor.
// R-TXN-22: WIRE carries imad and originatorToBeneficiaryInformation, FEDNOW
// and RTP endToEndId and remittanceInformation, status PENDING, SETTLED or
// FAILED.
func TestPayouts_RailDetails_R_QUOTE_14_R_QUOTE_17_R_TXN_22(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		src, _, ext := e.txPayoutSetup(t)
		const text = "Invoice 2025-114"
		field := map[string]string{"ACH": "addenda", "WIRE": "originatorToBeneficiaryInformation",
			"RTP": "remittanceInformation", "FEDNOW": "remittanceInformation"}
		ids := map[string]string{"WIRE": "imad", "RTP": "endToEndId", "FEDNOW": "endToEndId", "ACH": "traceNumber"}
		for _, rail := range []string{"ACH", "WIRE", "RTP", "FEDNOW"} {
			kv := []any{"remittanceInformation", text}
			if rail == "ACH" {
				kv = append(kv, "statementDescriptor", "PAYROLL")
			}
			q := e.txPay(t, src, ext, rail, 10_000, kv...)
			e.railsDrain(t)
			x, _ := e.txGet(t, q["transactionId"].(string))
			d := railDetailsOf(t, x, "destination")
			if d["paymentRail"] != rail || d[field[rail]] != text {
				t.Fatalf("%s: railDetails %v do not carry the remittance in %s", rail, d, field[rail])
			}
			if s, _ := d[ids[rail]].(string); s == "" {
				t.Fatalf("%s: no %s in %v", rail, ids[rail], d)
			}
			if rail != "ACH" && !slices.Contains([]string{"PENDING", "SETTLED", "FAILED"}, d["status"].(string)) {
				t.Fatalf("%s: status %v", rail, d["status"])
			}
			if rail == "ACH" && d["statementDescriptor"] != "PAYROLL" {
				t.Fatalf("ACH statementDescriptor %v", d["statementDescriptor"])
			}
		}
	})
}

// An outgoing transaction as GET /transactions/{id} returns it.
// R-TXN-07: the payment transaction fields (id, status, type, direction,
// source, destination, customerId, platformCustomerId, settledAt, createdAt,
// updatedAt, description, sentAmount, receivedAmount, exchangeRate,
// quoteId, counterpartyInformation).
// R-TXN-08: OUTGOING always has type, sentAmount and source, and carries
// receivedAmount, reconciliationInstructions, paymentInstructions (array)
// and rateDetails.
// R-TXN-09: fees is an integer >= 0, the quote's feesIncluded.
// R-TXN-25: source and destination carry their type, accountId and currency.
// R-TXN-39: counterpartyInformation maps payer-data names to strings, as
// sent with the quote.
// R-TXN-41: status is a string.
// R-CONV-04: every amount is an integer in the smallest unit.
// R-CONV-07: timestamps are ISO 8601 in UTC.
func TestTransactions_OutgoingFields_R_TXN_07_R_TXN_08_R_TXN_09(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		src, owner, ext := e.txPayoutSetup(t)
		payer := cobj{"FULL_NAME": "Jane Doe", "BIRTH_DATE": "1990-01-15", "NATIONALITY": "US"}
		q := e.txPay(t, src, ext, "WIRE", 250_000, "description", "rent", "senderCustomerInfo", payer)
		e.railsDrain(t)
		x, r := e.txGet(t, q["transactionId"].(string))
		for _, f := range []string{"id", "status", "type", "direction", "source", "destination", "customerId", "platformCustomerId",
			"settledAt", "createdAt", "updatedAt", "description", "sentAmount", "receivedAmount", "exchangeRate", "quoteId",
			"counterpartyInformation", "reconciliationInstructions", "paymentInstructions", "rateDetails", "fees", "platformFees"} {
			if _, ok := x[f]; !ok {
				t.Fatalf("no %s: %s", f, r.Body)
			}
		}
		if x["type"] != "OUTGOING" || x["direction"] != "DEBIT" || x["customerId"] != owner || x["quoteId"] != q["id"] ||
			x["description"] != "rent" {
			t.Fatalf("%s", r.Body)
		}
		if s, ok := x["status"].(string); !ok || s != "COMPLETED" {
			t.Fatalf("status %v", x["status"])
		}
		if _, ok := x["paymentInstructions"].([]any); !ok {
			t.Fatalf("paymentInstructions %v", x["paymentInstructions"])
		}
		if _, ok := x["exchangeRate"].(float64); !ok {
			t.Fatalf("exchangeRate %v", x["exchangeRate"])
		}
		if ri, _ := x["reconciliationInstructions"].(map[string]any); ri["reference"] == "" || ri["reference"] == nil {
			t.Fatalf("reconciliationInstructions %v", x["reconciliationInstructions"])
		}
		if f := x["fees"].(float64); f < 0 || int64(f) != qnum(t, q, "feesIncluded") || f == 0 {
			t.Fatalf("fees %v, quote feesIncluded %v", f, q["feesIncluded"])
		}
		if qtAmount(t, x, "sentAmount") != qnum(t, q, "totalSendingAmount") || qtAmount(t, x, "receivedAmount") != qnum(t, q, "totalReceivingAmount") {
			t.Fatalf("amounts %s", r.Body)
		}
		s, d := x["source"].(map[string]any), x["destination"].(map[string]any)
		if s["sourceType"] != "ACCOUNT" || s["accountId"] != src || s["currency"] != "USD" ||
			d["destinationType"] != "ACCOUNT" || d["accountId"] != ext || d["currency"] != "USD" {
			t.Fatalf("source %v destination %v", s, d)
		}
		cp, _ := x["counterpartyInformation"].(map[string]any)
		if len(cp) != len(payer) {
			t.Fatalf("counterpartyInformation %v", cp)
		}
		for k, v := range payer {
			if cp[k] != v {
				t.Fatalf("counterpartyInformation[%s] = %v, want %v", k, cp[k], v)
			}
		}
		intsOnly(t, r.Body, "fees", "platformFees", "sentAmount.amount", "receivedAmount.amount")
		utcTimes(t, x, "createdAt", "updatedAt", "settledAt")
		qr := e.qdo("GET", "/quotes/"+q["id"].(string), nil)
		intsOnly(t, qr.Body, "lockedCurrencyAmount", "totalSendingAmount", "totalReceivingAmount", "feesIncluded", "platformFeesIncluded")
		utcTimes(t, qr.JSON(t), "createdAt", "expiresAt")
	})
}

// Failed payouts (sandbox amounts ending 901..906).
// R-QUOTE-33: PROCESSING becomes FAILED with failureReason set, the debit
// is refunded automatically, and OUTGOING_PAYMENT.FAILED precedes the
// OUTGOING_PAYMENT.REFUND_* events.
// R-TXN-29: QUOTE_EXECUTION_FAILED is refunded (refund object, events).
// R-TXN-32: a refunded transaction exposes the refund object.
// R-TXN-28: the removed failureReason values never appear.
// R-TXN-42: every event has type, data (the transaction) and timestamp.
// R-TXN-23: while the payout is in flight the transaction is PROCESSING and
// railDetails PENDING; after a return FAILED and RETURNED: the two report
// different things.
func TestPayouts_Failures_R_QUOTE_33_R_TXN_29_R_TXN_32(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		src, owner, ext := e.txPayoutSetup(t)
		removed := []string{"EXECUTION_FAILED_POST_DEBIT", "SETTLEMENT_FAILED", "TIMEOUT", "MANUAL_REFUND"}
		want := map[int64]string{901: "QUOTE_EXECUTION_FAILED", 902: "LIMIT_EXCEEDED", 903: "ACCOUNT_CANNOT_RECEIVE",
			904: "ACCOUNT_INVALID", 905: "COMPLIANCE_REJECTED", 906: "PAYOUT_RETURNED"}
		for _, suffix := range []int64{901, 902, 903, 904, 905, 906} {
			before := e.qtBalance(t, owner, "USD")
			q := e.txPay(t, src, ext, "ACH", 10_000+suffix)
			e.railsDrain(t)
			txID := q["transactionId"].(string)
			x, r := e.txGet(t, txID)
			if x["status"] != "FAILED" || x["failureReason"] != want[suffix] || slices.Contains(removed, x["failureReason"].(string)) {
				t.Fatalf("%d: %s", suffix, r.Body)
			}
			refund, ok := x["refund"].(map[string]any)
			if !ok || refund["reference"] == nil || refund["initiatedAt"] == nil || refund["status"] != "COMPLETED" {
				t.Fatalf("%d: refund %v", suffix, x["refund"])
			}
			if got := e.qtBalance(t, owner, "USD"); got != before {
				t.Fatalf("%d: balance %d, want %d (refunded)", suffix, got, before)
			}
			var types []string
			for _, ev := range e.acEvents(t, txID) {
				data, _ := ev["data"].(map[string]any)
				ts, _ := ev["timestamp"].(string)
				if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || data["id"] != txID || ev["type"] == "" {
					t.Fatalf("%d: envelope %v", suffix, ev)
				}
				types = append(types, ev["type"].(string))
			}
			failed := slices.Index(types, "OUTGOING_PAYMENT.FAILED")
			pending := slices.Index(types, "OUTGOING_PAYMENT.REFUND_PENDING")
			completed := slices.Index(types, "OUTGOING_PAYMENT.REFUND_COMPLETED")
			if failed < 0 || pending < failed || completed < pending {
				t.Fatalf("%d: events %v", suffix, types)
			}
		}
		failedList := e.acTransactions(t, "type=OUTGOING")
		for _, x := range failedList {
			if fr, ok := x["failureReason"].(string); ok && slices.Contains(removed, fr) {
				t.Fatalf("removed failureReason %s listed", fr)
			}
		}

		// In flight: the transaction and its rail disagree, as allowed.
		rails.SetClockFactor(1)
		q := e.txPay(t, src, ext, "ACH", 7_000)
		x, _ := e.txGet(t, q["transactionId"].(string))
		if x["status"] != "PROCESSING" || railDetailsOf(t, x, "destination")["status"] != "PENDING" {
			t.Fatalf("in flight %v", x)
		}
		rails.SetClockFactor(0)
		e.acAudit(t)
	})
}

// Incoming bank transfers (sandbox deposits).
// R-TXN-14: an ordinary incoming payment has receivedAmount.
// R-TXN-15: reconciliationInstructions is present on an incoming
// transaction that is not CREATED.
// R-TXN-17: reconciliationInstructions carries the reference.
// R-TXN-26: the flat originator fields (accountHolderName,
// accountIdentifier, bankName, bankIdentifier, paymentRail,
// remittanceInformation) are populated on an incoming bank transfer.
func TestTransactions_Incoming_R_TXN_14_R_TXN_15_R_TXN_17_R_TXN_26(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		acct := e.acAccount(t, e.acCustomer(t), "USD")["id"].(string)
		for _, rail := range []string{"ACH", "WIRE", "RTP", "FEDNOW"} {
			r := e.qdo("POST", "/sandbox/incoming-payments", cobj{"accountId": acct, "amount": 4_200, "paymentRail": rail, "remittanceInformation": "rent"})
			expect(t, r, http.StatusOK, "")
			x, body := e.txGet(t, r.JSON(t)["id"].(string))
			if x["type"] != "INCOMING" || x["status"] == "CREATED" || qtAmount(t, x, "receivedAmount") != 4_200 {
				t.Fatalf("%s: %s", rail, body.Body)
			}
			if ri, _ := x["reconciliationInstructions"].(map[string]any); ri == nil || ri["reference"] == "" || ri["reference"] == nil {
				t.Fatalf("%s: reconciliationInstructions %v", rail, x["reconciliationInstructions"])
			}
			s := x["source"].(map[string]any)
			for _, f := range []string{"accountHolderName", "accountIdentifier", "bankName", "bankIdentifier"} {
				if v, _ := s[f].(string); v == "" {
					t.Fatalf("%s: source.%s missing: %v", rail, f, s)
				}
			}
			if s["paymentRail"] != rail || s["remittanceInformation"] != "rent" {
				t.Fatalf("%s: source %v", rail, s)
			}
			intsOnly(t, body.Body, "fees", "sentAmount.amount", "receivedAmount.amount")
		}
		// An internal transfer's receiving side is an ordinary incoming
		// payment too.
		a, b := e.qtCustomer(t), e.qtCustomer(t)
		e.qtWebhook(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 5_000)
		e.qtQuote(t, qtBody(src, dst, "SENDING", 3_000, "immediatelyExecute", true))
		in := e.acTransactions(t, "type=INCOMING&accountIdentifier="+dst)
		if len(in) != 1 || qtAmount(t, in[0], "receivedAmount") != 3_000 || in[0]["reconciliationInstructions"] == nil {
			t.Fatalf("internal incoming %v", in)
		}
	})
}

// A crypto payout to an external wallet settles ONCHAIN.
// R-TXN-18: the on-chain hash is on destination.railDetails (ONCHAIN, with
// its network), not in reconciliationInstructions.
// R-TXN-24: the deprecated onChainTransaction (transactionHash, network) is
// still populated alongside railDetails, with the same values.
func TestPayouts_Onchain_R_TXN_18_R_TXN_24(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		a, _ := e.qtSetup(t, "USD", "USDC")
		src := e.qtAccountID(t, a, "USD")
		expect(t, e.qdo("POST", "/sandbox/internal-accounts/"+src+"/fund", cobj{"amount": 1_000_000}), http.StatusOK, "")
		addr := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC").info[1].(string)
		w := e.eaCreate(t, eaCustomers, eaWallet(a, "ETHEREUM_WALLET", "USDC", "", "address", addr), jsonBody)
		q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
			"destination":        cobj{"destinationType": "ACCOUNT", "accountId": w["id"]},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 10_000, "immediatelyExecute": true}, jsonBody)
		e.railsDrain(t)
		x, r := e.txGet(t, q["transactionId"].(string))
		d := railDetailsOf(t, x, "destination")
		hash, _ := d["transactionHash"].(string)
		if x["status"] != "COMPLETED" || d["paymentRail"] != "ONCHAIN" || !strings.HasPrefix(hash, "0x") || d["network"] != "ETHEREUM" {
			t.Fatalf("%s", r.Body)
		}
		if _, ok := d["status"]; ok {
			t.Fatalf("ONCHAIN railDetails has no status: %v", d)
		}
		if ri, _ := x["reconciliationInstructions"].(map[string]any); ri["transactionHash"] != nil {
			t.Fatalf("the payout's hash is not in reconciliationInstructions: %v", ri)
		}
		oc, ok := x["destination"].(map[string]any)["onChainTransaction"].(map[string]any)
		if !ok || oc["transactionHash"] != hash || oc["network"] != "ETHEREUM" {
			t.Fatalf("onChainTransaction %v", x["destination"])
		}
		e.acAudit(t)
	})
}
