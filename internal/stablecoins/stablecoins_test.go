package stablecoins

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Walks every row of the transition table on a mint and on a burn: each
// ends in its target status with the ledger effect the row names (supply
// and reserve), and a move the table lacks is refused.
func TestTransitionTable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := newService(t, db)
		f := newFixture(t, ctx, db, s)
		const n, fiat = 5_000_000, 500
		for _, typ := range []string{TypeMint, TypeBurn} {
			sign := int64(1)
			if typ == TypeBurn {
				sign = -1
			}
			for _, e := range Transitions {
				supply0, _ := s.Supply(ctx, f.t, f.coin.ID)
				reserve0 := reserve(t, ctx, s, f)
				op := s.newOperation(f.t, store.Stablecoin{ID: f.coin.ID}, store.StablecoinProviderAccount{ID: f.link.ID}, typ, n, fiat, "")
				op.Source, op.Destination = []byte(`{}`), []byte(`{}`)
				err := db.InTx(ctx, func(tx *store.Tx) error {
					c, err := tx.GetStablecoin(ctx, f.t, f.coin.ID, false)
					if err != nil {
						return err
					}
					path := []string{}
					if e.From != StatusCreated {
						path = pathTo(StatusCreated, e.From)
					}
					for _, st := range append(path, e.To) {
						if err := s.transition(ctx, tx, c, &op, st); err != nil {
							return err
						}
					}
					return tx.InsertStablecoinOperation(ctx, op)
				})
				if err != nil {
					t.Fatalf("%s %s→%s: %v", typ, e.From, e.To, err)
				}
				supply, _ := s.Supply(ctx, f.t, f.coin.ID)
				dSupply, dReserve := supply-supply0, reserve(t, ctx, s, f)-reserve0
				var wantSupply, wantReserve int64
				switch e.To {
				case StatusPendingProvider, StatusProcessing:
					if typ == TypeMint {
						wantReserve = fiat
					} else {
						wantSupply = -n
					}
				case StatusCompleted:
					wantSupply, wantReserve = sign*n, sign*fiat
				}
				if dSupply != wantSupply || dReserve != wantReserve || op.Status != e.To {
					t.Errorf("%s %s→%s: status %s, supply %+d (want %+d), reserve %+d (want %+d)",
						typ, e.From, e.To, op.Status, dSupply, wantSupply, dReserve, wantReserve)
				}
				if Terminal(e.To) && op.DueAt != nil {
					t.Errorf("%s %s→%s: a terminal operation is still due", typ, e.From, e.To)
				}
			}
		}
		// Moves the table lacks.
		for _, bad := range [][2]string{{StatusCompleted, StatusProcessing}, {StatusFailed, StatusCompleted},
			{StatusPendingFunding, StatusCompleted}, {StatusExpired, StatusPendingProvider}} {
			if _, ok := lookupEdge(bad[0], bad[1]); ok {
				t.Errorf("%s→%s is in the table", bad[0], bad[1])
			}
			op := store.StablecoinOperation{ID: "x", Status: bad[0]}
			err := db.InTx(ctx, func(tx *store.Tx) error {
				return s.transition(ctx, tx, store.Stablecoin{}, &op, bad[1])
			})
			if err == nil {
				t.Errorf("%s→%s allowed", bad[0], bad[1])
			}
		}
		if err := s.Ledger.Audit(ctx, f.t); err != nil {
			t.Fatal(err)
		}
	})
}

