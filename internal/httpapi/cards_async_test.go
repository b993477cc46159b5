package httpapi

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/cards"
)

// cdQueue sends a simulation that must be accepted and answers its message.
func (e *env) cdQueue(t *testing.T, cardID, op string, body cobj) map[string]any {
	t.Helper()
	r := e.cdSim(cardID, op, body)
	expect(t, r, http.StatusAccepted, "")
	m := r.JSON(t)["message"].(map[string]any)
	if m["status"] != "PENDING" || m["cardId"] != cardID || m["type"] != op {
		t.Fatalf("queued message %v", m)
	}
	return m
}

// restarted is another node's card service over the same store, with no
// memory of what this one did: it finds the queue in the database.
func (e *env) restarted() *cards.Service { return cards.New(e.db, nil) }

// The card network is asynchronous and durable: a simulation answers 202
// with its message PENDING and moves nothing; a message may name the card
// transaction a queued authorization will create; a node that starts later
// (a restart) applies the queue in arrival order, one message after the
// other, and a message the transaction cannot take by then (reversing a
// settled purchase) is FAILED with the refusal and moves nothing. Once
// nothing is queued, the same impossible message is refused at once
// (R-CARD-49, R-CARD-53).
func TestCards_NetworkIsAsynchronous_R_CARD_49_R_CARD_53(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 10_000)
		e.driveByHand() // from here no node runner applies anything
		auth := e.cdQueue(t, card, "authorization", cobj{"amount": 2_000, "currency": cobj{"code": "USD"},
			"merchant": cdMerchant("HARDWARE STORE", "5251")})
		txID := auth["cardTransactionId"].(string)
		expect(t, e.do("GET", "/transactions/"+txID, nil), http.StatusNotFound, "")
		if b := e.cdBalance(t, usd); b.Posted != 10_000 || b.PendingDebits != 0 {
			t.Fatalf("a queued authorization moved money: %+v", b)
		}
		clear := e.cdQueue(t, card, "clearing", cobj{"cardTransactionId": txID, "amount": 2_000})
		reverse := e.cdQueue(t, card, "reversal", cobj{"cardTransactionId": txID})
		if m := e.cdMessage(t, card, auth["id"].(string)); m["status"] != "PENDING" {
			t.Fatalf("message before any runner: %v", m)
		}
		// A transaction neither of the card nor queued for it is not found.
		expect(t, e.cdSim(card, "clearing", cobj{"cardTransactionId": "Transaction:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c", "amount": 1}),
			http.StatusNotFound, "TRANSACTION_NOT_FOUND")

		next := e.restarted()
		for range 3 { // one message of the card per pass: the next waits for the one before
			if n, err := next.ApplyDueMessages(context.Background()); err != nil || n != 1 {
				t.Fatalf("ApplyDueMessages %d %v", n, err)
			}
		}
		if n, err := next.ApplyDueMessages(context.Background()); err != nil || n != 0 {
			t.Fatalf("applied again: %d %v", n, err)
		}
		for _, m := range []map[string]any{auth, clear} {
			if got := e.cdMessage(t, card, m["id"].(string)); got["status"] != "APPLIED" || got["appliedAt"] == nil {
				t.Fatalf("message %v: %v", m["type"], got)
			}
		}
		failed := e.cdMessage(t, card, reverse["id"].(string))
		if f, _ := failed["failure"].(map[string]any); failed["status"] != "FAILED" || f["code"] != "INVALID_STATE_TRANSITION" {
			t.Fatalf("reversal of a settled purchase: %v", failed)
		}
		x := e.cdTx(t, txID)
		if x["status"] != "SETTLED" || acAmount(t, x, "settledAmount") != 2_000 {
			t.Fatalf("after the queue: %v", x)
		}
		if b := e.cdBalance(t, usd); b.Posted != 8_000 || b.PendingDebits != 0 {
			t.Fatalf("balance %+v", b)
		}
		if types, _ := e.cdTxEvents(t, txID); !slices.Equal(types, []string{"CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"}) {
			t.Fatalf("R-CARD-53: %v", types)
		}
		// Nothing queued now: the impossible message is refused at once.
		expect(t, e.cdSim(card, "reversal", cobj{"cardTransactionId": txID}), http.StatusConflict, "INVALID_STATE_TRANSITION")
		expect(t, e.do("GET", "/sandbox/cards/"+card+"/messages/CardNetworkMessage:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c", nil),
			http.StatusNotFound, "NOT_FOUND")
		e.acAudit(t)
	})
}

