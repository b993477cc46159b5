package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/cards"
)

// cdWalletSetup is cdSetup with embedded wallets enabled: it returns an
// APPROVED customer, its USD account and its USDB wallet.
func (e *env) cdWalletSetup(t *testing.T) (cust, usd, wallet string) {
	t.Helper()
	cust, usd = e.cdSetup(t)
	e.wlEnable(t)
	return cust, usd, e.wlWallet(t, cust)["id"].(string)
}

// The card status machine: every row of cards.Transitions is walked through
// the API (requests) or the system (issuer answers, funding changes), each
// move landing on the row's status and reason with one card.status_change;
// every requested move the table lacks is refused (R-CARD-21).
func TestCards_TransitionTable_EveryRow_R_CARD_21(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd, wallet := e.cdWalletSetup(t)
		walked := map[cards.Transition]bool{}
		for _, tr := range cards.Transitions {
			cardID := e.cdWalk(t, tr, cust, usd, wallet)
			c := e.cdGet(t, cardID)
			reason, _ := c["statusReason"].(string)
			if c["status"] != tr.To || reason != tr.Reason {
				t.Fatalf("%s --%s--> %v (%v), want %s (%s)", tr.From, tr.Trigger, c["status"], c["statusReason"], tr.To, tr.Reason)
			}
			evs := e.cdStatusEvents(t, cardID)
			if len(evs) == 0 || evs[len(evs)-1] != tr.To {
				t.Fatalf("%s --%s-->: events %v", tr.From, tr.Trigger, evs)
			}
			walked[tr] = true
		}
		if len(walked) != len(cards.Transitions) {
			t.Fatalf("walked %d of %d rows", len(walked), len(cards.Transitions))
		}
		// R-CARD-21: requested moves the table does not have.
		for _, from := range cards.Statuses {
			for _, to := range cards.RequestableStatuses {
				if cdInTable(from, to) {
					continue
				}
				card := e.cdActive(t, cust, usd)["id"].(string)
				e.cdSetStatus(t, card, from)
				want := "INVALID_STATE_TRANSITION"
				if from == cards.StatusClosed {
					want = "CARD_NOT_MUTABLE"
					if to == cards.StatusClosed {
						want = "CARD_ALREADY_CLOSED"
					}
				}
				expect(t, e.cdPatch(card, cobj{"status": to}), http.StatusConflict, want) // R-ERR-15: 409
				if got := e.cdGet(t, card)["status"]; got != from {
					t.Fatalf("refused %s -> %s changed the card to %v", from, to, got)
				}
			}
		}
	})
}

func cdInTable(from, to string) bool {
	return slices.ContainsFunc(cards.Transitions, func(tr cards.Transition) bool {
		return tr.From == from && tr.To == to && tr.Trigger != cards.TriggerDelegationLost &&
			tr.Trigger != cards.TriggerDelegationRestored && tr.From != cards.StatusProcessing
	})
}

// cdWalk makes a card take one transition and returns it.
func (e *env) cdWalk(t *testing.T, tr cards.Transition, cust, usd, wallet string) string {
	t.Helper()
	switch tr.Trigger {
	case cards.TriggerProvisioned:
		return e.cdActive(t, cust, usd)["id"].(string)
	case cards.TriggerProvisionedWithoutKey:
		c := e.cdCard(t, cust, wallet)["id"].(string)
		e.cdWait(t, c, cards.StatusPendingAuth)
		return c
	case cards.TriggerIssuerRejected:
		c := e.cdCard(t, cust, usd, "platformCardId", "walk"+cards.SandboxRejectSuffix)["id"].(string)
		e.cdWait(t, c, cards.StatusClosed)
		return c
	case cards.TriggerDelegationLost:
		c := e.cdActive(t, cust, usd)["id"].(string)
		expect(t, e.cdPatch(c, cobj{"fundingSource": wallet}), http.StatusOK, "")
		return c
	case cards.TriggerSingleUseSpent:
		// An agent's SINGLE_USE card whose one purchase clears.
		c := e.cdAgentFixtureCard(t, cust, usd, cards.StatusActive, cards.AgentSingleUse)
		e.acFund(t, usd, 1_000)
		x := e.cdAuth(t, c, 1_000)
		e.cdSetStatus(t, c, tr.From)
		e.cdOn(t, c, "clearing", x["id"].(string), "amount", 1_000)
		return c
	case cards.TriggerDelegationRestored:
		c := e.cdCard(t, cust, wallet)["id"].(string)
		e.cdWait(t, c, cards.StatusPendingAuth)
		expect(t, e.cdPatch(c, cobj{"fundingSource": usd}), http.StatusOK, "")
		return c
	}
	c := e.cdActive(t, cust, usd)["id"].(string)
	e.cdSetStatus(t, c, tr.From)
	to := map[string]string{cards.TriggerRequestActive: "ACTIVE", cards.TriggerRequestFrozen: "FROZEN",
		cards.TriggerRequestClosed: "CLOSED"}[tr.Trigger]
	if to == "" {
		t.Fatalf("no way to walk trigger %q", tr.Trigger)
	}
	expect(t, e.cdPatch(c, cobj{"status": to}), http.StatusOK, "")
	return c
}

