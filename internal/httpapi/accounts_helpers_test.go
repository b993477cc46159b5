package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

const (
	acCustomers = "/customers/internal-accounts"
	acPlatform  = "/platform/internal-accounts"
)

func (e *env) acService() *accounts.Service { return e.srv.accountService() }

// acSupport sets the sandbox platform's supported currencies.
func (e *env) acSupport(t *testing.T, codes ...string) {
	t.Helper()
	var list []string
	for _, c := range codes {
		list = append(list, fmt.Sprintf(`{"currencyCode":%q,"minAmount":1,"maxAmount":100000000000,"enabledTransactionTypes":["INCOMING","OUTGOING"]}`, c))
	}
	expect(t, e.do("PATCH", "/config", `{"supportedCurrencies":[`+strings.Join(list, ",")+`]}`), http.StatusOK, "")
}

// acCustomer creates an individual customer and returns its id.
func (e *env) acCustomer(t *testing.T, opts ...reqOpt) string {
	t.Helper()
	r := e.do("POST", "/customers", custIndividual("Jane Doe"), opts...)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)["id"].(string)
}

// acList reads every page of a list of internal accounts.
func (e *env) acList(t *testing.T, path string, query string, opts ...reqOpt) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.do("GET", path+"?"+q, nil, opts...)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		for _, x := range m["data"].([]any) {
			out = append(out, x.(map[string]any))
		}
		if m["hasMore"] != true {
			if _, ok := m["nextCursor"]; ok {
				t.Fatal("nextCursor on the last page")
			}
			if int(m["totalCount"].(float64)) != len(out) {
				t.Fatalf("totalCount %v, listed %d", m["totalCount"], len(out))
			}
			return out
		}
		cursor = m["nextCursor"].(string)
	}
}

// acAccount returns the owner's provisioned account in a currency (the
// platform's when customerID is "").
func (e *env) acAccount(t *testing.T, customerID, cur string) map[string]any {
	t.Helper()
	path, q := acPlatform, "currency="+cur
	if customerID != "" {
		path, q = acCustomers, "customerId="+customerID+"&currency="+cur
	}
	for _, a := range e.acList(t, path, q) {
		if a["type"] != accounts.TypeRuleBased {
			return a
		}
	}
	t.Fatalf("no %s account for %q", cur, customerID)
	return nil
}

// acRuleBased creates a rule-based account and returns it.
func (e *env) acRuleBased(t *testing.T, body any, opts ...reqOpt) map[string]any {
	t.Helper()
	r := e.do("POST", "/internal-accounts", body, opts...)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// acFund funds an account in sandbox and returns it.
func (e *env) acFund(t *testing.T, accountID string, amount int64) map[string]any {
	t.Helper()
	r := e.do("POST", "/sandbox/internal-accounts/"+accountID+"/fund", cobj{"amount": amount})
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// acAmount reads a CurrencyAmount field.
func acAmount(t *testing.T, m map[string]any, field string) int64 {
	t.Helper()
	ca, ok := m[field].(map[string]any)
	if !ok {
		t.Fatalf("%s is not a CurrencyAmount: %v", field, m[field])
	}
	return int64(ca["amount"].(float64))
}

func (e *env) acTenant() store.Tenant {
	return store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}
}

// acAudit checks the sandbox ledger's invariants.
func (e *env) acAudit(t *testing.T) {
	t.Helper()
	if err := ledger.New(e.db).Audit(context.Background(), e.acTenant()); err != nil {
		t.Fatalf("ledger audit: %v", err)
	}
}

// acCounts captures what a refused request must not change: internal
// accounts, transactions, ledger rows and events.
func (e *env) acCounts(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, env := range []string{store.EnvSandbox, store.EnvProduction} {
		tn := store.Tenant{PlatformID: e.platformID, Env: env}
		c, err := e.db.Read().CountLedgerRows(ctx, tn)
		if err != nil {
			t.Fatal(err)
		}
		_, accts, err := e.db.Read().ListInternalAccounts(ctx, tn, store.InternalAccountFilter{}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		_, paccts, err := e.db.Read().ListInternalAccounts(ctx, tn, store.InternalAccountFilter{Platform: true}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		_, txs, err := e.db.Read().ListTransactions(ctx, tn, store.TransactionFilter{}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s: ledger %+v, accounts %d+%d, transactions %d; ", env, c, accts, paccts, txs)
	}
	return b.String()
}

// acTransactions lists transactions with a query, every page.
func (e *env) acTransactions(t *testing.T, query string, opts ...reqOpt) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for {
		q := query
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		r := e.do("GET", "/transactions?"+q, nil, opts...)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		for _, x := range m["data"].([]any) {
			out = append(out, x.(map[string]any))
		}
		if m["hasMore"] != true {
			return out
		}
		cursor = m["nextCursor"].(string)
	}
}

// acEvents returns the envelopes of the events about a resource.
func (e *env) acEvents(t *testing.T, resourceID string) []map[string]any {
	t.Helper()
	evs, err := e.db.Read().EventsForCustomer(context.Background(), e.acTenant(), resourceID)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, ev := range evs {
		var m map[string]any
		if err := json.Unmarshal(ev.Envelope, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// acClock sets the store clock to a fixed time and restores it at the end
// of the test; the returned function moves it.
func (e *env) acClock(t *testing.T, at time.Time) func(time.Time) {
	t.Helper()
	e.driveByHand() // background work under a moving clock would race the test
	now := at
	e.db.SetClock(func() time.Time { return now })
	t.Cleanup(func() { e.db.SetClock(time.Now) })
	return func(next time.Time) { now = next }
}

// midDay is 12:00 UTC of the current day: a start from which a test can
// move a store clock forward by hours and stay in the same UTC day.
func midDay() time.Time { return time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour) }

// midDayClock runs the store clock at real speed from 12:00 UTC of the
// current day, and restores it at the end of the test. It is for tests
// whose counts hold within one UTC day (daily volumes and limits): on the
// real clock a run that spans midnight would see the day's count start
// again halfway. Background work keeps running: the clock only moves
// forward, as the real one does.
func (e *env) midDayClock(t *testing.T) {
	t.Helper()
	start, noon := time.Now(), midDay()
	e.db.SetClock(func() time.Time { return noon.Add(time.Since(start)) })
	t.Cleanup(func() { e.db.SetClock(time.Now) })
}