// A mint and a burn survive a restart: the first node records the
// operations and stops; a new node over the same data carries them to
// COMPLETED through the sandbox provider's states. Supply = Σ mints − Σ
// burns and the reserve holds their fiat.
func TestOperationsSurviveRestart(t *testing.T) {
	rails.SetClockFactor(1e-6) // a wire arrives in 3.6ms, funding expires in 0.6s
	defer rails.SetClockFactor(rails.DefaultClockFactor)
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		ctx := context.Background()
		db1 := open(store.Options{})
		s1 := newService(t, db1)
		f := newFixture(t, ctx, db1, s1)
		mint, err := s1.Mint(ctx, f.t, f.coin.ID, mintReq("2000000000", f.wallet))
		if err != nil || mint.Status != StatusPendingFunding || mint.FundingInstructions == nil {
			t.Fatalf("mint: %v %+v", err, mint)
		}
		db1.Close()

		db2 := open(store.Options{})
		defer db2.Close()
		s2 := newService(t, db2)
		drain(t, ctx, s2, f, mint.ID, StatusCompleted)
		burn, err := s2.Burn(ctx, f.t, f.coin.ID, burnReq("500000000", f.wallet, f.bank))
		if err != nil {
			t.Fatal(err)
		}
		drain(t, ctx, s2, f, burn.ID, StatusCompleted)
		if supply, _ := s2.Supply(ctx, f.t, f.coin.ID); supply != 1_500_000_000 {
			t.Fatalf("supply %d", supply)
		}
		if r := reserve(t, ctx, s2, f); r != 150_000 {
			t.Fatalf("reserve %d", r)
		}
		if err := s2.Ledger.Audit(ctx, f.t); err != nil {
			t.Fatal(err)
		}
	})
}

// Sandbox failure paths: fiat cents .13 fail after funding (the wire is
// returned: reserve back to zero), .77 are never funded and expire.
func TestSandboxFailures(t *testing.T) {
	rails.SetClockFactor(1e-6)
	defer rails.SetClockFactor(rails.DefaultClockFactor)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := newService(t, db)
		f := newFixture(t, ctx, db, s)
		failed, err := s.Mint(ctx, f.t, f.coin.ID, mintReq("10130000", f.wallet)) // USD 10.13
		if err != nil {
			t.Fatal(err)
		}
		op := drain(t, ctx, s, f, failed.ID, StatusFailed)
		if op.FailureReason != "PROVIDER_TRANSFER_FAILED" {
			t.Fatalf("%+v", op)
		}
		expired, err := s.Mint(ctx, f.t, f.coin.ID, mintReq("10770000", f.wallet)) // USD 10.77
		if err != nil {
			t.Fatal(err)
		}
		drain(t, ctx, s, f, expired.ID, StatusExpired)
		if supply, _ := s.Supply(ctx, f.t, f.coin.ID); supply != 0 || reserve(t, ctx, s, f) != 0 {
			t.Fatalf("supply %d reserve %d after failures", supply, reserve(t, ctx, s, f))
		}
		if err := s.Ledger.Audit(ctx, f.t); err != nil {
			t.Fatal(err)
		}
	})
}

func drain(t *testing.T, ctx context.Context, s *Service, f fixture, opID, want string) Operation {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if err := s.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		op, err := s.GetOperation(ctx, f.t, opID)
		if err != nil {
			t.Fatal(err)
		}
		if op.Status == want {
			return op
		}
		if Terminal(op.Status) || time.Now().After(deadline) {
			t.Fatalf("operation %s is %s, want %s", opID, op.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The API secret is stored sealed to its link, never in clear.
func TestSecretSealed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := newService(t, db)
		f := newFixture(t, ctx, db, s)
		row, err := db.Read().GetStablecoinProviderAccount(ctx, f.t, f.link.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(row.SealedSecret, "sandbox-secret-a") {
			t.Fatal("secret stored in clear")
		}
		c, err := s.credentials(row)
		if err != nil || c.Secret != "sandbox-secret-a" {
			t.Fatalf("%v %+v", err, c)
		}
		row.ID = "StablecoinProviderAccount:other"
		if _, err := s.credentials(row); err == nil {
			t.Fatal("a sealed secret opened under another link")
		}
	})
}

// The production adapter refuses every call with STABLECOIN_PROVIDER_ERROR.
func TestProductionRefuses(t *testing.T) {
	p, ctx := Production{}, context.Background()
	_, e1 := p.Verify(ctx, Credentials{})
	_, e2 := p.Token(ctx, Credentials{}, "ACME", NetworkSpark, "x")
	_, e3 := p.LinkAddress(ctx, Credentials{}, Address{})
	_, e4 := p.CreateTransfer(ctx, Credentials{}, Order{}, time.Now())
	_, e5 := p.Refresh(ctx, Credentials{}, Order{}, Transfer{}, time.Now())
	for i, err := range []error{e1, e2, e3, e4, e5} {
		if code(err) != "STABLECOIN_PROVIDER_ERROR" {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if DefaultProvider("production").Environment() != EnvProduction || DefaultProvider("sandbox").Environment() != EnvSandbox {
		t.Fatal("providers by environment")
	}
}

func TestAmounts(t *testing.T) {
	for in, want := range map[string]string{"1": "", "0": "INVALID_INPUT", "": "INVALID_INPUT", "12a": "INVALID_INPUT",
		"-5": "INVALID_INPUT", "1000000000000000001": "STABLECOIN_AMOUNT_NOT_REPRESENTABLE", "99999999999999999999": "INVALID_INPUT"} {
		if _, err := ParseAmount(in); code(err) != want {
			t.Errorf("ParseAmount(%q): %v, want %s", in, err, want)
		}
	}
	for _, c := range []struct {
		amount   int64
		decimals int
		fiat     int64
		code     string
	}{
		{1_000_000_000, 6, 100_000, ""}, {10_000, 6, 1, ""}, {10_001, 6, 0, "STABLECOIN_AMOUNT_NOT_REPRESENTABLE"},
		{5, 2, 5, ""}, {5, 0, 500, ""}, {999, 3, 0, "STABLECOIN_AMOUNT_NOT_REPRESENTABLE"},
	} {
		got, err := ToFiat(c.amount, c.decimals, "USD")
		if code(err) != c.code || (c.code == "" && got != c.fiat) {
			t.Errorf("ToFiat(%d, %d) = %d, %v", c.amount, c.decimals, got, err)
		}
	}
}

func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1", "0", "1000000000000000000", "12a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseAmount(s)
		if err == nil && (n <= 0 || n > 1_000_000_000_000_000) {
			t.Fatalf("ParseAmount(%q) = %d", s, n)
		}
	})
}

