package accounts

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

const acctID = "InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"

func TestSandboxInstructionsAreWellFormedAndDeterministic(t *testing.T) {
	if externalaccounts.ABARoutingNumber(SandboxRoutingNumber) != "" {
		t.Fatal("the sandbox routing number fails the ABA checks")
	}
	ref := FundingReference(acctID)
	if len(ref) != 15 || !strings.HasPrefix(ref, "PSD") || FundingReference(acctID) != ref ||
		FundingReference(strings.Replace(acctID, "1b", "1c", 1)) == ref {
		t.Fatalf("reference %s", ref)
	}
	for _, cur := range []string{"USD", "EUR", "GBP", "MXN", "BRL", "BTC", "USDC", "USDT", "USDB", "SOL", "INR", "JPY", "CHF"} {
		a, b := sandboxInstructions(acctID, cur, ref, false), sandboxInstructions(acctID, cur, ref, false)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if len(a) == 0 || string(ja) != string(jb) {
			t.Fatalf("%s: %s / %s", cur, ja, jb)
		}
		for _, p := range a {
			info := p.AccountOrWalletInfo
			var msg string
			switch info.AccountType {
			case "USD_ACCOUNT":
				msg = externalaccounts.USAccountNumber(info.AccountNumber) + externalaccounts.ABARoutingNumber(info.RoutingNumber)
			case "EUR_ACCOUNT":
				msg = externalaccounts.IBAN(info.IBAN, "DE") + externalaccounts.BIC(info.SwiftCode)
			case "MXN_ACCOUNT":
				msg = externalaccounts.CLABE(info.ClabeNumber)
			case "BRL_ACCOUNT":
				msg = externalaccounts.PixKey(info.PixKey, "RANDOM")
			case "SWIFT_ACCOUNT":
				msg = externalaccounts.BIC(info.SwiftCode) + externalaccounts.Country(info.Country)
			case "SPARK_WALLET":
				msg = externalaccounts.SparkAddress(info.Address)
			case "SOLANA_WALLET":
				msg = externalaccounts.SolanaAddress(info.Address)
			case "BITCOIN_L1":
				hrp, words, variant, err := walletsig.DecodeBech32(info.Address)
				if err != nil || hrp != "tb" || variant != walletsig.Bech32 || len(words) != 33 || words[0] != 0 {
					msg = "bad testnet address " + info.Address
				}
			case "GBP_ACCOUNT":
				if len(info.SortCode) != 6 || len(info.AccountNumber) != 8 {
					msg = "bad GBP account"
				}
			default:
				msg = "unexpected type " + info.AccountType
			}
			if msg != "" {
				t.Errorf("%s %s: %s", cur, info.AccountType, msg)
			}
		}
	}
	// Known vectors: the IBAN of the ISO 13616 example, a CLABE from
	// Banxico's documentation, BIP-173's P2WPKH test vector.
	if got := IBAN("GB", "WEST12345698765432"); got != "GB82WEST12345698765432" {
		t.Fatalf("IBAN %s", got)
	}
	if got := CLABE("03218000011835971"); got != "032180000118359719" {
		t.Fatalf("CLABE %s", got)
	}
	prog := []byte{0x75, 0x1e, 0x76, 0xe8, 0x19, 0x91, 0x96, 0xd4, 0x54, 0x94, 0x1c, 0x45, 0xd1, 0xb3, 0xa3, 0x23, 0xf1, 0x43, 0x3b, 0xd6}
	if got := SegwitAddress("bc", prog); got != "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4" {
		t.Fatalf("segwit %s", got)
	}
}

func TestStatementMonthsFollowUSCentral(t *testing.T) {
	// October 2025 in Chicago is CDT (UTC-5); January is CST (UTC-6).
	oct, okOct := exactMonth(time.Date(2025, 10, 1, 5, 0, 0, 0, time.UTC), time.Date(2025, 11, 1, 5, 0, 0, 0, time.UTC))
	jan, okJan := exactMonth(time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 6, 0, 0, 0, time.UTC))
	if !okOct || oct != "2025-10" || !okJan || jan != "2026-01" {
		t.Fatalf("%s %v %s %v", oct, okOct, jan, okJan)
	}
	if _, ok := exactMonth(time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Fatal("a UTC month counted as a US Central month")
	}
	m := "2025-11"
	if ValidateStatementMonth(&m, time.Date(2025, 11, 1, 4, 59, 59, 999999999, time.UTC)) == nil ||
		ValidateStatementMonth(&m, time.Date(2025, 11, 1, 5, 0, 0, 0, time.UTC)) != nil {
		t.Fatal("November 2025 begins at 05:00Z")
	}
	if got := ceilMicro(time.Date(2025, 1, 1, 0, 0, 0, 1, time.UTC)); !got.Equal(time.Date(2025, 1, 1, 0, 0, 0, 1000, time.UTC)) {
		t.Fatalf("ceil %v", got)
	}
	c := StatementCursor{CreatedAt: time.UnixMicro(1759294800123456).UTC(), ID: "Posting:x"}
	if back, ok := ParseCursor(FormatCursor(c)); !ok || back != c {
		t.Fatalf("cursor %v %v", back, ok)
	}
	for _, bad := range []string{"", "x|y", "12|", "|Posting:x"} {
		if _, ok := ParseCursor(bad); ok {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

// Many nodes ensuring the same accounts at once create each exactly once.
func TestEnsureConcurrentlyCreatesOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, _, err := platforms.Bootstrap(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}
		svc := New(db, nil)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- svc.Ensure(ctx, tn, true, "")
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		rows, err := db.Read().InternalAccountsOfOwner(ctx, tn, "")
		if err != nil || len(rows) != 1 {
			t.Fatalf("%d platform accounts, %v", len(rows), err)
		}
		if err := ledger.New(db).Audit(ctx, tn); err != nil {
			t.Fatal(err)
		}
		c, err := db.Read().CountLedgerRows(ctx, tn)
		if err != nil || c.Accounts != 1 {
			t.Fatalf("%d ledger accounts, %v", c.Accounts, err)
		}
	})
}