// Two nodes share the queue through claims: each message is applied once,
// a card's messages in arrival order, and a message a node claimed before
// dying is taken again by another once its lease has run out.
func TestCards_NetworkClaimsAndLeases(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 100_000)
		e.driveByHand()
		var ids []string
		for i := range 6 {
			m := e.cdQueue(t, card, "authorization", cobj{"amount": 1_000 + i, "currency": cobj{"code": "USD"},
				"merchant": cdMerchant("SHOP", "5999")})
			ids = append(ids, m["cardTransactionId"].(string))
		}
		// A node claims the first message and dies before applying it.
		claimed, err := e.db.ClaimDueCardMessages(context.Background(), 30*time.Second, 1)
		if err != nil || len(claimed) != 1 || claimed[0].TransactionID != ids[0] {
			t.Fatalf("claim %v %v", claimed, err)
		}
		a, b := e.restarted(), e.restarted()
		if n, _ := a.ApplyDueMessages(context.Background()); n != 0 {
			t.Fatalf("applied %d behind a claimed head of the queue", n)
		}
		e.db.SetClock(func() time.Time { return time.Now().Add(time.Minute) }) // the lease runs out
		t.Cleanup(func() { e.db.SetClock(time.Now) })
		var wg sync.WaitGroup
		for _, svc := range []*cards.Service{a, b} {
			wg.Go(func() {
				for {
					n, err := svc.ApplyDueMessages(context.Background())
					if err != nil {
						t.Errorf("apply: %v", err)
						return
					}
					if pending, _ := e.db.Read().PendingCardMessages(context.Background(), e.acTenant()); n == 0 && pending == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		var held int64
		for i, id := range ids {
			x := e.cdTx(t, id)
			held += int64(1_000 + i)
			if types, _ := e.cdTxEvents(t, id); x["status"] != "AUTHORIZED" || !slices.Equal(types, []string{"CARD_TRANSACTION.AUTHORIZED"}) {
				t.Fatalf("authorization %d: %v %v", i, x["status"], types)
			}
			if i > 0 && cdTime(t, x, "createdAt").Before(cdTime(t, e.cdTx(t, ids[i-1]), "createdAt")) {
				t.Fatalf("authorization %d applied before %d", i, i-1)
			}
		}
		if bal := e.cdBalance(t, usd); bal.PendingDebits != held {
			t.Fatalf("pending debits %d, want %d: a message applied twice or not at all", bal.PendingDebits, held)
		}
		e.acAudit(t)
	})
}

func cdTime(t *testing.T, m map[string]any, field string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, m[field].(string))
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	return at
}

