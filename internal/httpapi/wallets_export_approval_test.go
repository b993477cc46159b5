package httpapi

import (
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// R-IACCT-12, R-IACCT-15, R-IACCT-13: when the platform requires approval
// of exports, the signed retry answers 200 status PROCESSING and so does
// its byte-identical re-send, until the platform approves; the approval
// sends wallet_operation.completed, and the next identical re-send
// delivers the credentials and burns the Request-Id.
func TestWallets_ExportApproval_R_IACCT_12_R_IACCT_15(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		expect(t, e.do("PATCH", "/config", cobj{"embeddedWalletConfig": cobj{"exportRequiresApproval": true}}), http.StatusOK, "")
		path := "/internal-accounts/" + c.accountID + "/export"
		eph := ephemeral(t)
		body := cobj{"clientPublicKey": hex.EncodeToString(eph.PublicKey().Bytes())}
		payload, rid := c.first("POST", path, body)
		// Approving before the signed retry: nothing waits yet.
		approve := func(requestID string) resp {
			return e.do("POST", path+"/approve", cobj{"requestId": requestID})
		}
		expect(t, approve(rid), http.StatusConflict, "CONFLICT")
		for range 2 { // R-IACCT-12: PROCESSING, and again on the identical re-send
			r := c.retry("POST", path, body, key, payload, rid)
			expect(t, r, http.StatusOK, "")
			if m := r.JSON(t); m["status"] != "PROCESSING" || m["encryptedWalletCredentials"] != nil {
				t.Fatalf("gated export answered %v", m)
			}
		}
		if n := countEvents(e.acEvents(t, c.accountID), "wallet_operation.completed"); n != 0 {
			t.Fatalf("%d events before approval", n)
		}
		// Only this wallet's waiting export can be approved.
		expect(t, approve("Request:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"), http.StatusNotFound, "REQUEST_NOT_FOUND")
		expect(t, e.do("POST", path+"/approve", cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, approve(rid), http.StatusNoContent, "")
		expect(t, approve(rid), http.StatusNoContent, "") // approving again changes nothing
		// R-IACCT-15: one wallet_operation.completed.
		evs := e.acEvents(t, c.accountID)
		if n := countEvents(evs, "wallet_operation.completed"); n != 1 {
			t.Fatalf("%d wallet_operation.completed events: %v", n, evs)
		}
		// The identical re-send now delivers; a changed key is still refused.
		other := ephemeral(t)
		expect(t, c.retry("POST", path, cobj{"clientPublicKey": hex.EncodeToString(other.PublicKey().Bytes())}, key, payload, rid),
			http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
		r := c.retry("POST", path, body, key, payload, rid)
		expect(t, r, http.StatusOK, "")
		if _, err := wallets.OpenBundle(eph, wallets.InfoExport, r.JSON(t)["encryptedWalletCredentials"].(string)); err != nil {
			t.Fatal(err)
		}
		// R-IACCT-13: delivered, the Request-Id is burned.
		expect(t, c.retry("POST", path, body, key, payload, rid), http.StatusUnauthorized, "REQUEST_ALREADY_COMPLETED")
		expect(t, approve(rid), http.StatusConflict, "CONFLICT")
	})
}

func countEvents(evs []map[string]any, typ string) int {
	n := 0
	for _, ev := range evs {
		if ev["type"] == typ {
			n++
		}
	}
	return n
}
