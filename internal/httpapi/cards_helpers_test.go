package httpapi

import (
	"context"
	"crypto/rand"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// cdFast makes the sandbox issuer answer within 50ms, so tests watch cards
// provision without waiting seconds.
func (e *env) cdFast() {
	e.srv.CardService().Issuer = cards.EnvIssuers{Sandbox: cards.SandboxIssuer{Latency: 50 * time.Millisecond},
		Production: cards.ProductionIssuer{}}
}

// cdSetup supports USD, skips verification paperwork so that "Test User"
// customers are APPROVED at once, and returns an APPROVED customer with its
// USD account.
func (e *env) cdSetup(t *testing.T) (customerID, usdAccount string) {
	t.Helper()
	e.cdFast()
	e.acSupport(t, "USD", "EUR")
	e.custSkipPaperwork(t, true)
	return e.cdCustomer(t)
}

// cdCustomer makes another APPROVED customer and returns it with its USD
// account.
func (e *env) cdCustomer(t *testing.T) (string, string) {
	t.Helper()
	c := e.custCreate(t, custIndividual("Test User"))
	if c["kycStatus"] != "APPROVED" {
		t.Fatalf("customer %v, want APPROVED", c["kycStatus"])
	}
	id := c["id"].(string)
	return id, e.acAccount(t, id, "USD")["id"].(string)
}

// cdIssue issues a card (a fresh Idempotency-Key each time) and answers the
// response.
func (e *env) cdIssue(body cobj, opts ...reqOpt) resp {
	return e.do("POST", "/cards", body, append([]reqOpt{withHeader("Idempotency-Key", "card-"+rand.Text())}, opts...)...)
}

// cdCard issues a card that must succeed and returns it.
func (e *env) cdCard(t *testing.T, customerID, accountID string, extra ...any) map[string]any {
	t.Helper()
	body := cobj{"customerId": customerID, "fundingSource": accountID}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	r := e.cdIssue(body)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// cdGet reads a card.
func (e *env) cdGet(t *testing.T, cardID string) map[string]any {
	t.Helper()
	r := e.do("GET", "/cards/"+cardID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// cdWait polls a card until it has status, for up to ten seconds.
func (e *env) cdWait(t *testing.T, cardID, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := e.cdGet(t, cardID)
		if c["status"] == status {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("card %s is %v, waited for %s", cardID, c["status"], status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cdActive issues a USD card and waits until it is ACTIVE.
func (e *env) cdActive(t *testing.T, customerID, accountID string, extra ...any) map[string]any {
	t.Helper()
	c := e.cdCard(t, customerID, accountID, extra...)
	return e.cdWait(t, c["id"].(string), "ACTIVE")
}

// cdPatch patches a card.
func (e *env) cdPatch(cardID string, body any) resp {
	return e.do("PATCH", "/cards/"+cardID, body)
}

// cdSetStatus forces a card's status in the store (to walk transitions from
// a given status).
func (e *env) cdSetStatus(t *testing.T, cardID, status string) {
	t.Helper()
	ctx := context.Background()
	err := e.db.InTx(ctx, func(tx *store.Tx) error {
		c, err := tx.GetCard(ctx, e.acTenant(), cardID, true)
		if err != nil {
			return err
		}
		c.Status, c.StatusReason = status, ""
		return tx.UpdateCard(ctx, c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cdStatusEvents lists the card.status_change events of a card, as the
// statuses they announce.
func (e *env) cdStatusEvents(t *testing.T, cardID string) []string {
	t.Helper()
	var out []string
	for _, ev := range e.acEvents(t, cardID) {
		if ev["type"] == "card.status_change" {
			out = append(out, ev["data"].(map[string]any)["status"].(string))
		}
	}
	return out
}

// panLike finds a run of 13 to 19 digits standing on its own (not inside a
// longer word such as a hex identifier or base64 text, where random digit
// runs occur): no body may carry a card number.
var panLike = regexp.MustCompile(`(^|[^0-9A-Za-z+/])[0-9]{13,19}($|[^0-9A-Za-z+/=])`)

// cdNoPAN fails if a body carries a PAN-like digit run, a CVV field or a
// reveal URL (R-CARD-28).
func cdNoPAN(t *testing.T, body []byte) {
	t.Helper()
	if m := panLike.Find(body); m != nil {
		t.Fatalf("a body carries a PAN-like number: %s", body)
	}
	for _, f := range []string{`"cvv"`, `"cvc"`, `"pan"`, `"panEmbedUrl"`, `"cardNumber"`} {
		if regexp.MustCompile(`(?i)` + f).Match(body) {
			t.Fatalf("a body carries %s: %s", f, body)
		}
	}
}

// cdFixtureCard stores a card of customerID funded by accountID directly
// (no KYC check, no issuer): for tests of other capabilities that need a
// real card, such as delegated keys of a wallet's customer.
func (e *env) cdFixtureCard(t *testing.T, customerID, accountID, status string) string {
	t.Helper()
	ctx := context.Background()
	now := e.db.Now().UTC().Truncate(time.Microsecond)
	c := store.Card{ID: id.New(id.Card), Tenant: e.acTenant(), CustomerID: customerID, PlatformCardID: "fixture",
		Status: status, Form: "VIRTUAL", Brand: "VISA", Currency: "USD", FundingSource: accountID,
		FundingBindingID: id.New(id.CardFundingSource), Last4: "4242", ExpMonth: 11, ExpYear: 2029,
		AllowedMCCs: []string{}, BlockedMCCs: []string{}, CreatedAt: now, UpdatedAt: now}
	if err := e.db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCard(ctx, c, "4242424242424242") }); err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// cdAgentFixtureCard stores an agent's purchase card of kind, like
// cdFixtureCard (to walk the transitions of agents' cards).
func (e *env) cdAgentFixtureCard(t *testing.T, customerID, accountID, status, kind string) string {
	t.Helper()
	ctx := context.Background()
	now := e.db.Now().UTC().Truncate(time.Microsecond)
	c := store.Card{ID: id.New(id.Card), Tenant: e.acTenant(), CustomerID: customerID, PlatformCardID: "agent-fixture",
		Status: status, Form: "VIRTUAL", Brand: "VISA", Currency: "USD", FundingSource: accountID,
		FundingBindingID: id.New(id.CardFundingSource), Last4: "4242", ExpMonth: 11, ExpYear: 2029,
		AllowedMCCs: []string{}, BlockedMCCs: []string{}, AgentID: "Agent:fixture", AgentKind: kind, CreatedAt: now, UpdatedAt: now}
	if err := e.db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCard(ctx, c, "4242424242424242") }); err != nil {
		t.Fatal(err)
	}
	return c.ID
}
