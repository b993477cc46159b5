package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
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

// R-AGENT-39, R-AGENT-15, R-AGENT-23: above the approval threshold POST
// answers 202 with a PENDING_APPROVAL PURCHASE_CARD action that expires five
// minutes after its creation and announces itself; the platform's approval
// issues the card (the action carries it), a rejection issues nothing, and
// an action left waiting past its five minutes fails EXPIRED by the
// durable sweep (or at a late approval) and issues nothing.
func TestAgents_PurchaseCardApproval_R_AGENT_39_R_AGENT_15(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		// Noon UTC: the moves below (about ten minutes) stay in one UTC day,
		// which the daily spend checked at the end counts.
		move := e.acClock(t, midDay())
		start := e.db.Now()
		a, agentID, _, usd := e.agCardFixture(t, 100_000, agPolicy(5000, 20_000, 1_000_000, agCardPerms...), true)
		submit := func() map[string]any {
			act := a.must(t, http.StatusAccepted, "POST", "/agents/me/cards", agCardBody("SINGLE_USE", 6_000, usd))
			if act["status"] != "PENDING_APPROVAL" || act["type"] != "PURCHASE_CARD" || act["card"] != nil { // R-AGENT-39
				t.Fatalf("R-AGENT-39: %v", act)
			}
			return act
		}
		act := submit()
		// R-AGENT-15: expiresAt - createdAt == 5 minutes.
		if d := agTime(t, act, "expiresAt").Sub(agTime(t, act, "createdAt")); d.Minutes() != 5 {
			t.Fatalf("R-AGENT-15: expiresAt - createdAt = %v", d)
		}
		// R-AGENT-23: purchaseCard as submitted (GET is schema-checked by the harness).
		got := a.must(t, http.StatusOK, "GET", "/agents/me/actions/"+str(act, "id"), nil)
		pc := got["purchaseCard"].(map[string]any)
		if pc["kind"] != "SINGLE_USE" || pc["currency"] != "USD" || pc["amount"] != float64(6_000) ||
			pc["sourceAccountId"] != usd || pc["memo"] != "office supplies" {
			t.Fatalf("R-AGENT-23: purchaseCard %v", pc)
		}
		if list := a.must(t, http.StatusOK, "GET", "/agents/me/cards", nil); list["totalCount"] != float64(0) {
			t.Fatalf("a waiting action issued a card: %v", list)
		}
		// The platform approves: the card is issued, and the action carries it.
		r := e.do("POST", "/agents/"+agentID+"/actions/"+str(act, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		ok := r.JSON(t)
		w, _ := ok["card"].(map[string]any)
		if ok["status"] != "APPROVED" || w == nil || w["agentCardKind"] != "SINGLE_USE" || w["agentId"] != agentID ||
			w["spendLimit"].(map[string]any)["amount"] != float64(6_000) {
			t.Fatalf("R-AGENT-39/R-AGENT-23: approved action %v", ok)
		}
		cardID := str(w["card"].(map[string]any), "id")
		if l := a.must(t, http.StatusOK, "GET", "/agents/me/cards", nil); l["totalCount"] != float64(1) {
			t.Fatalf("approved action's card not listed: %v", l)
		}
		move(start.Add(time.Second))
		if _, err := e.srv.CardService().RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st := a.agCardGet(t, cardID)["card"].(map[string]any)["status"]; st != "ACTIVE" {
			t.Fatalf("approved card %v", st)
		}
		agEventTypes(t, e, str(act, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.APPROVED")

		// A rejection issues nothing.
		rej := submit()
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(rej, "id")+"/reject", cobj{"reason": "not now"}), http.StatusOK, "")
		agEventTypes(t, e, str(rej, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.REJECTED")

		// Past five minutes: the sweep fails it EXPIRED; it can no longer be approved.
		late := submit()
		svc := e.srv.AgentService()
		move(agTime(t, late, "expiresAt").Add(-time.Second))
		if n, err := svc.ExpireDue(context.Background(), 100); err != nil || n != 0 {
			t.Fatalf("expired %d before its five minutes (%v)", n, err)
		}
		move(agTime(t, late, "expiresAt"))
		if n, err := svc.ExpireDue(context.Background(), 100); err != nil || n != 1 {
			t.Fatalf("expired %d (%v)", n, err)
		}
		got = a.must(t, http.StatusOK, "GET", "/agents/me/actions/"+str(late, "id"), nil)
		if got["status"] != "FAILED" || got["failureReason"] != "EXPIRED" {
			t.Fatalf("R-AGENT-15: expired action %v", got)
		}
		agEventTypes(t, e, str(late, "id"), "AGENT_ACTION.PENDING_APPROVAL", "AGENT_ACTION.FAILED")
		expect(t, e.do("POST", "/agents/"+agentID+"/actions/"+str(late, "id")+"/approve", nil), http.StatusConflict, "CONFLICT")

		// Approved after its five minutes but before the sweep: FAILED EXPIRED, no card.
		slow := submit()
		move(agTime(t, slow, "expiresAt").Add(time.Second))
		r = e.do("POST", "/agents/"+agentID+"/actions/"+str(slow, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t); got["status"] != "FAILED" || got["failureReason"] != "EXPIRED" || got["card"] != nil {
			t.Fatalf("late approval %v", got)
		}
		if l := a.must(t, http.StatusOK, "GET", "/agents/me/cards", nil); l["totalCount"] != float64(1) {
			t.Fatalf("a rejected or expired action issued a card: %v", l)
		}
		// The policy counted the approved card only.
		if me := a.must(t, http.StatusOK, "GET", "/agents/me", nil); me["usage"].(map[string]any)["dailySpend"] != float64(6_000) {
			t.Fatalf("usage %v", me["usage"])
		}
	})
}

func agTime(t *testing.T, m map[string]any, field string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, str(m, field))
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	return at
}

// R-AGENT-38, R-AGENT-37: each missing precondition is refused with its own
// code and stores nothing: no MANAGE_CARDS (403), no ACTIVE delegated key of
// the agent (409 AGENT_DELEGATED_KEY_REQUIRED), a policy in another currency
// (409 AGENT_POLICY_CURRENCY_NOT_USD), an unverified customer (400
// CARDHOLDER_KYC_NOT_APPROVED); another customer's account is 404, over the
// policy's limit is 403 with details.limit, a paused agent is 403.
func TestAgents_PurchaseCardPreconditions_R_AGENT_38(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, agentID, _, usd := e.agCardFixture(t, 100_000, agPolicy(50_000, 20_000, 30_000, agCardPerms...), false)
		none := func(who *agentClient) {
			t.Helper()
			if l := who.must(t, http.StatusOK, "GET", "/agents/me/cards", nil); l["totalCount"] != float64(0) {
				t.Fatalf("a refused issuance stored a card: %v", l)
			}
			if l := who.must(t, http.StatusOK, "GET", "/agents/me/actions", nil); l["totalCount"] != float64(0) {
				t.Fatalf("a refused issuance stored an action: %v", l)
			}
		}
		body := agCardBody("SINGLE_USE", 1_000, usd)
		// No active delegated key.
		expect(t, a.do("POST", "/agents/me/cards", body), http.StatusConflict, "AGENT_DELEGATED_KEY_REQUIRED")
		none(a)
		keyID := e.agDelegate(t, str(a.must(t, http.StatusOK, "GET", "/agents/me", nil), "customerId"), agentID)
		// Policy limits apply to the issuance amount as to a payment.
		r := a.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 20_001, usd))
		expect(t, r, http.StatusForbidden, "FORBIDDEN")
		if d, _ := r.JSON(t)["details"].(map[string]any); d["limit"] != "perTransactionLimit" {
			t.Fatalf("details %v", r.JSON(t)["details"])
		}
		none(a)
		a.agIssue(t, "SINGLE_USE", 20_000, usd)
		r = a.do("POST", "/agents/me/cards", agCardBody("MERCHANT_LOCKED", 10_001, usd)) // 30_000 a day
		expect(t, r, http.StatusForbidden, "FORBIDDEN")
		// Bad input: 400 naming each field, nothing stored.
		r = a.do("POST", "/agents/me/cards", cobj{"kind": "REUSABLE", "currency": "EUR", "amount": 0, "sourceAccountId": "x"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		// A revoked key is no key.
		c := e.wlClient(t, str(a.must(t, http.StatusOK, "GET", "/agents/me", nil), "customerId"))
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+keyID, nil), http.StatusNoContent, "")
		expect(t, a.do("POST", "/agents/me/cards", body), http.StatusConflict, "AGENT_DELEGATED_KEY_REQUIRED")

		// Without MANAGE_CARDS every card route is 403.
		noCards, _, _, usd2 := e.agCardFixture(t, 0, agPolicy(50_000, 20_000, 1_000_000, "CREATE_QUOTES"), true)
		expect(t, noCards.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, usd2)), http.StatusForbidden, "FORBIDDEN")
		expect(t, noCards.do("GET", "/agents/me/cards", nil), http.StatusForbidden, "FORBIDDEN")
		// The permission is checked before anything else is read.
		expect(t, noCards.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, usd)), http.StatusForbidden, "FORBIDDEN")

		// A policy in EUR cannot issue USD purchase cards.
		eurPolicy := agPolicy(50_000, 20_000, 1_000_000, agCardPerms...)
		eurPolicy["spendingLimits"].(cobj)["currency"] = "EUR"
		eurPolicy["approvalThresholds"].(cobj)["currency"] = "EUR"
		eurAgent, _, _, usd3 := e.agCardFixture(t, 0, eurPolicy, true)
		expect(t, eurAgent.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, usd3)), http.StatusConflict, "AGENT_POLICY_CURRENCY_NOT_USD")
		none(eurAgent)
		expect(t, eurAgent.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, usd)), http.StatusConflict, "AGENT_POLICY_CURRENCY_NOT_USD")

		// An unverified customer.
		pending, pusd := e.agCardCustomer(t, "Test User 001")
		if e.custStatus(t, pending) != "PENDING" {
			t.Fatal("customer not PENDING")
		}
		pAgent, pCode := e.agCreate(t, pending, agPolicy(50_000, 20_000, 1_000_000, agCardPerms...))
		pa := e.agInstall(t, pCode)
		e.agDelegate(t, pending, str(pAgent, "id"))
		expect(t, pa.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, pusd)), http.StatusBadRequest, "CARDHOLDER_KYC_NOT_APPROVED")
		none(pa)
		// Another customer's account: 404.
		expect(t, pa.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, usd)), http.StatusNotFound, "ACCOUNT_NOT_FOUND")

		// A paused agent is refused.
		expect(t, e.do("PATCH", "/agents/"+agentID, cobj{"isPaused": true}), http.StatusOK, "")
		expect(t, a.do("POST", "/agents/me/cards", body), http.StatusForbidden, "FORBIDDEN")
		expect(t, a.do("GET", "/agents/me/cards", nil), http.StatusForbidden, "FORBIDDEN")
	})
}

