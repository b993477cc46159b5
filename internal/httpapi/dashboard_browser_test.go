package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/browsertest"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The dashboard in a real headless browser (Debian's chromium, driven with
// chromedp): what an operator does, click by click. CI installs chromium
// (.ci/run); elsewhere the test is skipped when chromium is missing
// (internal/browsertest).
//
// DASHBOARD_SCREENSHOTS=dir writes screenshots of the main pages there
// (docs/dashboard holds the published ones).

// browser starts a headless chromium whose dialogs (data-confirm) are
// accepted.
func browser(t *testing.T) context.Context {
	t.Helper()
	ctx := browsertest.New(t, chromedp.WindowSize(1280, 900))
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	return ctx
}

func run(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// mainText is the text of the page's main element.
func mainText(t *testing.T, ctx context.Context) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	s, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	return s
}

func shoot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("DASHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor reloads path until its main text holds want.
func waitFor(t *testing.T, ctx context.Context, url, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		run(t, ctx, "open "+url, chromedp.Navigate(url))
		text := mainText(t, ctx)
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q:\n%s", url, want, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestDashboard_InABrowser(t *testing.T) {
	ctx := browser(t)
	railsFactorZero(t) // rail steps run at once, by the node's own runner
	e := newEnv(t, storetest.OpenSQLite(t), Options{})
	base := e.dashServe(t)

	// A webhook receiver that fails until told to recover.
	var failing atomic.Bool
	failing.Store(true)
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "receiver down for maintenance", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hooks.Close)

	// Data: a customer whose ACH payout is returned (FAILED, refunded) and an
	// incoming payment that waits for the platform's approval.
	a, _ := e.qtSetup(t)
	expect(t, e.do("PATCH", "/config", cobj{"webhookEndpoint": hooks.URL + "/hooks"}), http.StatusOK, "")
	src := e.qtAccountID(t, a, "USD")
	expect(t, e.do("POST", "/sandbox/internal-accounts/"+src+"/fund", cobj{"amount": 1_000_000}), http.StatusOK, "")
	ext := e.eaCreate(t, "/customers/external-accounts", eaUSD(a, "123456789"))["id"].(string)
	q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
		"destination":        cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": "ACH"},
		"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 20_906, "immediatelyExecute": true})
	payout := q["transactionId"].(string)
	incoming := e.do("POST", "/sandbox/incoming-payments", cobj{"accountId": src, "amount": 5_907}).JSON(t)["id"].(string)

	id, secret, _ := strings.Cut(e.sandbox, ":")
	run(t, ctx, "sign in", chromedp.Navigate(base+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS("#clientId")),
		chromedp.SendKeys(chromedp.CSS("#clientId"), id),
		chromedp.SendKeys(chromedp.CSS("#clientSecret"), secret),
		chromedp.Click(chromedp.CSS("main form button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("form.signout")))
	if text := mainText(t, ctx); !strings.Contains(text, "Today by status") {
		t.Fatalf("overview: %s", text)
	}

	// Find the customer by id, then follow the failed payout.
	run(t, ctx, "search the customer", chromedp.Navigate(base+"/dashboard/customers"),
		chromedp.SendKeys(chromedp.CSS("#q"), a),
		chromedp.Submit(chromedp.CSS("#q")),
		chromedp.WaitVisible(chromedp.CSS("dl.facts")))
	if text := mainText(t, ctx); !strings.Contains(text, a) || !strings.Contains(text, "Latest transactions") {
		t.Fatalf("search did not lead to the customer:\n%s", text)
	}
	waitFor(t, ctx, base+"/dashboard/transactions/"+payout, "PAYOUT_RETURNED")
	run(t, ctx, "from the customer to the payout", chromedp.Navigate(base+"/dashboard/customers/"+a),
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/transactions/`+payout+`"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ol.timeline`)))
	text := mainText(t, ctx)
	for _, want := range []string{"FAILED", "Refund", "OUTGOING_PAYMENT", "HOLD", "balanced", "Balances equal postings", "equal"} {
		if !strings.Contains(text, want) {
			t.Errorf("payout page lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "unbalanced") || strings.Contains(text, "differ") {
		t.Errorf("payout page reports a ledger mismatch:\n%s", text)
	}
	shoot(t, ctx, "transaction")

	// A failing webhook: its attempts, then a redelivery once it recovers.
	events := e.do("GET", "/events?resourceId="+payout, nil).JSON(t)["data"].([]any)
	eventID := events[0].(map[string]any)["id"].(string)
	waitFor(t, ctx, base+"/dashboard/events/"+eventID, "503")
	shoot(t, ctx, "event")
	failing.Store(false)
	run(t, ctx, "redeliver", chromedp.Click(chromedp.CSS(`form[action$="/redeliver"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	waitFor(t, ctx, base+"/dashboard/events/"+eventID, "DELIVERED")

	// Approve the incoming payment that waits for the platform.
	run(t, ctx, "approve", chromedp.Navigate(base+"/dashboard/transactions/"+incoming),
		chromedp.Click(chromedp.CSS(`form[action$="/approve"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	if x := e.do("GET", "/transactions/"+incoming, nil).JSON(t); x["status"] != "COMPLETED" {
		t.Fatalf("approved incoming payment is %v", x["status"])
	}

	// Create a token (its secret shown once), then revoke it.
	run(t, ctx, "create a token", chromedp.Navigate(base+"/dashboard/tokens"),
		chromedp.SendKeys(chromedp.CSS("#name"), "made in the browser"),
		chromedp.Click(chromedp.CSS(`input[value="VIEW"]`)),
		chromedp.Submit(chromedp.CSS("#name")),
		chromedp.WaitVisible(chromedp.CSS("#client-secret")))
	secretShown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#client-secret")))
	if err != nil {
		t.Fatal(err)
	}
	if len(secretShown) < 20 {
		t.Fatalf("secret shown: %q", secretShown)
	}
	run(t, ctx, "revoke it", chromedp.Navigate(base+"/dashboard/tokens"),
		chromedp.Click(chromedp.Search(`//tr[td[text()="made in the browser"]]//button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	if text := mainText(t, ctx); strings.Contains(text, "made in the browser") {
		t.Error("revoked token still listed")
	}

	// An agent's transfer above its approval threshold, approved from the queue.
	e.acSupport(t, "USD", "EUR")
	eur := e.qtAccountID(t, a, "EUR")
	agent, code := e.agCreate(t, a, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
	bot := e.agInstall(t, code)
	pending := bot.execute(t, str(bot.quote(t, src, eur, 6_000), "id"))
	if pending["status"] != "PENDING_APPROVAL" {
		t.Fatalf("agent action %v", pending)
	}
	run(t, ctx, "approve the agent's action", chromedp.Navigate(base+"/dashboard/approvals"),
		chromedp.Click(chromedp.CSS(`form[action$="/`+str(pending, "id")+`/approve"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	for _, d := range e.do("GET", "/agents/approvals?agentId="+str(agent, "id"), nil).JSON(t)["data"].([]any) {
		if act := d.(map[string]any); str(act, "id") == str(pending, "id") && act["status"] != "APPROVED" {
			t.Fatalf("the approved action is %v", act["status"])
		}
	}
	if got := e.qtBalance(t, a, "EUR"); got <= 0 {
		t.Fatalf("EUR balance %d after the approved transfer", got)
	}
	shoot(t, ctx, "approvals")

	// A card frozen from its page.
	e.cdFast()
	e.custSkipPaperwork(t, true)
	holder, holderUSD := e.cdCustomer(t)
	cardID := str(e.cdActive(t, holder, holderUSD), "id")
	run(t, ctx, "freeze the card", chromedp.Navigate(base+"/dashboard/cards/"+cardID),
		chromedp.Click(chromedp.CSS(`form[action$="/freeze"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.flash`)))
	if c := e.cdGet(t, cardID); c["status"] != "FROZEN" {
		t.Fatalf("card is %v after freezing", c["status"])
	}
	if text := mainText(t, ctx); !strings.Contains(text, "FROZEN") || !strings.Contains(text, "Unfreeze") {
		t.Errorf("card page after freezing:\n%s", text)
	}
	shoot(t, ctx, "card")

	// Today's overview counts what happened.
	run(t, ctx, "overview", chromedp.Navigate(base+"/dashboard/"), chromedp.WaitVisible(chromedp.CSS("main")))
	if text := mainText(t, ctx); !strings.Contains(text, "FAILED") || !strings.Contains(text, "COMPLETED") || !strings.Contains(text, "USD") {
		t.Errorf("overview lacks today's statuses or volume:\n%s", text)
	}

	// The remaining pages, for the screenshots.
	for name, path := range map[string]string{"overview": "/", "customers": "/customers", "customer": "/customers/" + a,
		"account": "/accounts/" + src, "webhooks": "/webhooks", "tokens": "/tokens"} {
		run(t, ctx, "open "+name, chromedp.Navigate(base+"/dashboard"+path), chromedp.WaitVisible(chromedp.CSS("main")))
		shoot(t, ctx, name)
	}
	e.acAudit(t)
}
