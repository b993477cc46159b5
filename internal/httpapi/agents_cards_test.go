package httpapi

import (
	"net/http"
	"slices"
	"testing"
)

// Done when (issue 22): the scripted agent issues a single-use purchase
// card, which authorizes once through the sandbox card network and then
// closes. R-AGENT-37: POST issues a SINGLE_USE card (201, the agent card
// wrapper, R-AGENT-23); the one purchase holds the money (reservedAmount),
// a second authorization while it is open declines, the clearing settles it
// and closes the card (SINGLE_USE_SPENT), and later authorizations decline.
func TestAgents_DoneWhen_SingleUsePurchaseCardAuthorizesOnceThenCloses_R_AGENT_37(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, agentID, cust, usd := e.agCardFixture(t, 100_000, agPolicy(5000, 20_000, 1_000_000, agCardPerms...), true)
		w := a.agIssue(t, "SINGLE_USE", 2_500, usd)
		card := w["card"].(map[string]any)
		cardID := str(card, "id")
		// R-AGENT-23: the wrapper's fields.
		if w["agentId"] != agentID || w["agentCardKind"] != "SINGLE_USE" || str(card, "agentId") != agentID ||
			str(card, "customerId") != cust || str(card, "fundingSource") != usd || card["currency"] != "USD" {
			t.Fatalf("R-AGENT-23: wrapper %v", w)
		}
		limit := w["spendLimit"].(map[string]any)
		if limit["amount"] != float64(2_500) || limit["duration"] != "TRANSACTION" || w["reservedAmount"] != float64(0) ||
			card["maxSpendPerTransaction"] != float64(2_500) || str(w, "expiresAt") == "" {
			t.Fatalf("R-AGENT-23: spendLimit/reservedAmount/expiresAt %v", w)
		}
		if blocked := w["effectiveBlockedMccs"].([]any); !slices.Contains(blocked, any("7995")) || !slices.Contains(blocked, any("6051")) {
			t.Fatalf("R-AGENT-23: effectiveBlockedMccs %v lacks the agent defaults", blocked)
		}
		e.cdWait(t, cardID, "ACTIVE")
		before := e.cdBalance(t, usd)

		// The one purchase: held, and reservedAmount shows it.
		x := e.cdAuth(t, cardID, 2_000, cdMerchant("STAPLES 0042", "5943"))
		if x["status"] != "AUTHORIZED" {
			t.Fatalf("first authorization %v", x)
		}
		if got := a.agCardGet(t, cardID)["reservedAmount"]; got != float64(2_000) {
			t.Fatalf("reservedAmount %v, want 2000 held", got)
		}
		// A second purchase while the first is open declines; money stays.
		e.agDeclined(t, cardID, 100, cdMerchant("STAPLES 0042", "5943"), "CARD_NOT_ACTIVE")
		// The clearing settles it and closes the card in the same transaction.
		settled := e.cdOn(t, cardID, "clearing", str(x, "id"), "amount", 2_000)
		if settled["status"] != "SETTLED" {
			t.Fatalf("clearing %v", settled)
		}
		got := a.agCardGet(t, cardID)
		gc := got["card"].(map[string]any)
		if gc["status"] != "CLOSED" || gc["statusReason"] != "SINGLE_USE_SPENT" || got["reservedAmount"] != float64(0) {
			t.Fatalf("after its purchase the single-use card is %v (%v), reserved %v", gc["status"], gc["statusReason"], got["reservedAmount"])
		}
		if evs := e.cdStatusEvents(t, cardID); !slices.Equal(evs, []string{"ACTIVE", "CLOSED"}) {
			t.Fatalf("card.status_change events %v", evs)
		}
		e.agDeclined(t, cardID, 100, cdMerchant("STAPLES 0042", "5943"), "CARD_NOT_ACTIVE")
		if after := e.cdBalance(t, usd); before.Available-after.Available != 2_000 || after.Pending != 0 {
			t.Fatalf("balance %+v -> %+v: the purchase moved other than 2000", before, after)
		}
		e.acAudit(t)
	})
}

// R-AGENT-37: a MERCHANT_LOCKED card pays the merchant of its first approved
// purchase and declines every other (BLOCKED); its spend limit is per
// transaction; the agent default MCC blocks and the platform's
// cardConfigs.agentBlockedMccs make effectiveBlockedMccs, and decline.
func TestAgents_MerchantLockedCardAndDefaultBlocks_R_AGENT_37(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, _, _, usd := e.agCardFixture(t, 100_000, agPolicy(5000, 20_000, 1_000_000, agCardPerms...), true)
		expect(t, e.do("PATCH", "/config", cobj{"cardConfigs": cobj{"agentBlockedMccs": []string{"5933"}}}), http.StatusOK, "")
		cardID := a.agCardActive(t, "MERCHANT_LOCKED", 3_000, usd)
		w := a.agCardGet(t, cardID)
		blocked := w["effectiveBlockedMccs"].([]any)
		for _, m := range []string{"4829", "6010", "6011", "6051", "6540", "7800", "7801", "7802", "7995", "5933"} {
			if !slices.Contains(blocked, any(m)) {
				t.Fatalf("effectiveBlockedMccs %v lacks %s", blocked, m)
			}
		}
		// Blocked categories decline before the card locks to anyone.
		e.agDeclined(t, cardID, 500, cdMerchant("LUCKY CASINO", "7995"), "BLOCKED")
		e.agDeclined(t, cardID, 500, cdMerchant("PAWN SHOP", "5933"), "BLOCKED")
		// Over the spend limit (per transaction): declined, no lock.
		e.agDeclined(t, cardID, 3_001, cdMerchant("HARDWARE CO", "5251"), "SPEND_LIMIT_EXCEEDED")
		// The first approved purchase locks the card to its merchant.
		first := e.cdAuth(t, cardID, 1_000, cdMerchant("HARDWARE CO", "5251"))
		if first["status"] != "AUTHORIZED" {
			t.Fatalf("first purchase %v", first)
		}
		e.agDeclined(t, cardID, 500, cdMerchant("OTHER STORE", "5251"), "BLOCKED")
		again := e.cdAuth(t, cardID, 1_000, cdMerchant("HARDWARE CO", "5251"))
		if again["status"] != "AUTHORIZED" {
			t.Fatalf("second purchase at the locked merchant %v", again)
		}
		if got := a.agCardGet(t, cardID); got["reservedAmount"] != float64(2_000) || got["card"].(map[string]any)["status"] != "ACTIVE" {
			t.Fatalf("merchant-locked card after two purchases: %v", got)
		}
		e.acAudit(t)
	})
}