// R-AGENT-40: GET /agents/me/cards lists only the agent's own cards; a card
// the platform issued, or another agent's, is 404 to GET, PATCH, DELETE and
// reveal, and stays as it was.
func TestAgents_CardsAreTheAgentsOwn_R_AGENT_40(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, _, cust, usd := e.agCardFixture(t, 100_000, agPolicy(50_000, 20_000, 1_000_000, agCardPerms...), true)
		mine := a.agCardActive(t, "SINGLE_USE", 1_000, usd)
		platformCard := e.cdActive(t, cust, usd)["id"].(string)
		other, _, _, ousd := e.agCardFixture(t, 100_000, agPolicy(50_000, 20_000, 1_000_000, agCardPerms...), true)
		theirs := str(other.agIssue(t, "MERCHANT_LOCKED", 1_000, ousd)["card"].(map[string]any), "id")
		list := a.must(t, http.StatusOK, "GET", "/agents/me/cards", nil)
		data := list["data"].([]any)
		if list["totalCount"] != float64(1) || len(data) != 1 || str(data[0].(map[string]any)["card"].(map[string]any), "id") != mine {
			t.Fatalf("R-AGENT-40: list %v", list)
		}
		for _, id := range []string{platformCard, theirs, "Card:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c", "nonsense"} {
			expect(t, a.do("GET", "/agents/me/cards/"+id, nil), http.StatusNotFound, "NOT_FOUND")
			expect(t, a.do("PATCH", "/agents/me/cards/"+id, cobj{"status": "FROZEN"}), http.StatusNotFound, "NOT_FOUND")
			expect(t, a.do("DELETE", "/agents/me/cards/"+id, nil), http.StatusNotFound, "NOT_FOUND")
			expect(t, a.do("POST", "/agents/me/cards/"+id+"/reveal", nil), http.StatusNotFound, "NOT_FOUND")
		}
		if st := e.cdGet(t, platformCard)["status"]; st != "ACTIVE" {
			t.Fatalf("the platform's card became %v", st)
		}
		if c := e.cdGet(t, mine); c["agentId"] != str(a.must(t, http.StatusOK, "GET", "/agents/me", nil), "id") {
			t.Fatalf("the platform sees agentId %v on the agent's card", c["agentId"])
		}
	})
}