// R-CARD-11, R-CARD-12, R-CARD-15, R-CARD-16, R-CARD-17, R-CARD-18,
// R-CARD-37: freeze and unfreeze answer the card at once (200); closing
// detaches the funding with CLOSED_BY_PLATFORM; a closed card stays closed.
func TestCards_FreezeUnfreezeClose_R_CARD_12_R_CARD_15_R_CARD_17(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd := e.cdSetup(t)
		id := e.cdActive(t, cust, usd)["id"].(string)
		r := e.cdPatch(id, cobj{"status": "FROZEN"})
		expect(t, r, http.StatusOK, "") // R-CARD-37, R-AUTH-18: 200 with platform credentials, no signed retry
		if r.JSON(t)["status"] != "FROZEN" {
			t.Fatalf("R-CARD-11: %v", r.JSON(t)["status"])
		}
		r = e.cdPatch(id, cobj{"status": "ACTIVE"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "ACTIVE" { // R-CARD-12
			t.Fatalf("R-CARD-12: %v", r.JSON(t)["status"])
		}
		r = e.cdPatch(id, cobj{"status": "CLOSED"})
		expect(t, r, http.StatusOK, "")
		c := r.JSON(t)
		if c["status"] != "CLOSED" || c["statusReason"] != "CLOSED_BY_PLATFORM" || c["fundingSource"] != nil { // R-CARD-15
			t.Fatalf("R-CARD-15: %v", c)
		}
		expect(t, e.cdPatch(id, cobj{"status": "ACTIVE"}), http.StatusConflict, "CARD_NOT_MUTABLE")    // R-CARD-16
		expect(t, e.cdPatch(id, cobj{"status": "CLOSED"}), http.StatusConflict, "CARD_ALREADY_CLOSED") // R-CARD-17
		expect(t, e.cdPatch(id, cobj{"maxSpendPerDay": 100}), http.StatusConflict, "CARD_NOT_MUTABLE") // R-CARD-18
		expect(t, e.cdPatch(id, cobj{"fundingSource": usd}), http.StatusConflict, "CARD_NOT_MUTABLE")  // R-CARD-18
		if got := e.cdStatusEvents(t, id); !slices.Equal(got, []string{"ACTIVE", "FROZEN", "ACTIVE", "CLOSED"}) {
			t.Fatalf("R-CARD-09: events %v", got)
		}
		if got := e.cdGet(t, id); got["status"] != "CLOSED" || got["maxSpendPerDay"] != nil {
			t.Fatalf("a refused change changed the card: %v", got)
		}
	})
}

