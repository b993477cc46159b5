package agents

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// Every row of the deposit's table is allowed; every other move is not.
func TestDepositMoves(t *testing.T) {
	statuses := []string{DepositPending, DepositCompleted, DepositExpired}
	for _, from := range statuses {
		for _, to := range statuses {
			listed := false
			for _, m := range depositMoves {
				listed = listed || (m.From == from && m.To == to)
			}
			if err := depositMove(from, to); (err == nil) != listed {
				t.Errorf("%s → %s: listed %v, error %v", from, to, listed, err)
			}
		}
	}
}

func TestPayAmount(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	inv := store.AgentDeposit{Amount: n(500)}
	if got, err := payAmount(inv, nil); err != nil || got != 500 {
		t.Fatalf("invoice paid without amount: %d %v", got, err)
	}
	if _, err := payAmount(inv, n(499)); err == nil {
		t.Fatal("an invoice paid another amount")
	}
	if _, err := payAmount(store.AgentDeposit{}, nil); err == nil {
		t.Fatal("an address paid no amount")
	}
	if _, err := payAmount(store.AgentDeposit{}, n(0)); err == nil {
		t.Fatal("an address paid 0")
	}
	if got, err := payAmount(store.AgentDeposit{}, n(7)); err != nil || got != 7 {
		t.Fatalf("address paid 7: %d %v", got, err)
	}
}

// The sandbox invoice is a valid, signed BOLT 11 invoice for its amount.
func TestSandboxInvoice(t *testing.T) {
	s, err := sandboxInvoice(1234, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := walletsig.ParseBolt11(s)
	if err != nil || b.Amount != "12340n" || b.Network != "bcrt" {
		t.Fatalf("invoice %s: %+v %v", s, b, err)
	}
}

// FuzzDepositRequest: any body decodes and validates without panicking;
// an accepted one names an internal account and a known target.
func FuzzDepositRequest(f *testing.F) {
	f.Add([]byte(`{"accountId":"InternalAccount:x","targetType":"LIGHTNING_INVOICE","amount":5}`))
	f.Add([]byte(`{"accountId":"InternalAccount:x","targetType":"CHAIN_ADDRESS"}`))
	f.Add([]byte(`{"targetType":"X","amount":-1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r DepositRequest
		if json.Unmarshal(body, &r) != nil {
			return
		}
		if r.Validate() != nil {
			return
		}
		if *r.TargetType != TargetLightningInvoice && *r.TargetType != TargetChainAddress {
			t.Fatalf("accepted target %q", *r.TargetType)
		}
		if *r.TargetType == TargetLightningInvoice && (r.Amount == nil || *r.Amount < 1) {
			t.Fatalf("accepted invoice amount %v", r.Amount)
		}
	})
}