// The request decoders never panic and validate whatever they decode.
func FuzzRequests(f *testing.F) {
	f.Add(`{"amount":"100","fundingSource":{"type":"WIRE"},"destination":{"accountId":"x"}}`)
	f.Add(`{"amount":"100","source":{"type":"EXTERNAL_ACCOUNT"},"destination":{"type":"EXTERNAL_ACCOUNT","rail":"WIRE"}}`)
	f.Add(`{"provider":"BRALE","apiClientId":"a","apiClientSecret":"b"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var m MintRequest
		if jsonx.Decode([]byte(body), &m) == nil {
			_ = m.Validate()
		}
		var b BurnRequest
		if jsonx.Decode([]byte(body), &b) == nil {
			_ = b.Validate()
		}
		var l LinkRequest
		if jsonx.Decode([]byte(body), &l) == nil {
			_ = l.Validate()
		}
		var r RegisterRequest
		if jsonx.Decode([]byte(body), &r) == nil {
			_ = r.Validate()
		}
	})
}

// A burn may not exceed the issued supply less the burns still waiting for
// their tokens.
func TestBurnBeyondSupply(t *testing.T) {
	rails.SetClockFactor(1e-6)
	defer rails.SetClockFactor(rails.DefaultClockFactor)
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := newService(t, db)
		f := newFixture(t, ctx, db, s)
		if _, err := s.Burn(ctx, f.t, f.coin.ID, burnReq("10000", f.wallet, f.bank)); code(err) != "STABLECOIN_EXTERNAL_ACCOUNT_NOT_LINKED" {
			t.Fatalf("burn from a wallet that received nothing: %v", err)
		}
		mint, err := s.Mint(ctx, f.t, f.coin.ID, mintReq("1000000", f.wallet))
		if err != nil {
			t.Fatal(err)
		}
		drain(t, ctx, s, f, mint.ID, StatusCompleted)
		if _, err := s.Burn(ctx, f.t, f.coin.ID, burnReq("1010000", f.wallet, f.bank)); code(err) != "INSUFFICIENT_FUNDS" {
			t.Fatalf("burn beyond supply: %v", err)
		}
		if _, err := s.Burn(ctx, f.t, f.coin.ID, burnReq("600000", f.wallet, f.bank)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Burn(ctx, f.t, f.coin.ID, burnReq("500000", f.wallet, f.bank)); code(err) != "INSUFFICIENT_FUNDS" {
			t.Fatalf("second burn beyond what is not already being burned: %v", err)
		}
	})
}