// R-AGENT-41, R-AGENT-42: PATCH only tightens (lower limits, fewer allowed
// or more blocked categories) or freezes: 200; raising or removing a limit,
// widening a list or unfreezing is 403 and changes nothing. DELETE closes
// the card, and GET then shows CLOSED.
func TestAgents_CardPatchTightensOnly_R_AGENT_41_R_AGENT_42(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, _, _, usd := e.agCardFixture(t, 100_000, agPolicy(50_000, 20_000, 1_000_000, agCardPerms...), true)
		id := a.agCardActive(t, "MERCHANT_LOCKED", 5_000, usd)
		path := "/agents/me/cards/" + id
		card := func() map[string]any { return a.agCardGet(t, id)["card"].(map[string]any) }
		// Tighten: 200.
		got := a.must(t, http.StatusOK, "PATCH", path, cobj{"maxSpendPerTransaction": 4_000, "maxSpendPerDay": 8_000,
			"blockedMccs": []string{"5812"}, "allowedMccs": []string{"5251", "5943"}})
		if c := got["card"].(map[string]any); c["maxSpendPerTransaction"] != float64(4_000) || c["maxSpendPerDay"] != float64(8_000) ||
			got["spendLimit"].(map[string]any)["amount"] != float64(4_000) || !slices.Contains(got["effectiveBlockedMccs"].([]any), any("5812")) {
			t.Fatalf("R-AGENT-41: tightened card %v", got)
		}
		a.must(t, http.StatusOK, "PATCH", path, cobj{"allowedMccs": []string{"5251"}, "blockedMccs": []string{"5812", "5813"}})
		before := card()
		// Loosen: 403, nothing changes.
		for _, body := range []cobj{
			{"maxSpendPerTransaction": 4_001},
			{"maxSpendPerTransaction": nil},
			{"maxSpendPerDay": 9_000},
			{"maxSpendPerDay": nil},
			{"allowedMccs": []string{"5251", "5999"}},
			{"allowedMccs": nil},
			{"blockedMccs": []string{"5812"}},
			{"blockedMccs": nil},
			{"maxSpendPerTransaction": 100, "maxSpendPerDay": 100_000},
		} {
			r := a.do("PATCH", path, body)
			expect(t, r, http.StatusForbidden, "FORBIDDEN")
			if after := card(); !agSameCard(before, after) {
				t.Fatalf("R-AGENT-41: refused %v changed the card: %v -> %v", body, before, after)
			}
		}
		// The agent cannot touch what is not its to change.
		expect(t, a.do("PATCH", path, cobj{"fundingSource": usd}), http.StatusBadRequest, "INVALID_INPUT")
		// Freeze: 200; unfreeze: refused.
		if st := a.must(t, http.StatusOK, "PATCH", path, cobj{"status": "FROZEN"})["card"].(map[string]any)["status"]; st != "FROZEN" {
			t.Fatalf("R-AGENT-41: freeze gave %v", st)
		}
		expect(t, a.do("PATCH", path, cobj{"status": "ACTIVE"}), http.StatusForbidden, "FORBIDDEN")
		if st := card()["status"]; st != "FROZEN" {
			t.Fatalf("R-AGENT-41: refused unfreeze left %v", st)
		}
		// R-AGENT-42: DELETE closes; GET shows CLOSED.
		closed := a.must(t, http.StatusOK, "DELETE", path, nil)
		if closed["card"].(map[string]any)["status"] != "CLOSED" || card()["status"] != "CLOSED" {
			t.Fatalf("R-AGENT-42: %v", closed)
		}
		expect(t, a.do("DELETE", path, nil), http.StatusConflict, "CARD_ALREADY_CLOSED")
		expect(t, a.do("PATCH", path, cobj{"maxSpendPerTransaction": 1}), http.StatusConflict, "CARD_NOT_MUTABLE")
		if evs := e.cdStatusEvents(t, id); !slices.Equal(evs, []string{"ACTIVE", "FROZEN", "CLOSED"}) {
			t.Fatalf("events %v", evs)
		}
	})
}

