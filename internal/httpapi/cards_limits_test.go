package httpapi

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"
)

// R-CARD-38: an authorization exactly at maxSpendPerTransaction passes, one
// above declines SPEND_LIMIT_EXCEEDED. R-CARD-40: with both a platform cap
// and a card cap, the lower applies. Transactions per day count
// authorizations.
func TestCards_Limits_R_CARD_38_R_CARD_40(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // transactions per day count per UTC day
		_, _, card := e.cdFunded(t, 100_000, "maxSpendPerTransaction", 5_000, "maxTransactionsPerDay", 4)
		if x := e.cdAuth(t, card, 5_000); x["status"] != "AUTHORIZED" { // R-CARD-38
			t.Fatalf("R-CARD-38: at the limit %v", x["cardDeclinedReason"])
		}
		if x := e.cdAuth(t, card, 5_001); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" { // R-CARD-38
			t.Fatalf("R-CARD-38: above the limit %v", x["status"])
		}
		// R-CARD-40: platform cap 1000 under the card's 5000.
		expect(t, e.do("PATCH", "/config", cobj{"cardConfigs": cobj{"maxSpendPerTransaction": 1_000}}), http.StatusOK, "")
		if x := e.cdAuth(t, card, 2_000); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" {
			t.Fatalf("R-CARD-40: platform cap ignored: %v", x["status"])
		}
		if x := e.cdAuth(t, card, 1_000); x["status"] != "AUTHORIZED" {
			t.Fatalf("R-CARD-40: at the platform cap %v", x["cardDeclinedReason"])
		}
		// The platform's cap can be the higher one too: the card's applies.
		expect(t, e.do("PATCH", "/config", cobj{"cardConfigs": cobj{"maxSpendPerTransaction": 9_000}}), http.StatusOK, "")
		if x := e.cdAuth(t, card, 6_000); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" {
			t.Fatalf("R-CARD-40: card cap ignored: %v", x["status"])
		}
		// Count: two approved so far, two more allowed; declines do not count.
		e.cdAuth(t, card, 10)
		e.cdAuth(t, card, 10)
		if x := e.cdAuth(t, card, 10); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" {
			t.Fatalf("transactions per day: %v", x["status"])
		}
		e.acAudit(t)
	})
}

// R-CARD-39: the daily limit is a UTC calendar day; reversals, expiries and
// refunds do not restore capacity; it resets at 00:00 UTC. Expiry is
// durable background work: the card runner voids an authorization past its
// expiry and releases the hold.
func TestCards_DailyLimitAndExpiry_R_CARD_39(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
		cust, usd := e.cdSetup(t)
		e.acFund(t, usd, 100_000)
		set := e.acClock(t, day.Add(9*time.Hour)) // stops the node's runner: this test drives the card work
		svc := e.srv.CardService()
		card := e.cdCard(t, cust, usd, "maxSpendPerDay", 3_000)["id"].(string)
		set(day.Add(9*time.Hour + time.Minute))
		if _, err := svc.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.cdWait(t, card, "ACTIVE")
		a := e.cdAuth(t, card, 2_000)["id"].(string)
		e.cdOn(t, card, "reversal", a)
		if x := e.cdAuth(t, card, 1_500); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" { // R-CARD-39: no capacity back
			t.Fatalf("R-CARD-39: a reversal restored capacity: %v", x["status"])
		}
		b := e.cdAuth(t, card, 1_000)["id"].(string) // exactly at the day's remaining 1000
		if e.cdTx(t, b)["status"] != "AUTHORIZED" {
			t.Fatal("R-CARD-39: the remaining capacity was refused")
		}
		// Expiry: seven days later the runner voids b.
		set(day.Add(7*24*time.Hour + 10*time.Hour))
		if _, err := svc.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if x := e.cdTx(t, b); x["status"] != "VOIDED" {
			t.Fatalf("expiry: %v", x["status"])
		}
		if bal := e.cdBalance(t, usd); bal.PendingDebits != 0 || bal.Posted != 100_000 {
			t.Fatalf("expiry left money held: %+v", bal)
		}
		if types, _ := e.cdTxEvents(t, b); !slices.Equal(types, []string{"CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.VOIDED"}) {
			t.Fatalf("expiry events %v", types)
		}
		// A new UTC day: full capacity again (R-CARD-39: reset at 00:00 UTC).
		if x := e.cdAuth(t, card, 3_000); x["status"] != "AUTHORIZED" {
			t.Fatalf("R-CARD-39: no reset: %v", x["cardDeclinedReason"])
		}
		// A settled purchase refunded the same day restores nothing either.
		set(day.Add(9*24*time.Hour + time.Hour))
		c := e.cdAuth(t, card, 2_500)["id"].(string)
		e.cdOn(t, card, "clearing", c, "amount", 2_500)
		e.cdOn(t, card, "return", c, "amount", 2_500)
		if x := e.cdAuth(t, card, 600); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" {
			t.Fatalf("R-CARD-39: a refund restored capacity: %v", x["status"])
		}
		e.acAudit(t)
	})
}

