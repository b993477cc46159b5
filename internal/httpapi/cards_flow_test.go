package httpapi

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// The "done when", the parts of cards this server has: issue a card
// to a KYC-approved customer and see it become ACTIVE through its event, set
// limits, authorize and clear a purchase (the hold appears and posts), see
// a purchase above the daily limit decline, freeze and see an authorization
// decline CARD_NOT_ACTIVE, return part of a purchase, switch funding to a
// USDB wallet without a key (PENDING_AUTH) and back, close the card; the
// statement shows the card's posting and the ledger balances throughout.
func TestCards_DoneWhenFlow(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the daily spend limit counts across the test
		cust, usd, wallet := e.cdWalletSetup(t)
		e.acFund(t, usd, 50_000)
		card := e.cdCard(t, cust, usd)["id"].(string)
		e.cdWait(t, card, "ACTIVE")
		if got := e.cdStatusEvents(t, card); !slices.Equal(got, []string{"ACTIVE"}) {
			t.Fatalf("events %v", got)
		}
		expect(t, e.cdPatch(card, cobj{"maxSpendPerDay": 10_000, "maxSpendPerTransaction": 8_000}), http.StatusOK, "")
		buy := e.cdAuth(t, card, 6_000)["id"].(string)
		if b := e.cdBalance(t, usd); b.PendingDebits != 6_000 || b.Posted != 50_000 {
			t.Fatalf("hold %+v", b)
		}
		e.cdOn(t, card, "clearing", buy, "amount", 6_000)
		if b := e.cdBalance(t, usd); b.PendingDebits != 0 || b.Posted != 44_000 {
			t.Fatalf("posted %+v", b)
		}
		e.acAudit(t)
		if x := e.cdAuth(t, card, 4_001); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" {
			t.Fatalf("above the daily limit: %v", x["status"])
		}
		expect(t, e.cdPatch(card, cobj{"status": "FROZEN"}), http.StatusOK, "")
		if x := e.cdAuth(t, card, 100); x["cardDeclinedReason"] != "CARD_NOT_ACTIVE" {
			t.Fatalf("frozen: %v", x["status"])
		}
		expect(t, e.cdPatch(card, cobj{"status": "ACTIVE"}), http.StatusOK, "")
		e.cdOn(t, card, "return", buy, "amount", 1_500)
		if b := e.cdBalance(t, usd); b.Posted != 45_500 {
			t.Fatalf("after the return %+v", b)
		}
		r := e.cdPatch(card, cobj{"fundingSource": wallet})
		if r.JSON(t)["status"] != "PENDING_AUTH" || r.JSON(t)["statusReason"] != "DELEGATION_REQUIRED" {
			t.Fatalf("wallet without a key: %v", r.JSON(t)["status"])
		}
		if r = e.cdPatch(card, cobj{"fundingSource": usd}); r.JSON(t)["status"] != "ACTIVE" {
			t.Fatalf("back on USD: %v", r.JSON(t)["status"])
		}
		open := e.cdAuth(t, card, 1_000)["id"].(string)
		expect(t, e.cdPatch(card, cobj{"status": "CLOSED"}), http.StatusOK, "")
		if e.cdTx(t, open)["status"] != "VOIDED" || e.cdBalance(t, usd).PendingDebits != 0 {
			t.Fatal("closing left money held")
		}
		// The statement of the day so far (its settlement has closed once no
		// authorization is open and the sandbox delay has passed).
		now := e.db.Now().UTC()
		time.Sleep(5100 * time.Millisecond)
		st := e.do("GET", stPath(usd, stRFC(now.Add(-time.Hour)), stRFC(now)), nil)
		expect(t, st, http.StatusOK, "")
		ids := map[any]bool{}
		for _, row := range st.JSON(t)["data"].([]any) {
			ids[row.(map[string]any)["transactionId"]] = true
		}
		if !ids[buy] || st.JSON(t)["closingBalance"] != 45_500.0 {
			t.Fatalf("statement %s", st.Body)
		}
		wantStatuses := []string{"ACTIVE", "FROZEN", "ACTIVE", "PENDING_AUTH", "ACTIVE", "CLOSED"}
		if got := e.cdStatusEvents(t, card); !slices.Equal(got, wantStatuses) {
			t.Fatalf("status events %v", got)
		}
		e.acAudit(t)
	})
}