// agSameCard compares what PATCH could change.
func agSameCard(a, b map[string]any) bool {
	for _, k := range []string{"status", "maxSpendPerTransaction", "maxSpendPerDay", "maxTransactionsPerDay", "updatedAt"} {
		if a[k] != b[k] {
			return false
		}
	}
	return slices.Equal(a["allowedMccs"].([]any), b["allowedMccs"].([]any)) &&
		slices.Equal(a["blockedMccs"].([]any), b["blockedMccs"].([]any))
}

// R-AGENT-43: reveal returns the hosted reveal page's short-lived signed
// single-use URL, and each reveal is a durable audit entry with the agent
// as actor (read back through the service, as the platform's audit does).
func TestAgents_CardRevealAudited_R_AGENT_43(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, agentID, _, usd := e.agCardFixture(t, 100_000, agPolicy(50_000, 20_000, 1_000_000, agCardPerms...), true)
		id := a.agCardActive(t, "SINGLE_USE", 1_000, usd)
		r := a.do("POST", "/agents/me/cards/"+id+"/reveal", nil)
		expect(t, r, http.StatusOK, "")
		out := r.JSON(t)
		u := str(out, "panEmbedUrl")
		exp := agTime(t, out, "expiresAt")
		if !strings.Contains(u, "/card-pages/reveal?t=") || r.Header.Get("Cache-Control") != "no-store" ||
			exp.Sub(time.Now()) > 5*time.Minute+time.Second || !exp.After(time.Now()) {
			t.Fatalf("R-AGENT-43: %v (%s)", out, r.Header.Get("Cache-Control"))
		}
		// The link opens the existing reveal page once (its token is single-use).
		page := func() int {
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, httptest.NewRequest("GET", u[strings.Index(u, "/card-pages"):], nil))
			return rec.Code
		}
		if first, second := page(), page(); first != http.StatusOK || second != http.StatusGone {
			t.Fatalf("reveal page loads %d then %d", first, second)
		}
		audit, err := e.srv.AgentService().CardAudit(context.Background(), e.acTenant(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(audit) != 1 || audit[0].ActorType != "AGENT" || audit[0].ActorID != agentID || audit[0].Action != "REVEAL" ||
			audit[0].CardID != id || audit[0].ExpiresAt == nil || !audit[0].ExpiresAt.Equal(exp) {
			t.Fatalf("R-AGENT-43: audit %+v", audit)
		}
		// A refused reveal (closed card) records nothing.
		a.must(t, http.StatusOK, "DELETE", "/agents/me/cards/"+id, nil)
		expect(t, a.do("POST", "/agents/me/cards/"+id+"/reveal", nil), http.StatusConflict, "CARD_NOT_MUTABLE")
		if audit, _ := e.srv.AgentService().CardAudit(context.Background(), e.acTenant(), id); len(audit) != 1 {
			t.Fatalf("audit after a refused reveal: %+v", audit)
		}
	})
}

