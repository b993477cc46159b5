package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/idempotency"
)

// Card network simulations record their answer in the transaction that
// queues their message (optimistic claims, as POST /quotes): twenty
// concurrent copies of one return under one key queue one message, which
// returns the money once, all get the same 202, and the key's record is
// that answer, so a retry after a crash replays it instead of queueing the
// message twice (R-IDEM-02).
func TestCardsIdempotency_SimulationsRecordWithTheirEffect_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, cardID := e.cdFunded(t, 10_000)
		tx := e.cdAuth(t, cardID, 1_000)
		e.cdOn(t, cardID, "clearing", tx["id"].(string), "amount", 1_000)
		body := cobj{"cardTransactionId": tx["id"], "amount": 300}
		got := sameAnswers(t, 20, func() resp {
			return e.do("POST", "/sandbox/cards/"+cardID+"/simulate/return", body, key("return-once"))
		})
		if !strings.HasPrefix(got, "202 ") {
			t.Fatalf("every copy answered %s", got)
		}
		e.cdApply(t) // one message was recorded, so one return applies
		if b := e.cdBalance(t, usd); b.Posted != 10_000-1_000+300 {
			t.Fatalf("posted %d after one return of 300, want %d", b.Posted, 10_000-1_000+300)
		}
		if r := e.cdTx(t, tx["id"].(string))["refundedAmount"].(map[string]any)["amount"]; r != float64(300) {
			t.Fatalf("refundedAmount %v, want 300", r)
		}
		rec, err := e.db.Read().GetIdempotencyKey(context.Background(), e.acTenant(), "return-once")
		if err != nil || rec.StatusCode != http.StatusAccepted || "202 "+string(rec.ResponseBody) != got {
			t.Fatalf("key record %d %s (%v), want the answer %s", rec.StatusCode, rec.ResponseBody, err, got)
		}
		// An authorization too: twenty copies hold once.
		auth := cobj{"amount": 500, "currency": cobj{"code": "USD"}, "merchant": cdMerchant("BENCH", "5814")}
		if got := sameAnswers(t, 20, func() resp {
			return e.do("POST", "/sandbox/cards/"+cardID+"/simulate/authorization", auth, key("auth-once"))
		}); !strings.HasPrefix(got, "202 ") {
			t.Fatalf("authorization copies answered %s", got)
		}
		e.cdApply(t)
		if b := e.cdBalance(t, usd); b.PendingDebits != 500 {
			t.Fatalf("pending debits %d after one authorization of 500", b.PendingDebits)
		}
	})
}

// The queued message commits only together with its key's record: a return
// whose key another request finished first (as after a crash the retry
// finds it) rolls back, queues nothing and moves no money (R-IDEM-02). Before, the simulations
// settled their key after their transaction, and paymentsbench -cards
// -crash-every saw returns applied twice across a SIGKILL.
func TestCardsIdempotency_EffectRollsBackWithoutItsRecord_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, cardID := e.cdFunded(t, 10_000)
		tx := e.cdAuth(t, cardID, 1_000)
		txID := tx["id"].(string)
		e.cdOn(t, cardID, "clearing", txID, "amount", 1_000)
		ctx, tn := context.Background(), e.acTenant()
		if err := e.db.Write().InsertIdempotencyRecord(ctx, tn, "finished", "another", http.StatusAccepted, []byte("{}\n")); err != nil {
			t.Fatal(err)
		}
		claim := &idempotency.Claim{Tenant: tn, Key: "finished", Optimistic: true, Hash: "this", Status: http.StatusAccepted}
		amount := int64(300)
		for name, send := range map[string]func() error{
			"return": func() error {
				_, err := e.srv.CardService().SubmitOnTransaction(idempotency.With(ctx, claim), tn, cardID, cards.OpReturn, cards.SimOnTransaction{CardTransactionID: &txID, Amount: &amount})
				return err
			},
			"authorization": func() error {
				code, desc := "USD", "BENCH"
				_, err := e.srv.CardService().SubmitAuthorization(idempotency.With(ctx, claim), tn, cardID, cards.OpAuthorization,
					cards.SimAuthorization{Amount: &amount, Currency: &cards.CurrencyRef{Code: &code}, Merchant: &cards.Merchant{Descriptor: &desc}})
				return err
			},
		} {
			if err := send(); !errors.Is(err, idempotency.ErrRaced) {
				t.Fatalf("%s under a finished key: %v, want ErrRaced", name, err)
			}
		}
		e.cdApply(t) // nothing was queued
		if b := e.cdBalance(t, usd); b.Posted != 10_000-1_000 || b.PendingDebits != 0 {
			t.Fatalf("posted %d pending %d after rolled-back messages, want %d and 0", b.Posted, b.PendingDebits, 10_000-1_000)
		}
		if r := e.cdTx(t, txID)["refundedAmount"].(map[string]any)["amount"]; r != float64(0) {
			t.Fatalf("refundedAmount %v after a rolled-back return", r)
		}
	})
}
