package stablecoins

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func newService(t *testing.T, db *store.DB) *Service {
	t.Helper()
	sealer, err := wallets.NewLocalSealer(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return New(db, accounts.NewLedger(db), sealer)
}

// fixture is a sandbox tenant with a link, a registered coin (ACME, 6
// decimals, USD), a linked-to-be Spark wallet and a US bank account.
type fixture struct {
	t            store.Tenant
	link         ProviderAccount
	coin         Stablecoin
	wallet, bank string
}

func sp(s string) *string { return &s }

func newFixture(t *testing.T, ctx context.Context, db *store.DB, s *Service) fixture {
	t.Helper()
	p, _, err := platforms.Bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{t: store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}}
	if f.link, err = s.Link(ctx, f.t, LinkRequest{Provider: sp(ProviderBrale), APIClientID: sp("client-a"),
		APIClientSecret: sp("sandbox-secret-a")}); err != nil {
		t.Fatal(err)
	}
	if f.coin, err = s.Register(ctx, f.t, RegisterRequest{ProviderTokenIdentifier: sp("ACME"),
		NetworkTokenIdentifier: sp("btkn1acme"), Network: sp(NetworkSpark)}); err != nil {
		t.Fatal(err)
	}
	f.wallet = insertEA(t, ctx, db, f.t, "SPARK_WALLET", "USDB", `{"accountType":"SPARK_WALLET","address":"spark1sandboxwallet"}`)
	f.bank = insertEA(t, ctx, db, f.t, "USD_ACCOUNT", "USD", `{"accountType":"USD_ACCOUNT","accountNumber":"123456789"}`)
	return f
}

func insertEA(t *testing.T, ctx context.Context, db *store.DB, tn store.Tenant, typ, cur, info string) string {
	t.Helper()
	now := db.Now().UTC().Truncate(time.Microsecond)
	ea := store.ExternalAccount{ID: id.New("ExternalAccount"), Tenant: tn, AccountType: typ, Currency: cur,
		Fingerprint: fmt.Sprint(now.UnixNano()), Status: "ACTIVE", Info: []byte(info), CreatedAt: now, UpdatedAt: now}
	if err := db.Write().InsertExternalAccount(ctx, ea); err != nil {
		t.Fatal(err)
	}
	return ea.ID
}

func mintReq(amount, dest string) MintRequest {
	return MintRequest{Amount: sp(amount), FundingSource: &MintFunding{Type: sp(SourceWire)},
		Destination: &MintDestination{AccountID: sp(dest)}}
}

func burnReq(amount, src, bank string) BurnRequest {
	return BurnRequest{Amount: sp(amount), Source: &BurnSource{Type: sp(SourceExternalAccount), ExternalAccountID: sp(src)},
		Destination: &BurnDestination{Type: sp(SourceExternalAccount), ExternalAccountID: sp(bank), Rail: sp(RailACHCredit)}}
}

func code(err error) string {
	if e, ok := apierr.From(err); ok {
		return e.Code
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// reserve is the stablecoin's fiat reserve balance.
func reserve(t *testing.T, ctx context.Context, s *Service, f fixture) int64 {
	t.Helper()
	row, err := s.DB.Read().LedgerAccountByCode(ctx, f.t, CodeReserve+":"+f.coin.ID, "USD")
	if err != nil {
		return 0
	}
	b, err := s.Ledger.Balance(ctx, f.t, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	return b.Posted
}