// R-AGENT-38: the agent's delegated key is what makes a card funded by the
// customer's embedded wallet usable: issued from the wallet it becomes
// ACTIVE and pays from it; once the key is revoked the card waits for
// delegation (PENDING_AUTH) and no new card is issued.
func TestAgents_WalletFundedPurchaseCardUsesTheAgentKey_R_AGENT_38(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, agentID, cust, _ := e.agCardFixture(t, 0, agPolicy(50_000, 20_000, 1_000_000, agCardPerms...), false)
		keyID := e.agDelegate(t, cust, agentID)
		wallet := e.wlWallet(t, cust)["id"].(string)
		e.acFund(t, wallet, 50_000_000)
		id := a.agCardActive(t, "SINGLE_USE", 2_000, wallet)
		x := e.cdAuth(t, id, 1_500)
		if x["status"] != "AUTHORIZED" {
			t.Fatalf("wallet-funded agent card authorization %v", x)
		}
		if b := e.cdBalance(t, wallet); b.Available != 50_000_000-15_000_000 { // 15.00 USD held in USDB units
			t.Fatalf("wallet balance %+v", b)
		}
		expect(t, e.do("DELETE", "/auth/delegated-keys/"+keyID, nil), http.StatusNoContent, "")
		c := a.agCardGet(t, id)["card"].(map[string]any)
		if c["status"] != "PENDING_AUTH" || c["statusReason"] != "DELEGATION_REQUIRED" {
			t.Fatalf("after the agent key's revocation the card is %v (%v)", c["status"], c["statusReason"])
		}
		expect(t, a.do("POST", "/agents/me/cards", agCardBody("SINGLE_USE", 1_000, wallet)), http.StatusConflict, "AGENT_DELEGATED_KEY_REQUIRED")
	})
}

