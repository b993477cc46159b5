package quotes

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/rates"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// fx is a quote service over a real store: a bootstrapped platform with
// USD, EUR and INR supported and a webhook endpoint, real customers with
// provisioned internal accounts, real external accounts, and the sandbox
// pricing engine, with the customers service's end-user terms decision
// (over the consents a customer is created with). Only the rails hand-off
// (payouts) is injected.
type fx struct {
	t         *testing.T
	ctx       context.Context
	db        *store.DB
	tn        store.Tenant
	svc       *Service
	led       *ledger.Service
	cust      *customers.Service
	acc       *accounts.Service
	now       time.Time
	mu        sync.Mutex
	payouts   []rails.Payout
	submitErr error
}

func eachFx(t *testing.T, fn func(t *testing.T, f *fx)) {
	storetest.Each(t, func(t *testing.T, db *store.DB) { fn(t, newFx(t, db)) })
}

func newFx(t *testing.T, db *store.DB) *fx {
	t.Helper()
	ctx := context.Background()
	f := &fx{t: t, ctx: ctx, db: db, now: time.Now().UTC().Truncate(time.Second)}
	db.SetClock(func() time.Time {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.now
	})
	p, _, err := platforms.Bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	f.tn = store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
	f.patchConfig(`{"webhookEndpoint":"https://hooks.example.com/p","supportedCurrencies":[` +
		`{"currencyCode":"USD","minAmount":1,"maxAmount":100000000000,"enabledTransactionTypes":["INCOMING","OUTGOING"]},` +
		`{"currencyCode":"EUR","minAmount":1,"maxAmount":100000000000,"enabledTransactionTypes":["INCOMING","OUTGOING"]},` +
		`{"currencyCode":"INR","minAmount":1,"maxAmount":100000000000,"enabledTransactionTypes":["INCOMING","OUTGOING"]}]}`)
	f.led = ledger.New(db)
	f.acc = accounts.New(db, nil)
	f.cust = customers.New(db, nil)
	f.cust.OnCreate = func(ctx context.Context, tx *store.Tx, t store.Tenant, c customers.Customer) error {
		return f.acc.ProvisionTx(ctx, tx, t, c.ID)
	}
	engine := pricing.NewEngine(rates.NewCache(rates.NewSandbox(db.Now), rates.DefaultTTL, db.Now), db.Now)
	cfg := &platformconfig.Service{DB: db}
	f.svc = &Service{
		DB: db, Ledger: f.led, Pricing: func(string) *pricing.Engine { return engine }, Config: cfg.Get,
		CustomerTerms: f.cust.CustomerTerms, AcceptedTerms: f.cust.AcceptedTerms,
		External: externalaccounts.New(db, nil),
		Submit: func(ctx context.Context, tx *store.Tx, p rails.Payout) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.submitErr != nil {
				return f.submitErr
			}
			f.payouts = append(f.payouts, p)
			return nil
		},
	}
	return f
}

func (f *fx) patchConfig(body string) {
	f.t.Helper()
	var p platformconfig.Patch
	if err := jsonx.Decode([]byte(body), &p); err != nil {
		f.t.Fatal(err)
	}
	if _, err := (&platformconfig.Service{DB: f.db}).Update(f.ctx, f.tn, p); err != nil {
		f.t.Fatal(err)
	}
}

// advance moves the store clock.
func (f *fx) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// customer creates an individual customer (with accounts in every
// supported currency); terms says whether they accepted the end-user terms.
func (f *fx) customer(terms bool) string {
	f.t.Helper()
	var req customers.CreateRequest
	body := `{"customerType":"INDIVIDUAL","fullName":"Jane Doe","birthDate":"1990-01-15","nationality":"US",` +
		`"address":{"line1":"1 Main St","city":"Springfield","postalCode":"12345","country":"US"}`
	if terms {
		body += `,"agreementConsents":[{"type":"` + customers.AgreementEndUserTerms + `","acceptedAt":"2025-10-01T12:00:00Z",` +
			`"ipAddress":"198.51.100.1","termsVersion":"` + customers.DefaultCatalog().Current[0].Version + `","acceptanceMethod":"CHECKBOX"}]`
	}
	body += `}`
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		f.t.Fatal(err)
	}
	c, err := f.cust.Create(f.ctx, f.tn, req)
	if err != nil {
		f.t.Fatalf("customer: %v", err)
	}
	return c.ID
}

