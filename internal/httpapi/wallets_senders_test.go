package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// The sandbox sends no email or SMS: it records each code's message
// durably, where a sandbox client (and this test) reads it. Production
// without a configured sender refuses OTP credentials before storing
// anything.
func TestWallets_OTPMessages(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.wlSetup(t)
		cred := c.createOTP("EMAIL_OTP")
		expect(t, c.do("POST", "/auth/credentials/"+cred["id"].(string)+"/challenge", nil), http.StatusOK, "")
		msgs, err := e.db.Read().SandboxMessages(context.Background(), e.acTenant(), "jane@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 2 || msgs[0].Channel != "EMAIL_OTP" || !strings.Contains(msgs[1].Body, "000000") ||
			!strings.Contains(msgs[0].Subject, "Acme Wallet") {
			t.Fatalf("sandbox messages %+v", msgs)
		}

		prod := withCreds(e.production)
		e.wlEnableIn(t, prod)
		pc := &walletClient{e: e, t: t, accountID: e.wlProdWallet(t, prod)}
		r := pc.do("POST", "/auth/credentials", cobj{"type": "EMAIL_OTP", "accountId": pc.accountID}, prod)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(r.JSON(t)["reason"].(string), "sender") {
			t.Fatalf("refusal %s", r.Body)
		}
		if list := pc.do("GET", "/auth/credentials?accountId="+pc.accountID, nil, prod).JSON(t)["data"].([]any); len(list) != 0 {
			t.Fatalf("refused credential stored: %v", list)
		}
	})
}
