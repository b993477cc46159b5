package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// R-CARD-01, R-CARD-05, R-CARD-06, R-CARD-09, R-CARD-25, R-CARD-26,
// R-CARD-27, R-CARD-28: a card issued to an APPROVED customer starts
// PROCESSING, becomes ACTIVE when the sandbox issuer provisions it, with one
// card.status_change; its body has the card fields and never the number.
func TestCards_IssueAndProvision_R_CARD_01_R_CARD_05_R_CARD_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd := e.cdSetup(t)
		r := e.cdIssue(cobj{"customerId": cust, "fundingSource": usd, "platformCardId": "emp-001", "maxSpendPerDay": 5000})
		expect(t, r, http.StatusCreated, "")
		cdNoPAN(t, r.Body) // R-CARD-28
		c := r.JSON(t)
		id := c["id"].(string)
		if !strings.HasPrefix(id, "Card:") || c["status"] != "PROCESSING" { // R-CARD-01, R-CARD-05, R-CONV-02
			t.Fatalf("issued %v %v", id, c["status"])
		}
		active := e.cdWait(t, id, "ACTIVE") // R-CARD-06
		// R-CARD-25: the fields and enums.
		for _, f := range []string{"id", "customerId", "status", "statusReason", "form", "fundingSource", "maxSpendPerTransaction",
			"maxSpendPerDay", "maxTransactionsPerDay", "createdAt", "updatedAt", "platformCardId", "brand", "last4", "expMonth",
			"expYear", "currency", "processorRef", "issuerRef", "cardCapabilities", "allowedMccs", "blockedMccs", "defaultMccBlocksLifted"} {
			if _, ok := active[f]; !ok {
				t.Errorf("card lacks %s", f)
			}
		}
		if active["form"] != "VIRTUAL" || active["customerId"] != cust || active["fundingSource"] != usd ||
			active["platformCardId"] != "emp-001" || active["currency"] != "USD" || active["statusReason"] != nil {
			t.Fatalf("card %v", active)
		}
		// R-CARD-26: limits are positive integers or null.
		if active["maxSpendPerDay"] != float64(5000) || active["maxSpendPerTransaction"] != nil {
			t.Fatalf("limits %v %v", active["maxSpendPerDay"], active["maxSpendPerTransaction"])
		}
		// R-CARD-27: capabilities are booleans.
		for k, v := range active["cardCapabilities"].(map[string]any) {
			if _, ok := v.(bool); !ok {
				t.Fatalf("capability %s = %v", k, v)
			}
		}
		// R-CARD-27: the funding account reports its program's capabilities.
		if caps := e.acAccount(t, cust, "USD")["cardCapabilities"].(map[string]any); caps["supportsSpendLimits"] != true ||
			caps["supports3dSecurePassword"] != false {
			t.Fatalf("R-CARD-27: account capabilities %v", caps)
		}
		for _, path := range []string{"/cards/" + id, "/cards", "/cards?customerId=" + cust} {
			cdNoPAN(t, e.do("GET", path, nil).Body) // R-CARD-28
		}
		// R-CARD-09: one event per transition, none at issuance.
		if got := e.cdStatusEvents(t, id); !slices.Equal(got, []string{"ACTIVE"}) {
			t.Fatalf("status events %v", got)
		}
	})
}

// The card number: on the program's test BIN, passing Luhn, with the card's
// last4; stored only sealed (the column holds no digits of it) and read only
// through SensitiveData.
func TestCards_PANSealedAndReadThroughSensitiveData(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd := e.cdSetup(t)
		c := e.cdCard(t, cust, usd)
		id := c["id"].(string)
		s, err := e.srv.CardService().SensitiveData(context.Background(), e.acTenant(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !cards.LuhnValid(s.PAN) || !strings.HasPrefix(s.PAN, cards.Programs["USD"].BIN) || s.PAN[12:] != c["last4"] ||
			s.ExpiryMonth != int(c["expMonth"].(float64)) || s.ExpiryYear != int(c["expYear"].(float64)) || s.CustomerID != cust {
			t.Fatalf("sensitive data does not match the card %v", c)
		}
		if strings.Contains(e.logs.String(), s.PAN) {
			t.Fatal("the card number was logged")
		}
		// Another tenant's environment does not see it.
		prod := e.acTenant()
		prod.Env = "production"
		if _, err := e.srv.CardService().SensitiveData(context.Background(), prod, id); err == nil {
			t.Fatal("production read a sandbox card")
		}
	})
}

