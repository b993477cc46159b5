package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/platforms"
)

// Tenancy: another platform's sandbox and this platform's production see
// none of a card, its card transactions or its simulations (404), and
// nothing changes.
func TestCards_TenantIsolation_R_CARD_30(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		other, err := platforms.Create(context.Background(), e.db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		cust, usd, card := e.cdFunded(t, 5_000)
		tx := e.cdAuth(t, card, 1_000)["id"].(string)
		for name, creds := range map[string]string{"other platform": other.SandboxToken, "production": e.production} {
			expect(t, e.do("GET", "/cards/"+card, nil, withCreds(creds)), http.StatusNotFound, "NOT_FOUND")
			expect(t, e.do("PATCH", "/cards/"+card, cobj{"status": "FROZEN"}, withCreds(creds)), http.StatusNotFound, "NOT_FOUND")
			expect(t, e.do("GET", "/transactions/"+tx, nil, withCreds(creds)), http.StatusNotFound, "")
			if n := e.do("GET", "/cards", nil, withCreds(creds)).JSON(t)["totalCount"]; n != float64(0) {
				t.Fatalf("%s lists %v cards", name, n)
			}
			if name == "other platform" {
				expect(t, e.do("POST", "/sandbox/cards/"+card+"/simulate/clearing", cobj{"cardTransactionId": tx, "amount": 1_000},
					withCreds(creds)), http.StatusNotFound, "NOT_FOUND")
				expect(t, e.cdIssue(cobj{"customerId": cust, "fundingSource": usd}, withCreds(creds)), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
			}
		}
		if c := e.cdGet(t, card); c["status"] != "ACTIVE" || e.cdTx(t, tx)["status"] != "AUTHORIZED" {
			t.Fatal("another tenant changed the card")
		}
	})
}
