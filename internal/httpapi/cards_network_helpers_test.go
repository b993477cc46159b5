package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/ledger"
)

// cdSim sends a card network simulation.
func (e *env) cdSim(cardID, op string, body any) resp {
	return e.do("POST", "/sandbox/cards/"+cardID+"/simulate/"+op, body)
}

func cdMerchant(descriptor, mcc string) cobj {
	return cobj{"descriptor": descriptor, "mcc": mcc, "country": "US", "city": "San Francisco", "state": "CA"}
}

// cdAuth authorizes amount (USD) at a coffee shop (or the given merchant)
// and returns the card transaction.
func (e *env) cdAuth(t *testing.T, cardID string, amount int64, merchant ...cobj) map[string]any {
	t.Helper()
	m := cdMerchant("BLUE BOTTLE COFFEE SF", "5814")
	if len(merchant) > 0 {
		m = merchant[0]
	}
	r := e.cdSim(cardID, "authorization", cobj{"amount": amount, "currency": cobj{"code": "USD"}, "merchant": m})
	cdNoPAN(t, r.Body)
	return e.cdSent(t, r)
}

// cdSent takes a simulation's 202, has the card runner apply what is
// queued (cdApply) and answers the card transaction the message created or
// acted on, as it then is.
func (e *env) cdSent(t *testing.T, r resp) map[string]any {
	t.Helper()
	expect(t, r, http.StatusAccepted, "")
	m, _ := r.JSON(t)["message"].(map[string]any)
	if m == nil || m["status"] != "PENDING" {
		t.Fatalf("the simulation's message: %s", r.Body)
	}
	e.cdApply(t)
	return e.cdTx(t, m["cardTransactionId"].(string))
}

// cdApply drives the card runner by hand until no message of the tenant is
// queued. A message the node's own runner has claimed meanwhile is its to
// finish: the loop waits for that (a condition, not a delay).
func (e *env) cdApply(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := e.srv.CardService().ApplyDueMessages(ctx); err != nil {
			t.Fatalf("applying card messages: %v", err)
		}
		n, err := e.db.Read().PendingCardMessages(ctx, e.acTenant())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d card messages still queued", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// cdMessage reads a card network message.
func (e *env) cdMessage(t *testing.T, cardID, messageID string) map[string]any {
	t.Helper()
	r := e.do("GET", "/sandbox/cards/"+cardID+"/messages/"+messageID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// cdOn simulates op on a card transaction and returns it as left.
func (e *env) cdOn(t *testing.T, cardID, op, txID string, extra ...any) map[string]any {
	t.Helper()
	body := cobj{"cardTransactionId": txID}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return e.cdSent(t, e.cdSim(cardID, op, body))
}

// cdBalance is an account's ledger balance.
func (e *env) cdBalance(t *testing.T, accountID string) ledger.Balance {
	t.Helper()
	b, err := ledger.New(e.db).Balance(context.Background(), e.acTenant(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cdTx reads a transaction.
func (e *env) cdTx(t *testing.T, txID string) map[string]any {
	t.Helper()
	r := e.do("GET", "/transactions/"+txID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// cdTxEvents lists the CARD_TRANSACTION.* events of a transaction: type and
// data.
func (e *env) cdTxEvents(t *testing.T, txID string) ([]string, []map[string]any) {
	t.Helper()
	var types []string
	var data []map[string]any
	for _, ev := range e.acEvents(t, txID) {
		types = append(types, ev["type"].(string))
		data = append(data, ev["data"].(map[string]any))
	}
	return types, data
}

// cdFunded sets up an APPROVED customer with a funded USD account and an
// ACTIVE card on it.
func (e *env) cdFunded(t *testing.T, amount int64, extra ...any) (cust, usd, cardID string) {
	t.Helper()
	cust, usd = e.cdSetup(t)
	e.acFund(t, usd, amount)
	return cust, usd, e.cdActive(t, cust, usd, extra...)["id"].(string)
}
