package httpapi

import (
	"net/http"
	"slices"
	"testing"
)

// R-CARD-52, R-CARD-53, R-CARD-38: an authorization holds the amount on the
// funding account (AUTHORIZED); a clearing above it posts the hold and pulls
// the difference (SETTLED); each transition sends CARD_TRANSACTION.* with the
// full record; the card transaction is in GET /transactions by cardId with
// its card fields.
func TestCards_AuthorizeAndClear_R_CARD_52_R_CARD_53(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 10_000)
		x := e.cdAuth(t, card, 2_500)
		if x["status"] != "AUTHORIZED" || x["type"] != "CARD" || x["direction"] != "DEBIT" { // R-TXN-06
			t.Fatalf("authorization %v %v %v", x["status"], x["type"], x["direction"])
		}
		b := e.cdBalance(t, usd)
		if b.Posted != 10_000 || b.PendingDebits != 2_500 || b.Available != 7_500 {
			t.Fatalf("hold: %+v", b)
		}
		id := x["id"].(string)
		x = e.cdOn(t, card, "clearing", id, "amount", 3_000) // R-CARD-38: clearing above the authorization
		if x["status"] != "SETTLED" || acAmount(t, x, "settledAmount") != 3_000 || acAmount(t, x, "authorizedAmount") != 2_500 {
			t.Fatalf("clearing %v", x)
		}
		if b := e.cdBalance(t, usd); b.Posted != 7_000 || b.PendingDebits != 0 {
			t.Fatalf("posted: %+v", b)
		}
		// R-CARD-52: the card fields.
		got := e.cdTx(t, id)
		m := got["merchant"].(map[string]any)
		if got["cardId"] != card || m["city"] != "San Francisco" || m["state"] != "CA" || m["mcc"] != "5814" ||
			acAmount(t, got, "refundedAmount") != 0 || got["cardDeclinedReason"] != nil {
			t.Fatalf("R-CARD-52: %v", got)
		}
		if cur := got["settledAmount"].(map[string]any)["currency"].(map[string]any); cur["code"] != "USD" || cur["decimals"] == nil {
			t.Fatalf("R-CARD-52: currency metadata %v", cur)
		}
		list := e.acTransactions(t, "cardId="+card) // R-TXN-03
		if len(list) != 1 || list[0]["id"] != id {
			t.Fatalf("cardId filter: %d rows", len(list))
		}
		if n := len(e.acTransactions(t, "type=CARD")); n != 1 {
			t.Fatalf("type=CARD: %d", n)
		}
		expect(t, e.do("GET", "/transactions?type=CARD&status=SETTLED", nil), http.StatusBadRequest, "INVALID_INPUT") // R-TXN-04
		// R-CARD-53: one event per transition, each the full record.
		types, data := e.cdTxEvents(t, id)
		if !slices.Equal(types, []string{"CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"}) {
			t.Fatalf("R-CARD-53: %v", types)
		}
		if data[1]["id"] != id || data[1]["merchant"] == nil || acAmount(t, data[1], "settledAmount") != 3_000 {
			t.Fatalf("R-CARD-53: event data %v", data[1])
		}
		e.acAudit(t)
	})
}