// R-CARD-07: a card the issuer rejects is CLOSED with ISSUER_REJECTED; an
// unreachable issuer is asked again until it provisions the card.
func TestCards_IssuerRejectsAndRetries_R_CARD_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd := e.cdSetup(t)
		rej := e.cdCard(t, cust, usd, "platformCardId", "c1"+cards.SandboxRejectSuffix)
		closed := e.cdWait(t, rej["id"].(string), "CLOSED")
		if closed["statusReason"] != "ISSUER_REJECTED" {
			t.Fatalf("rejected card %v", closed["statusReason"])
		}
		if got := e.cdStatusEvents(t, rej["id"].(string)); !slices.Equal(got, []string{"CLOSED"}) {
			t.Fatalf("events %v", got)
		}
		flaky := e.cdCard(t, cust, usd, "platformCardId", "c2"+cards.SandboxUnavailableSuffix)
		e.cdWait(t, flaky["id"].(string), "ACTIVE")
		if !strings.Contains(e.logs.String(), "card issuer call failed") {
			t.Fatal("no failed issuer call logged")
		}
	})
}

// R-CARD-03: a cardholder whose KYC is not APPROVED gets 400
// CARDHOLDER_KYC_NOT_APPROVED and no card: not a PENDING_KYC one either,
// which Part A never enters (docs/cards.md). R-CARD-25: a PENDING_KYC card
// (as another system might have stored it) is shown with that status and
// cannot transact.
func TestCards_KYCNotApproved_R_CARD_03_R_CARD_25(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, approvedUSD := e.cdSetup(t)
		pending := e.custCreate(t, custIndividual("Test User 001"))["id"].(string)
		if e.custStatus(t, pending) != "PENDING" {
			t.Fatal("customer not PENDING")
		}
		usd := e.acAccount(t, pending, "USD")["id"].(string)
		expect(t, e.cdIssue(cobj{"customerId": pending, "fundingSource": usd}), http.StatusBadRequest, "CARDHOLDER_KYC_NOT_APPROVED")
		if n := e.do("GET", "/cards", nil).JSON(t)["totalCount"]; n != float64(0) {
			t.Fatalf("%v cards", n)
		}
		e.acFund(t, approvedUSD, 1_000)
		waiting := e.cdFixtureCard(t, cust, approvedUSD, "PENDING_KYC")
		if c := e.cdGet(t, waiting); c["status"] != "PENDING_KYC" {
			t.Fatalf("R-CARD-25: %v", c["status"])
		}
		if x := e.cdAuth(t, waiting, 100); x["status"] != "DECLINED" || x["cardDeclinedReason"] != "CARD_NOT_ACTIVE" {
			t.Fatalf("a PENDING_KYC card transacted: %v %v", x["status"], x["cardDeclinedReason"])
		}
	})
}

// R-IDEM-03, R-IDEM-04: POST /cards without an Idempotency-Key is refused
// and issues nothing; a replay with the same key returns the same card and
// issues no second one.
func TestCards_IdempotencyKey_R_IDEM_03_R_IDEM_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd := e.cdSetup(t)
		body := cobj{"customerId": cust, "fundingSource": usd}
		r := e.do("POST", "/cards", body)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT") // R-IDEM-03
		if n := e.do("GET", "/cards", nil).JSON(t)["totalCount"]; n != float64(0) {
			t.Fatalf("R-IDEM-03: %v cards after a refused request", n)
		}
		key := withHeader("Idempotency-Key", "issue-once")
		a := e.do("POST", "/cards", body, key)
		b := e.do("POST", "/cards", body, key)
		expect(t, a, http.StatusCreated, "")
		expect(t, b, http.StatusCreated, "")
		if a.JSON(t)["id"] != b.JSON(t)["id"] { // R-IDEM-04
			t.Fatal("R-IDEM-04: a replay issued another card")
		}
		if n := e.do("GET", "/cards", nil).JSON(t)["totalCount"]; n != float64(1) {
			t.Fatalf("R-IDEM-04: %v cards", n)
		}
	})
}