// R-AGENT-39, R-AGENT-38: the preconditions hold at approval too: an action
// approved after the agent's key was revoked fails with
// AGENT_DELEGATED_KEY_REQUIRED and issues nothing.
func TestAgents_PurchaseCardApprovalRechecksTheKey_R_AGENT_39(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		a, agentID, cust, usd := e.agCardFixture(t, 0, agPolicy(5000, 20_000, 1_000_000, agCardPerms...), false)
		keyID := e.agDelegate(t, cust, agentID)
		act := a.must(t, http.StatusAccepted, "POST", "/agents/me/cards", agCardBody("MERCHANT_LOCKED", 6_000, usd))
		expect(t, e.do("DELETE", "/auth/delegated-keys/"+keyID, nil), http.StatusNoContent, "")
		r := e.do("POST", "/agents/"+agentID+"/actions/"+str(act, "id")+"/approve", nil)
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t); got["status"] != "FAILED" || got["failureReason"] != "AGENT_DELEGATED_KEY_REQUIRED" || got["card"] != nil {
			t.Fatalf("approval without a key: %v", got)
		}
		if l := a.must(t, http.StatusOK, "GET", "/agents/me/cards", nil); l["totalCount"] != float64(0) {
			t.Fatalf("a failed approval issued a card: %v", l)
		}
		if me := a.must(t, http.StatusOK, "GET", "/agents/me", nil); me["usage"].(map[string]any)["dailySpend"] != float64(0) {
			t.Fatalf("a failed approval counted: %v", me["usage"])
		}
	})
}