// Advice (incremental), partial clearings (PARTIALLY_SETTLED), closing a
// card with an open authorization (released), and merchant credits.
func TestCards_AdvicePartialCloseCredit(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 10_000)
		id := e.cdAuth(t, card, 1_000)["id"].(string)
		x := e.cdOn(t, card, "authorization_advice", id, "amount", 1_500) // incremental
		if x["status"] != "AUTHORIZED" || acAmount(t, x, "authorizedAmount") != 1_500 || e.cdBalance(t, usd).PendingDebits != 1_500 {
			t.Fatalf("advice %v %+v", x, e.cdBalance(t, usd))
		}
		x = e.cdOn(t, card, "clearing", id, "amount", 500, "final", false)
		if x["status"] != "PARTIALLY_SETTLED" || e.cdBalance(t, usd).PendingDebits != 1_000 || e.cdBalance(t, usd).Posted != 9_500 {
			t.Fatalf("partial clearing %v %+v", x["status"], e.cdBalance(t, usd))
		}
		x = e.cdOn(t, card, "clearing", id, "amount", 700)
		if x["status"] != "SETTLED" || acAmount(t, x, "settledAmount") != 1_200 {
			t.Fatalf("final clearing %v", x)
		}
		if b := e.cdBalance(t, usd); b.Posted != 8_800 || b.PendingDebits != 0 {
			t.Fatalf("after clearings %+v", b)
		}
		// An advice is the network telling what it already approved: never
		// declined. Above the funds (800 available) it holds what the account
		// covers; the rest would be pulled at clearing (docs/cards.md).
		big := e.cdAuth(t, card, 8_000)["id"].(string)
		x = e.cdOn(t, card, "authorization_advice", big, "amount", 9_000)
		if x["status"] != "AUTHORIZED" || acAmount(t, x, "authorizedAmount") != 9_000 || e.cdBalance(t, usd).PendingDebits != 8_800 {
			t.Fatalf("advice above the funds: %v %+v", x["status"], e.cdBalance(t, usd))
		}
		// Merchant credits: pending then cleared; single-message credit.
		cr := e.cdSim(card, "credit_authorization", cobj{"amount": 300, "currency": cobj{"code": "USD"}, "merchant": cdMerchant("REFUND DESK", "5311")})
		expect(t, cr, http.StatusAccepted, "")
		credit := e.cdSent(t, cr)
		if credit["direction"] != "CREDIT" || credit["status"] != "AUTHORIZED" || e.cdBalance(t, usd).PendingCredits != 300 {
			t.Fatalf("credit authorization %v %+v", credit, e.cdBalance(t, usd))
		}
		e.cdOn(t, card, "clearing", credit["id"].(string), "amount", 300)
		fc := e.cdSim(card, "financial_credit_authorization", cobj{"amount": 200, "currency": cobj{"code": "USD"}, "merchant": cdMerchant("REBATE", "5311")})
		e.cdSent(t, fc)
		if b := e.cdBalance(t, usd); b.Posted != 9_300 {
			t.Fatalf("credits %+v", b)
		}
		fa := e.cdSim(card, "financial_authorization", cobj{"amount": 100, "currency": cobj{"code": "USD"}, "merchant": cdMerchant("VENDING", "5814")})
		expect(t, fa, http.StatusAccepted, "")
		if e.cdSent(t, fa)["status"] != "SETTLED" || e.cdBalance(t, usd).Posted != 9_200 {
			t.Fatal("single-message purchase not settled")
		}
		bi := e.cdSim(card, "balance_inquiry", cobj{"merchant": cdMerchant("ATM", "6011")})
		expect(t, bi, http.StatusAccepted, "")
		if m := bi.JSON(t); m["approved"] != true || acAmount(t, m, "availableBalance") != 400 {
			t.Fatalf("balance inquiry %v", m)
		}
		// Closing releases the open authorization (VOIDED).
		expect(t, e.cdPatch(card, cobj{"status": "CLOSED"}), http.StatusOK, "")
		if x := e.cdTx(t, big); x["status"] != "VOIDED" || e.cdBalance(t, usd).PendingDebits != 0 {
			t.Fatalf("close left %v %+v", x["status"], e.cdBalance(t, usd))
		}
		if x := e.cdAuth(t, card, 10); x["cardDeclinedReason"] != "CARD_NOT_ACTIVE" {
			t.Fatalf("closed card authorized: %v", x["status"])
		}
		e.acAudit(t)
	})
}

// R-STMT-09, R-STMT-13 for cards: a window of an account with card activity is 409
// NOT_YET_AVAILABLE while an authorization made before its end is open;
// once cleared, the card's posting is a balance change linked to its card
// transaction. A DECLINED authorization is no balance change.
func TestCards_Statements_R_STMT_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		cust, usd := e.cdSetup(t)
		set := e.acClock(t, start.Add(time.Hour))
		svc := e.srv.CardService()
		e.acFund(t, usd, 10_000)
		card := e.cdCard(t, cust, usd)["id"].(string)
		set(start.Add(2 * time.Hour))
		if _, err := svc.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		e.cdWait(t, card, "ACTIVE")
		a := e.cdAuth(t, card, 1_200)["id"].(string)
		e.cdAuth(t, card, 1, cdMerchant("CASINO-003", "7995")) // declined
		end := start.Add(24 * time.Hour)
		set(end.Add(time.Minute))
		path := stPath(usd, stRFC(start), stRFC(end))
		expect(t, e.do("GET", path, nil), http.StatusConflict, "NOT_YET_AVAILABLE") // R-STMT-09
		e.cdOn(t, card, "clearing", a, "amount", 1_200)
		r := e.do("GET", path, nil)
		expect(t, r, http.StatusOK, "")
		// The clearing posted after the window: the window shows the funding only.
		if m := r.JSON(t); m["closingBalance"] != 10_000.0 {
			t.Fatalf("window %v", m)
		}
		set(end.Add(2 * time.Hour))
		r = e.do("GET", stPath(usd, stRFC(start), stRFC(end.Add(time.Hour))), nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		rows := m["data"].([]any)
		// R-STMT-13: the declined authorization has no row: funding and clearing only.
		if m["closingBalance"] != 8_800.0 || len(rows) != 2 || rows[1].(map[string]any)["transactionId"] != a {
			t.Fatalf("card row: %v", m)
		}
	})
}
