package httpapi

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/passkey/passkeytest"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

// The "Done when", as a new user would go, as far as this server
// implements it: an EMAIL_OTP credential verified through HPKE, a session,
// a funded wallet, a quote executed with a stamp, a second credential that
// revokes the first, a delegated key created and revoked, the session
// refreshed and revoked, a passkey and an OAuth credential added (real
// WebAuthn ceremony, sandbox OIDC issuer) with the passkey revoked by the
// OAuth credential's session, the wallet exported and its key decrypted.
func TestWallets_DoneWhenFlow(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.qtWebhook(t)
		c := e.wlSetup(t)
		owner := e.wlOwner(t, c)

		// 1. A credential, verified by email OTP through HPKE: a session.
		email := c.createOTP("EMAIL_OTP")
		sess, key := c.login(email, wallets.SandboxCode(6))

		// 2. Fund the wallet in sandbox; execute a quote from it with a stamp.
		e.acFund(t, c.accountID, 3_000_000)
		usd := e.acAccount(t, owner, "USD")["id"].(string)
		q := e.qtQuote(t, qtBody(c.accountID, usd, "SENDING", 1_000_000))
		payload := q["paymentInstructions"].([]any)[0].(map[string]any)["accountOrWalletInfo"].(map[string]any)["payloadToSign"].(string)
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil), http.StatusUnauthorized, "WALLET_SIGNATURE_MISSING")
		expect(t, e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil,
			withHeader(signedretry.HeaderSignature, stamp(t, key, payload))), http.StatusOK, "")
		if bal := acAmount(t, e.wlWallet(t, owner), "balance"); bal != 2_000_000 {
			t.Fatalf("wallet balance %d", bal)
		}

		// 3. A second credential (signed by the first's session), verified;
		// it revokes the first.
		r := c.signed("POST", "/auth/credentials", cobj{"type": "SMS_OTP", "accountId": c.accountID}, key)
		expect(t, r, http.StatusCreated, "")
		sms := r.JSON(t)
		_, smsKey := c.login(sms, wallets.SandboxCode(6))
		expect(t, c.signed("DELETE", "/auth/credentials/"+email["id"].(string), nil, smsKey), http.StatusNoContent, "")
		// The first credential's session ended with it.
		expect(t, c.do("DELETE", "/auth/sessions/"+sess["id"].(string), nil), http.StatusNotFound, "SESSION_NOT_FOUND")

		// 3b. A passkey (WebAuthn registration and assertion) and an OAuth
		// credential (sandbox issuer's ID token); the OAuth credential's
		// session revokes the passkey (R-EWA-13: not the passkey itself),
		// whose session ends with it.
		e.wlPasskeyRP(t)
		auth := passkeytest.New(passkeyRP, passkeyOrigin)
		pk := c.addPasskey(auth, smsKey)
		pkKey, _ := wallets.NewKey()
		r = c.passkeyLogin(pk, auth, wallets.CompressedHex(&pkKey.PublicKey))
		expect(t, r, http.StatusOK, "")
		pkSession := r.JSON(t)["id"].(string)
		r = c.signed("POST", "/auth/credentials", cobj{"type": "OAUTH", "accountId": c.accountID,
			"oidcToken": c.idToken("jane-google", oauthAud, "", nil)}, pkKey)
		expect(t, r, http.StatusCreated, "")
		oauthKey, _ := wallets.NewKey()
		expect(t, c.oauthLogin(r.JSON(t), "jane-google", wallets.CompressedHex(&oauthKey.PublicKey)), http.StatusOK, "")
		expect(t, c.signed("DELETE", "/auth/credentials/"+pk["id"].(string), nil, pkKey), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		expect(t, c.signed("DELETE", "/auth/credentials/"+pk["id"].(string), nil, oauthKey), http.StatusNoContent, "")
		expect(t, c.do("DELETE", "/auth/sessions/"+pkSession, nil), http.StatusNotFound, "SESSION_NOT_FOUND")

		// 4. A delegated key, created and revoked.
		agent, _ := e.agCreate(t, owner, agPolicy(5000, 20_000, 1_000_000, agAllPerms...))
		r = c.signed("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "agent key",
			"agentId": agent["id"]}, smsKey)
		expect(t, r, http.StatusCreated, "")
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+r.JSON(t)["id"].(string), nil), http.StatusNoContent, "")

		// 5. Refresh the session, then revoke the new one with its own key.
		var smsSession string
		for _, s := range c.do("GET", "/auth/sessions?accountId="+c.accountID, nil).JSON(t)["data"].([]any) {
			if s.(map[string]any)["type"] == "SMS_OTP" {
				smsSession = s.(map[string]any)["id"].(string)
			}
		}
		next, _ := wallets.NewKey()
		r = c.signed("POST", "/auth/sessions/"+smsSession+"/refresh", cobj{"clientPublicKey": wallets.CompressedHex(&next.PublicKey)}, smsKey)
		expect(t, r, http.StatusOK, "")
		refreshed := r.JSON(t)["id"].(string)

		// 6. Export the wallet and decrypt its key (signed by the refreshed session).
		eph := ephemeral(t)
		r = c.signed("POST", "/internal-accounts/"+c.accountID+"/export", cobj{"clientPublicKey": hex.EncodeToString(eph.PublicKey().Bytes())}, next)
		expect(t, r, http.StatusOK, "")
		pt, err := wallets.OpenBundle(eph, wallets.InfoExport, r.JSON(t)["encryptedWalletCredentials"].(string))
		if err != nil {
			t.Fatal(err)
		}
		var exported struct{ AccountID, PublicKey, PrivateKey string }
		if err := json.Unmarshal(pt, &exported); err != nil || exported.AccountID != c.accountID || len(exported.PrivateKey) != 64 {
			t.Fatalf("exported %s %v", pt, err)
		}

		expect(t, c.signed("DELETE", "/auth/sessions/"+refreshed, nil, next), http.StatusNoContent, "")
		// With no session left, nothing can be signed: the stale key is refused.
		expect(t, c.signed("PATCH", "/internal-accounts/"+c.accountID, cobj{"privateEnabled": true}, next),
			http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		e.acAudit(t)
	})
}
