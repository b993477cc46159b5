package httpapi

import (
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/cards"
)

// The card transaction machine: every row of cards.TxMoves is walked
// through the sandbox network, landing on the row's status with its
// CARD_TRANSACTION.<STATUS> event (R-CARD-53); the ledger stays balanced.
func TestCards_TxMoves_EveryRow_R_CARD_53(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, usd, card := e.cdFunded(t, 1_000_000)
		frozen := e.cdActive(t, cust, usd)["id"].(string)
		expect(t, e.cdPatch(frozen, cobj{"status": "FROZEN"}), http.StatusOK, "")
		// A card whose account holds little, for clearings it cannot cover.
		cust2, small := e.cdCustomer(t)
		e.acFund(t, small, 1_000)
		poor := e.cdActive(t, cust2, small)["id"].(string)
		auth := func(c string, amount int64) string { return e.cdAuth(t, c, amount)["id"].(string) }
		partly := func(c string, amount int64) string {
			id := auth(c, amount)
			e.cdOn(t, c, "clearing", id, "amount", amount/5, "final", false)
			return id
		}
		settled := func() string {
			id := auth(card, 1_000)
			e.cdOn(t, card, "clearing", id, "amount", 1_000)
			return id
		}
		walk := map[string]map[string]func() string{
			"": {
				cards.EvApproved: func() string { return auth(card, 100) },
				cards.EvDeclined: func() string { return auth(frozen, 100) },
				cards.EvSettledAtOnce: func() string {
					r := e.cdSim(card, "financial_authorization", cobj{"amount": 100, "currency": cobj{"code": "USD"}, "merchant": cdMerchant("VENDING", "5814")})
					return e.cdSent(t, r)["id"].(string)
				},
			},
			cards.TxAuthorized: {
				cards.EvResized: func() string {
					id := auth(card, 100)
					e.cdOn(t, card, "authorization_advice", id, "amount", 150)
					return id
				},
				cards.EvClearedPart:   func() string { return partly(card, 1_000) },
				cards.EvClearedFinal:  func() string { id := auth(card, 100); e.cdOn(t, card, "clearing", id, "amount", 90); return id },
				cards.EvClearingShort: func() string { id := auth(poor, 300); e.cdOn(t, poor, "clearing", id, "amount", 5_000); return id },
				cards.EvReleased:      func() string { id := auth(card, 100); e.cdOn(t, card, "reversal", id); return id },
			},
			cards.TxPartiallySettled: {
				cards.EvResized: func() string { id := partly(card, 1_000); e.cdOn(t, card, "reversal", id, "amount", 100); return id },
				cards.EvClearedPart: func() string {
					id := partly(card, 1_000)
					e.cdOn(t, card, "clearing", id, "amount", 100, "final", false)
					return id
				},
				cards.EvClearedFinal:  func() string { id := partly(card, 1_000); e.cdOn(t, card, "clearing", id, "amount", 800); return id },
				cards.EvClearingShort: func() string { id := partly(poor, 500); e.cdOn(t, poor, "clearing", id, "amount", 5_000); return id },
				cards.EvReleased:      func() string { id := partly(card, 1_000); e.cdOn(t, card, "reversal", id); return id },
			},
			cards.TxSettled: {
				cards.EvReturned: func() string { id := settled(); e.cdOn(t, card, "return", id, "amount", 400); return id },
				cards.EvReturnReversed: func() string {
					id := settled()
					r := e.cdSim(card, "return", cobj{"cardTransactionId": id, "amount": 400})
					ret := e.cdSent(t, r)["id"].(string)
					e.cdOn(t, card, "return_reversal", ret)
					return ret
				},
			},
		}
		for _, m := range cards.TxMoves {
			fn := walk[m.From][m.Event]
			if fn == nil {
				t.Fatalf("no walk for %q --%s-->", m.From, m.Event)
			}
			id := fn()
			x := e.cdTx(t, id)
			if x["status"] != m.To {
				t.Fatalf("%q --%s--> %v, want %s", m.From, m.Event, x["status"], m.To)
			}
			types, _ := e.cdTxEvents(t, id)
			if len(types) == 0 || types[len(types)-1] != "CARD_TRANSACTION."+m.To {
				t.Fatalf("%q --%s-->: events %v", m.From, m.Event, types)
			}
		}
		e.acAudit(t)
	})
}