// R-CARD-04: at the platform's live-card maximum issuing is 409
// CARD_LIMIT_REACHED; a CLOSED card does not count. The maximum is the
// node's configuration (paymentsd --max-live-cards: Options.MaxLiveCards),
// per platform and environment.
func TestCards_LiveCardMaximum_R_CARD_04(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{MaxLiveCards: 2})
		cust, usd := e.cdSetup(t)
		a := e.cdActive(t, cust, usd)
		e.cdCard(t, cust, usd)
		expect(t, e.cdIssue(cobj{"customerId": cust, "fundingSource": usd}), http.StatusConflict, "CARD_LIMIT_REACHED")
		expect(t, e.cdPatch(a["id"].(string), cobj{"status": "CLOSED"}), http.StatusOK, "")
		expect(t, e.cdIssue(cobj{"customerId": cust, "fundingSource": usd}), http.StatusCreated, "")
		expect(t, e.cdIssue(cobj{"customerId": cust, "fundingSource": usd}), http.StatusConflict, "CARD_LIMIT_REACHED")
		if n := e.do("GET", "/cards", nil).JSON(t)["totalCount"]; n != float64(3) {
			t.Fatalf("%v cards after three issued and two refused", n)
		}
	})
}

// Production has no card issuing partner: POST /cards is refused clearly
// with 501 NOT_IMPLEMENTED and nothing is stored.
func TestCards_ProductionIssuerRefuses(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.cdIssue(cobj{"customerId": "Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c",
			"fundingSource": "InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c"}, withCreds(e.production))
		expect(t, r, http.StatusNotImplemented, "NOT_IMPLEMENTED")
	})
}

// R-CARD-04 under concurrency: of many concurrent issues at the cap's edge,
// exactly as many succeed as the cap allows.
func TestCards_LiveCardMaximumConcurrent_R_CARD_04(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{MaxLiveCards: 3})
		cust, usd := e.cdSetup(t)
		const n = 8
		codes := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				codes <- e.cdIssue(cobj{"customerId": cust, "fundingSource": usd}).Status
			})
		}
		wg.Wait()
		close(codes)
		created := 0
		for c := range codes {
			if c == http.StatusCreated {
				created++
			} else if c != http.StatusConflict {
				t.Fatalf("status %d", c)
			}
		}
		if created != 3 || e.do("GET", "/cards", nil).JSON(t)["totalCount"] != float64(3) {
			t.Fatalf("R-CARD-04: %d issued under a cap of 3", created)
		}
	})
}

// Issuance is durable: a card issued while no runner works stays
// PROCESSING with its due time in the database; a runner started later (a
// restarted node: a new service over the same store) provisions it.
func TestCards_IssuanceSurvivesRestart_R_CARD_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd := e.cdSetup(t)
		e.driveByHand() // the node's runner is gone, as if the process died
		id := e.cdCard(t, cust, usd)["id"].(string)
		time.Sleep(100 * time.Millisecond)
		if s := e.cdGet(t, id)["status"]; s != "PROCESSING" {
			t.Fatalf("provisioned without a runner: %v", s)
		}
		next := cards.New(e.db, nil) // the restarted node's service
		next.Issuer = cards.EnvIssuers{Sandbox: cards.SandboxIssuer{Latency: time.Millisecond}, Production: cards.ProductionIssuer{}}
		if n, err := next.RunDue(context.Background()); err != nil || n != 1 {
			t.Fatalf("RunDue %d %v", n, err)
		}
		if s := e.cdGet(t, id)["status"]; s != "ACTIVE" { // R-CARD-06
			t.Fatalf("after restart: %v", s)
		}
		if n, _ := next.RunDue(context.Background()); n != 0 {
			t.Fatalf("provisioned twice: %d", n)
		}
	})
}
