package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// The "Done when", stablecoin part: link a sandbox provider
// account, register a stablecoin, mint 1,000.00 against a wire (funding
// instructions, then completion by the sandbox provider, webhooks), burn
// 250.00 to a bank account, list the operations; supply and ledger agree.
func TestStablecoinsDoneWhen(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		rc := newHookReceiver(t)
		e.setWebhookEndpoint(t, rc.URL)
		link := e.scLink(t, "acme-client")
		if link["status"] != "ACTIVE" || link["providerEnvironment"] != "SANDBOX" {
			t.Fatalf("link: %v", link)
		}
		if _, ok := link["apiClientSecret"]; ok {
			t.Fatal("the secret came back")
		}
		coin := e.scRegister(t, "ACME", "btkn1acme")
		coinID := coin["id"].(string)
		if coin["symbol"] != "ACME" || coin["decimals"] != float64(6) || coin["issuanceStatus"] != "PROVISIONED" {
			t.Fatalf("coin: %v", coin)
		}
		wallet, bank := e.scSpark(t), e.scBank(t, "123456789")

		r := e.do("POST", "/stablecoins/"+coinID+"/mints", scMintBody("1000000000", wallet), scKey())
		expect(t, r, http.StatusCreated, "")
		mint := r.JSON(t)
		fi, _ := mint["fundingInstructions"].(map[string]any)
		if mint["status"] != "PENDING_FUNDING" || fi["rail"] != "WIRE" || fi["amount"] != "100000" || fi["accountNumber"] == nil {
			t.Fatalf("mint: %v", mint)
		}
		defer func() {
			if t.Failed() {
				t.Log(e.logs.String())
			}
		}()
		mint = e.scWait(t, mint["id"].(string), "COMPLETED")
		if mint["fundingInstructions"] != nil || mint["providerStatus"] != "complete" {
			t.Fatalf("completed mint: %v", mint)
		}
		want := []string{"STABLECOIN_OPERATION.PENDING_FUNDING", "STABLECOIN_OPERATION.PENDING_PROVIDER",
			"STABLECOIN_OPERATION.PROCESSING", "STABLECOIN_OPERATION.COMPLETED"}
		if got := e.scEventTypes(t, mint["id"].(string)); !slices.Equal(got, want) {
			t.Fatalf("mint events %v, want %v", got, want)
		}
		// The platform's webhook receives the completion, carrying the operation.
		waitUntil(t, func() bool {
			for _, d := range rc.deliveries() {
				b := string(d.Body)
				if strings.Contains(b, `"STABLECOIN_OPERATION.COMPLETED"`) && strings.Contains(b, mint["id"].(string)) {
					return true
				}
			}
			return false
		})
		if got := e.scSupply(t, coinID); got != 1_000_000_000 {
			t.Fatalf("supply after the mint: %d", got)
		}

		r = e.do("POST", "/stablecoins/"+coinID+"/burns", scBurnBody("250000000", wallet, bank, "ACH_CREDIT"), scKey())
		expect(t, r, http.StatusCreated, "")
		burn := r.JSON(t)
		fi, _ = burn["fundingInstructions"].(map[string]any)
		ed, _ := burn["estimatedDelivery"].(map[string]any)
		if burn["status"] != "PENDING_FUNDING" || fi["network"] != "SPARK" || fi["valueType"] != "ACME" ||
			ed["amount"] != "25000" || ed["currency"] != "USD" {
			t.Fatalf("burn: %v", burn)
		}
		e.scWait(t, burn["id"].(string), "COMPLETED")
		if got := e.scSupply(t, coinID); got != 750_000_000 {
			t.Fatalf("supply after the burn: %d", got)
		}

		r = e.do("GET", "/stablecoins/"+coinID+"/operations", nil)
		expect(t, r, http.StatusOK, "")
		list := r.JSON(t)
		data := list["data"].([]any)
		if len(data) != 2 || list["totalCount"] != float64(2) || data[0].(map[string]any)["operationType"] != "BURN" {
			t.Fatalf("operations: %v", list)
		}
		r = e.do("GET", "/stablecoins/"+coinID+"/operations?operationType=MINT", nil)
		expect(t, r, http.StatusOK, "")
		if d := r.JSON(t)["data"].([]any); len(d) != 1 || d[0].(map[string]any)["operationType"] != "MINT" {
			t.Fatalf("mints: %v", d)
		}
		e.acAudit(t)
	})
}