// R-CARD-50, R-CARD-11: each decline reason, recorded DECLINED with its
// cardDeclinedReason, moving no money, with CARD_TRANSACTION.DECLINED.
func TestCards_Declines_R_CARD_50_R_CARD_11(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd, card := e.cdFunded(t, 5_000, "maxSpendPerTransaction", 3_000, "blockedMccs", []string{"7995"})
		e.wlEnable(t)
		wallet := e.wlWallet(t, cust)["id"].(string)
		keyless := e.cdFixtureCard(t, cust, wallet, "ACTIVE") // ACTIVE, but its wallet has no delegated key
		frozen := e.cdActive(t, cust, usd)["id"].(string)
		expect(t, e.cdPatch(frozen, cobj{"status": "FROZEN"}), http.StatusOK, "")
		before := e.cdBalance(t, usd)
		usdAuth := func(c string, amount int64, m cobj, cur string) map[string]any {
			r := e.cdSim(c, "authorization", cobj{"amount": amount, "currency": cobj{"code": cur}, "merchant": m})
			expect(t, r, http.StatusAccepted, "")
			return e.cdSent(t, r)
		}
		coffee := cdMerchant("COFFEE", "5814")
		for reason, x := range map[string]map[string]any{
			"CARD_NOT_ACTIVE":            usdAuth(frozen, 100, coffee, "USD"), // R-CARD-11
			"SPEND_LIMIT_EXCEEDED":       usdAuth(card, 3_001, coffee, "USD"),
			"INSUFFICIENT_FUNDS":         usdAuth(card, 100, cdMerchant("AMAZON RETAIL US-002", "5942"), "USD"),
			"BLOCKED":                    usdAuth(card, 100, cdMerchant("CASINO", "7995"), "USD"),
			"NO_ELIGIBLE_FUNDING_SOURCE": usdAuth(keyless, 100, coffee, "USD"),
			"UNSUPPORTED_NETWORK":        usdAuth(card, 100, coffee, "EUR"),
		} {
			if x["status"] != "DECLINED" || x["cardDeclinedReason"] != reason {
				t.Errorf("%s: %v %v", reason, x["status"], x["cardDeclinedReason"])
				continue
			}
			if types, _ := e.cdTxEvents(t, x["id"].(string)); !slices.Equal(types, []string{"CARD_TRANSACTION.DECLINED"}) {
				t.Errorf("%s: events %v", reason, types)
			}
			// Impossible events on a declined authorization are refused.
			expect(t, e.cdSim(x["cardId"].(string), "clearing", cobj{"cardTransactionId": x["id"], "amount": 100}),
				http.StatusConflict, "INVALID_STATE_TRANSITION")
		}
		// INSUFFICIENT_FUNDS from the balance itself (not the magic value).
		if x := usdAuth(card, 2_999, coffee, "USD"); x["status"] != "AUTHORIZED" {
			t.Fatalf("within funds: %v", x["status"])
		}
		// R-SBX-18: a sandbox decline for a low balance carries INSUFFICIENT_FUNDS.
		if x := usdAuth(card, 2_500, coffee, "USD"); x["cardDeclinedReason"] != "INSUFFICIENT_FUNDS" {
			t.Fatalf("over funds: %v", x["cardDeclinedReason"])
		}
		after := e.cdBalance(t, usd)
		if after.Posted != before.Posted || after.PendingDebits != 2_999 {
			t.Fatalf("declines moved money: %+v then %+v", before, after)
		}
		e.acAudit(t)
	})
}

// R-CARD-49: a reversed authorization is VOIDED and its hold released;
// reversing twice is refused and moves nothing. A partial reversal keeps
// the rest held.
func TestCards_ReversalVoids_R_CARD_49(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 10_000)
		x := e.cdAuth(t, card, 4_000)
		id := x["id"].(string)
		x = e.cdOn(t, card, "reversal", id, "amount", 1_000)
		if x["status"] != "AUTHORIZED" || e.cdBalance(t, usd).PendingDebits != 3_000 {
			t.Fatalf("partial reversal %v %+v", x["status"], e.cdBalance(t, usd))
		}
		x = e.cdOn(t, card, "reversal", id)
		if x["status"] != "VOIDED" || e.cdBalance(t, usd).Available != 10_000 {
			t.Fatalf("R-CARD-49: %v %+v", x["status"], e.cdBalance(t, usd))
		}
		expect(t, e.cdSim(card, "reversal", cobj{"cardTransactionId": id}), http.StatusConflict, "INVALID_STATE_TRANSITION")
		expect(t, e.cdSim(card, "clearing", cobj{"cardTransactionId": id, "amount": 10}), http.StatusConflict, "INVALID_STATE_TRANSITION")
		if types, _ := e.cdTxEvents(t, id); !slices.Equal(types, []string{"CARD_TRANSACTION.AUTHORIZED",
			"CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.VOIDED"}) {
			t.Fatalf("events %v", types)
		}
		if b := e.cdBalance(t, usd); b.Posted != 10_000 || b.PendingDebits != 0 {
			t.Fatalf("money moved: %+v", b)
		}
		// Another card's transaction is not found through this card.
		other := e.cdAuth(t, card, 100)["id"].(string)
		cust2, usd2 := e.cdCustomer(t)
		card2 := e.cdActive(t, cust2, usd2)["id"].(string)
		expect(t, e.cdSim(card2, "reversal", cobj{"cardTransactionId": other}), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		expect(t, e.do("POST", "/sandbox/cards/"+card+"/simulate/reversal", cobj{"cardTransactionId": other}, withCreds(e.production)),
			http.StatusForbidden, "")
		e.acAudit(t)
	})
}