// An authorization advice is the network telling what it already approved:
// it is never declined, not above the card's limits nor above the funds. An
// increase counts against the card's day (R-CARD-39: later authorizations
// decline on it), is held as far as the funding account covers it, and what
// it could not hold is pulled at clearing, EXCEPTION when still uncovered
// (R-CARD-38: clearing may settle higher). docs/cards.md.
func TestCards_AdviceIsNeverDeclined_R_CARD_38_R_CARD_39(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the day's spend is counted across the test
		_, usd, card := e.cdFunded(t, 2_000, "maxSpendPerTransaction", 1_000, "maxSpendPerDay", 2_500)
		first := e.cdAuth(t, card, 900)["id"].(string)
		r := e.cdSim(card, "authorization_advice", cobj{"cardTransactionId": first, "amount": 1_500}) // above the per-transaction limit
		if x := r.JSON(t)["transaction"].(map[string]any); acAmount(t, x, "authorizedAmount") != 900 {
			t.Fatalf("the 202 shows the transaction as accepted, not as applied: %v", x["authorizedAmount"])
		}
		msg := r.JSON(t)["message"].(map[string]any)["id"].(string)
		x := e.cdSent(t, r)
		if x["status"] != "AUTHORIZED" || acAmount(t, x, "authorizedAmount") != 1_500 || e.cdBalance(t, usd).PendingDebits != 1_500 {
			t.Fatalf("advice above the limit: %v %v %+v", x["status"], x["authorizedAmount"], e.cdBalance(t, usd))
		}
		if m := e.cdMessage(t, card, msg); m["status"] != "APPLIED" {
			t.Fatalf("advice message %v", m)
		}
		if x := e.cdAuth(t, card, 500); x["status"] != "AUTHORIZED" { // day: 1_500 + 500; funds: 500 left
			t.Fatalf("second authorization %v %v", x["status"], x["cardDeclinedReason"])
		}
		// Above the funds (nothing available): taken, nothing more held.
		x = e.cdOn(t, card, "authorization_advice", first, "amount", 2_500)
		if x["status"] != "AUTHORIZED" || acAmount(t, x, "authorizedAmount") != 2_500 || e.cdBalance(t, usd).PendingDebits != 2_000 {
			t.Fatalf("advice above the funds: %v %+v", x["status"], e.cdBalance(t, usd))
		}
		// R-CARD-39: the day now counts 3_000 of 2_500.
		if x := e.cdAuth(t, card, 1); x["cardDeclinedReason"] != "SPEND_LIMIT_EXCEEDED" {
			t.Fatalf("after the advices: %v %v", x["status"], x["cardDeclinedReason"])
		}
		// R-CARD-38: the clearing at the advised total posts the hold and
		// cannot pull the rest: EXCEPTION, the account charged what it held.
		x = e.cdOn(t, card, "clearing", first, "amount", 2_500)
		if x["status"] != "EXCEPTION" || acAmount(t, x, "settledAmount") != 1_500 {
			t.Fatalf("uncovered clearing %v %v", x["status"], x["settledAmount"])
		}
		if b := e.cdBalance(t, usd); b.Posted != 500 || b.PendingDebits != 500 {
			t.Fatalf("balance %+v", b)
		}
		// Impossible advices are still refused: below what cleared, or on a
		// closed transaction.
		expect(t, e.cdSim(card, "authorization_advice", cobj{"cardTransactionId": first, "amount": 3_000}), http.StatusConflict, "INVALID_STATE_TRANSITION")
		e.acAudit(t)
	})
}

// Returns queued behind the clearing they need: the first applies, the
// second (more than is left to return by then) is FAILED with the
// refusal's INVALID_INPUT and moves nothing; the card transaction it would
// have created never exists, so nothing can name it (R-CARD-51).
func TestCards_QueuedReturnFails_R_CARD_51(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, usd, card := e.cdFunded(t, 5_000)
		e.driveByHand()
		auth := e.cdQueue(t, card, "authorization", cobj{"amount": 1_000, "currency": cobj{"code": "USD"},
			"merchant": cdMerchant("BOOKS", "5942")})
		txID := auth["cardTransactionId"].(string)
		e.cdQueue(t, card, "clearing", cobj{"cardTransactionId": txID, "amount": 1_000})
		ok := e.cdQueue(t, card, "return", cobj{"cardTransactionId": txID, "amount": 600})
		bad := e.cdQueue(t, card, "return", cobj{"cardTransactionId": txID, "amount": 600})
		e.cdApply(t)
		if m := e.cdMessage(t, card, ok["id"].(string)); m["status"] != "APPLIED" {
			t.Fatalf("first return %v", m)
		}
		m := e.cdMessage(t, card, bad["id"].(string))
		if f, _ := m["failure"].(map[string]any); m["status"] != "FAILED" || f["code"] != "INVALID_INPUT" {
			t.Fatalf("second return %v", m)
		}
		orig := e.cdTx(t, txID)
		if orig["status"] != "SETTLED" || acAmount(t, orig, "refundedAmount") != 600 || e.cdBalance(t, usd).Posted != 4_600 {
			t.Fatalf("after the returns: %v %v %+v", orig["status"], orig["refundedAmount"], e.cdBalance(t, usd))
		}
		expect(t, e.do("GET", "/transactions/"+bad["cardTransactionId"].(string), nil), http.StatusNotFound, "")
		expect(t, e.cdSim(card, "return_reversal", cobj{"cardTransactionId": bad["cardTransactionId"]}), http.StatusNotFound, "TRANSACTION_NOT_FOUND")
		if x := e.cdTx(t, ok["cardTransactionId"].(string)); x["originalTransactionId"] != txID || x["direction"] != "CREDIT" {
			t.Fatalf("R-CARD-51: return row %v", x)
		}
		e.acAudit(t)
	})
}