// Bad input: every PATCH the spec forbids is refused with its code and
// changes nothing (R-CARD-19, R-CARD-20, R-CARD-31, R-CARD-32, R-CARD-33,
// R-CARD-34, R-CARD-35, R-CARD-36).
func TestCards_PatchBadInput_R_CARD_19_R_CARD_20_R_CARD_31(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd, wallet := e.cdWalletSetup(t)
		_, otherUSD := e.cdCustomer(t)
		eur := e.acAccount(t, cust, "EUR")["id"].(string)
		id := e.cdActive(t, cust, usd)["id"].(string)
		eurCard := e.cdActive(t, cust, eur)["id"].(string)
		before, eurBefore := e.cdGet(t, id), e.cdGet(t, eurCard)
		for name, c := range map[string]struct {
			card string
			body any
		}{
			"R-CARD-19 closed with limit":      {id, cobj{"status": "CLOSED", "maxSpendPerDay": 100}},
			"R-CARD-19 closed with funding":    {id, cobj{"status": "CLOSED", "fundingSource": usd}},
			"R-CARD-20 pending auth requested": {id, cobj{"status": "PENDING_AUTH"}},
			"R-CARD-20 processing requested":   {id, cobj{"status": "PROCESSING"}},
			"R-CARD-31 empty body":             {id, cobj{}},
			"R-CARD-32 zero limit":             {id, cobj{"maxSpendPerDay": 0}},
			"R-CARD-32 negative limit":         {id, cobj{"maxSpendPerTransaction": -1}},
			"R-CARD-32 zero count":             {id, cobj{"maxTransactionsPerDay": 0}},
			"R-CARD-33 limit without flag":     {eurCard, cobj{"maxSpendPerTransaction": 5000}},
			"R-CARD-33 count without flag":     {eurCard, cobj{"maxTransactionsPerDay": 3}},
			"R-CARD-34 another customer":       {id, cobj{"fundingSource": otherUSD}},
			"R-CARD-35 other currency":         {id, cobj{"fundingSource": eur}},
			"R-CARD-35 eur card, usd account":  {eurCard, cobj{"fundingSource": usd}},
			"R-CARD-36 issuer decides":         {eurCard, cobj{"status": "FROZEN", "fundingSource": eur}},
			"bad mcc":                          {id, cobj{"blockedMccs": []string{"58"}}},
			"3ds without flag":                 {id, cobj{"threeDSecurePassword": "correct horse"}},
		} {
			r := e.cdPatch(c.card, c.body)
			if r.Status != http.StatusBadRequest || r.Code(t) != "INVALID_INPUT" {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		after, eurAfter := e.cdGet(t, id), e.cdGet(t, eurCard)
		if after["updatedAt"] != before["updatedAt"] || eurAfter["updatedAt"] != eurBefore["updatedAt"] {
			t.Fatal("a refused PATCH changed a card")
		}
		// R-CARD-32: set, then clear with null.
		r := e.cdPatch(id, cobj{"maxSpendPerDay": 5000})
		if r.JSON(t)["maxSpendPerDay"] != float64(5000) {
			t.Fatalf("R-CARD-32 set: %s", r.Body)
		}
		r = e.cdPatch(id, cobj{"maxSpendPerDay": nil})
		if v, ok := r.JSON(t)["maxSpendPerDay"]; !ok || v != nil {
			t.Fatalf("R-CARD-32 clear: %s", r.Body)
		}
		// R-CARD-35: a USDB wallet funds a USD card.
		expect(t, e.cdPatch(id, cobj{"fundingSource": wallet}), http.StatusOK, "")
		// A static 3-D Secure password on a program that takes one: handed to
		// the issuer, never returned.
		r = e.cdPatch(eurCard, cobj{"threeDSecurePassword": "correct horse"})
		expect(t, r, http.StatusOK, "")
		if strings.Contains(string(r.Body), "correct horse") {
			t.Fatal("the 3-D Secure password came back")
		}
		// R-CARD-33: the flag present, the limit is taken.
		expect(t, e.cdPatch(id, cobj{"maxTransactionsPerDay": 3}), http.StatusOK, "")
		// Tenancy: the production token does not see the sandbox card.
		expect(t, e.do("PATCH", "/cards/"+id, cobj{"status": "FROZEN"}, withCreds(e.production)), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("GET", "/cards/Card:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil), http.StatusNotFound, "NOT_FOUND") // R-CARD-30
	})
}

// R-CARD-10: a fundingSource change between usable accounts fires no
// card.status_change; R-CARD-02: limits at issuance need the capability.
func TestCards_FundingChangeSilent_R_CARD_10_R_CARD_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd, wallet := e.cdWalletSetup(t)
		eur := e.acAccount(t, cust, "EUR")["id"].(string)
		card := e.cdCard(t, cust, usd, "maxSpendPerTransaction", 5000, "maxTransactionsPerDay", 4) // R-CARD-02
		if card["maxSpendPerTransaction"] != float64(5000) || card["maxTransactionsPerDay"] != float64(4) {
			t.Fatalf("R-CARD-02: %v", card)
		}
		expect(t, e.cdIssue(cobj{"customerId": cust, "fundingSource": eur, "maxSpendPerTransaction": 5000}),
			http.StatusBadRequest, "INVALID_INPUT") // R-CARD-02: EUR cards have no limits
		id := card["id"].(string)
		e.cdWait(t, id, "ACTIVE")
		e.cdFixtureCard(t, cust, usd, "ACTIVE")
		expect(t, e.cdPatch(id, cobj{"status": "FROZEN"}), http.StatusOK, "")
		n := len(e.cdStatusEvents(t, id))
		// A real funding change (USD account to wallet and back) on a frozen
		// card: the card stays FROZEN (R-CARD-24) and no webhook fires.
		for _, acct := range []string{wallet, usd} {
			r := e.cdPatch(id, cobj{"fundingSource": acct, "maxSpendPerDay": 700})
			expect(t, r, http.StatusOK, "")
			if c := r.JSON(t); c["fundingSource"] != acct || c["status"] != "FROZEN" {
				t.Fatalf("funding change: %v %v", c["fundingSource"], c["status"])
			}
		}
		if got := len(e.cdStatusEvents(t, id)); got != n { // R-CARD-10
			t.Fatalf("R-CARD-10: a funding change fired %d events", got-n)
		}
		expect(t, e.cdPatch(id, cobj{"status": "ACTIVE"}), http.StatusOK, "")
		list := e.do("GET", "/cards?accountId="+usd+"&status=ACTIVE", nil).JSON(t)
		if list["totalCount"] != float64(2) {
			t.Fatalf("R-CARD-29: %v", list["totalCount"])
		}
		if e.do("GET", "/cards?platformCardId=fixture", nil).JSON(t)["totalCount"] != float64(1) { // R-CARD-29
			t.Fatal("R-CARD-29: platformCardId filter")
		}
		expect(t, e.do("GET", "/cards?status=OPEN", nil), http.StatusBadRequest, "INVALID_INPUT")
	})
}