// R-CARD-51, R-CARD-54: a return is its own CREDIT row pointing to the
// purchase, which stays SETTLED with refundedAmount and re-fires SETTLED;
// never REFUNDED. A return reversal takes it back.
func TestCards_Return_R_CARD_51_R_CARD_54(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 10_000)
		id := e.cdAuth(t, card, 5_000)["id"].(string)
		e.cdOn(t, card, "clearing", id, "amount", 5_000)
		r := e.cdSim(card, "return", cobj{"cardTransactionId": id, "amount": 2_000})
		expect(t, r, http.StatusAccepted, "")
		ret := e.cdSent(t, r)
		if ret["direction"] != "CREDIT" || ret["status"] != "SETTLED" || ret["originalTransactionId"] != id ||
			acAmount(t, ret, "settledAmount") != 2_000 { // R-CARD-51
			t.Fatalf("R-CARD-51: return row %v", ret)
		}
		orig := e.cdTx(t, id)
		if orig["status"] != "SETTLED" || acAmount(t, orig, "refundedAmount") != 2_000 { // R-CARD-51
			t.Fatalf("R-CARD-51: original %v %v", orig["status"], orig["refundedAmount"])
		}
		if b := e.cdBalance(t, usd); b.Posted != 7_000 {
			t.Fatalf("balance after return %+v", b)
		}
		types, data := e.cdTxEvents(t, id)
		if !slices.Equal(types, []string{"CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED", "CARD_TRANSACTION.SETTLED"}) ||
			acAmount(t, data[2], "refundedAmount") != 2_000 { // R-CARD-54
			t.Fatalf("R-CARD-54: %v", types)
		}
		expect(t, e.cdSim(card, "return", cobj{"cardTransactionId": id, "amount": 3_001}), http.StatusBadRequest, "INVALID_INPUT")
		// R-SBX-03: return_reversal takes the refund row's id (the CREDIT row with originalTransactionId).
		x := e.cdOn(t, card, "return_reversal", ret["id"].(string))
		if x["status"] != "VOIDED" || acAmount(t, e.cdTx(t, id), "refundedAmount") != 0 || e.cdBalance(t, usd).Posted != 5_000 {
			t.Fatalf("return reversal %v", x["status"])
		}
		expect(t, e.cdSim(card, "return_reversal", cobj{"cardTransactionId": ret["id"]}), http.StatusConflict, "INVALID_STATE_TRANSITION")
		for _, x := range e.acTransactions(t, "cardId="+card) {
			if x["status"] == "REFUNDED" {
				t.Fatal("R-CARD-51: a REFUNDED card transaction")
			}
		}
		for _, tx := range []string{id, ret["id"].(string)} {
			if types, _ := e.cdTxEvents(t, tx); slices.Contains(types, "CARD_TRANSACTION.REFUNDED") {
				t.Fatal("R-CARD-54: CARD_TRANSACTION.REFUNDED sent")
			}
		}
		e.acAudit(t)
	})
}