// account returns a customer's internal account in cur.
func (f *fx) account(customerID, cur string) store.InternalAccount {
	f.t.Helper()
	owned, err := f.db.Read().InternalAccountsOfOwner(f.ctx, f.tn, customerID)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, a := range owned {
		if a.Currency == cur && a.Type == accounts.TypeFiat {
			return a
		}
	}
	f.t.Fatalf("customer %s has no %s account", customerID, cur)
	return store.InternalAccount{}
}

// fund credits an account from the outside world (a recorded transfer).
func (f *fx) fund(a store.InternalAccount, amount int64) {
	f.t.Helper()
	err := f.db.InTx(f.ctx, func(tx *store.Tx) error {
		world, err := f.led.SystemAccountTx(f.ctx, tx, f.tn, ledger.CodeWorld, a.Currency)
		if err != nil {
			return err
		}
		_, err = f.led.Apply(f.ctx, tx, f.tn, []ledger.TransferSpec{{Postings: []ledger.PostingSpec{
			{AccountID: world.ID, Currency: a.Currency, Amount: -amount},
			{AccountID: a.LedgerAccountID, Currency: a.Currency, Amount: amount}}}})
		return err
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// balance is the ledger balance of an internal account.
func (f *fx) balance(a store.InternalAccount) ledger.Balance {
	f.t.Helper()
	b, err := f.led.Balance(f.ctx, f.tn, a.LedgerAccountID)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// system is the posted total of a system account (0 before it exists).
func (f *fx) system(code, cur string) int64 {
	f.t.Helper()
	a, err := f.led.SystemAccount(f.ctx, f.tn, code, cur)
	if err != nil {
		f.t.Fatal(err)
	}
	b, err := f.led.Balance(f.ctx, f.tn, a.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return b.Posted
}

// external creates a validated US bank account of a customer.
func (f *fx) external(customerID, accountNumber string) string {
	f.t.Helper()
	var req externalaccounts.CreateRequest
	body := `{"customerId":"` + customerID + `","currency":"USD","accountInfo":{"accountType":"USD_ACCOUNT",` +
		`"routingNumber":"021000021","accountNumber":"` + accountNumber + `","bankAccountType":"CHECKING",` +
		`"beneficiary":{"beneficiaryType":"INDIVIDUAL","fullName":"Jane Doe"}}}`
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		f.t.Fatal(err)
	}
	ea, err := f.svc.External.Create(f.ctx, f.tn, req)
	if err != nil {
		f.t.Fatalf("external account: %v", err)
	}
	return ea.ID
}

// audit checks the ledger's invariants.
func (f *fx) audit() {
	f.t.Helper()
	if err := f.led.Audit(f.ctx, f.tn); err != nil {
		f.t.Fatalf("ledger audit: %v", err)
	}
}

// state is what a refused call must leave unchanged.
func (f *fx) state() string {
	f.t.Helper()
	c, err := f.db.Read().CountLedgerRows(f.ctx, f.tn)
	if err != nil {
		f.t.Fatal(err)
	}
	n, err := f.db.Read().CountQuotes(f.ctx, f.tn)
	if err != nil {
		f.t.Fatal(err)
	}
	_, txs, err := f.db.Read().ListTransactions(f.ctx, f.tn, store.TransactionFilter{}, "", 1)
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	return string(b) + " quotes " + itoa(n) + " transactions " + itoa(txs)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func ptr[T any](v T) *T { return &v }

// req is a quote request between two accounts.
func req(src, dst, side string, amount int64) Request {
	return Request{
		Source:             &SourceIn{SourceType: ptr(SourceAccount), AccountID: ptr(src)},
		Destination:        &DestinationIn{DestinationType: ptr(DestAccount), AccountID: ptr(dst)},
		LockedCurrencySide: ptr(side), LockedCurrencyAmount: ptr(amount),
	}
}

// code is the error code of an *apierr.Error ("" otherwise).
func code(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
