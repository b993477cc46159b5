package httpapi

import (
	"context"
	"net/http"
	"testing"

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
	expect(t, r, http.StatusAccepted, "")
	cdNoPAN(t, r.Body)
	return r.JSON(t)["transaction"].(map[string]any)
}

// cdOn simulates op on a card transaction and returns it as left.
func (e *env) cdOn(t *testing.T, cardID, op, txID string, extra ...any) map[string]any {
	t.Helper()
	body := cobj{"cardTransactionId": txID}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	r := e.cdSim(cardID, op, body)
	expect(t, r, http.StatusAccepted, "")
	return r.JSON(t)["transaction"].(map[string]any)
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
