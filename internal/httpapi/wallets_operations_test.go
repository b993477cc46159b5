package httpapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// R-IACCT-08, R-IACCT-09, R-IACCT-17, R-AUTH-13: privateEnabled changes by
// signed retry only; unknown ids are ACCOUNT_NOT_FOUND.
func TestWallets_Privacy_R_IACCT_08_R_IACCT_09_R_IACCT_17(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		path := "/internal-accounts/" + c.accountID
		body := cobj{"privateEnabled": true}
		payload, rid := c.first("PATCH", path, body) // R-IACCT-08
		if e.wlWallet(t, e.wlOwner(t, c))["privateEnabled"] != false {
			t.Fatal("the first step changed the account")
		}
		r := c.retry("PATCH", path, body, key, payload, rid)
		expect(t, r, http.StatusOK, "") // R-IACCT-09
		if r.JSON(t)["privateEnabled"] != true || r.JSON(t)["type"] != "EMBEDDED_WALLET" {
			t.Fatalf("updated account %s", r.Body)
		}
		expect(t, c.do("PATCH", "/internal-accounts/InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", body),
			http.StatusNotFound, "ACCOUNT_NOT_FOUND") // R-IACCT-17
		usd := e.acAccount(t, "", "USD")["id"].(string)
		expect(t, c.do("PATCH", "/internal-accounts/"+usd, body), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, c.do("PATCH", path, cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, c.do("PATCH", path, body, withCreds(e.production)), http.StatusNotFound, "ACCOUNT_NOT_FOUND")
	})
}

// wlOwner is the customer of a client's wallet.
func (e *env) wlOwner(t *testing.T, c *walletClient) string {
	t.Helper()
	for _, a := range e.acList(t, acCustomers, "type=EMBEDDED_WALLET") {
		if a["id"] == c.accountID {
			return a["customerId"].(string)
		}
	}
	t.Fatal("wallet not listed")
	return ""
}

// R-IACCT-10, R-IACCT-11, R-IACCT-13, R-IACCT-14: export answers 202, then
// the wallet's key sealed to the client's ephemeral key; another key on the
// retry is refused; a delivered export burns its Request-Id.
func TestWallets_Export_R_IACCT_10_R_IACCT_11_R_IACCT_13_R_IACCT_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		path := "/internal-accounts/" + c.accountID + "/export"
		eph := ephemeral(t)
		body := cobj{"clientPublicKey": hex.EncodeToString(eph.PublicKey().Bytes())}
		payload, rid := c.first("POST", path, body) // R-IACCT-10
		other := ephemeral(t)
		// R-IACCT-14
		expect(t, c.retry("POST", path, cobj{"clientPublicKey": hex.EncodeToString(other.PublicKey().Bytes())}, key, payload, rid),
			http.StatusUnauthorized, "WALLET_SIGNATURE_BODY_MISMATCH")
		r := c.retry("POST", path, body, key, payload, rid)
		expect(t, r, http.StatusOK, "") // R-IACCT-11
		sealed := r.JSON(t)["encryptedWalletCredentials"].(string)
		if _, err := wallets.OpenBundle(other, wallets.InfoExport, sealed); err == nil {
			t.Fatal("another key opens the export")
		}
		pt, err := wallets.OpenBundle(eph, wallets.InfoExport, sealed)
		if err != nil {
			t.Fatal(err)
		}
		var creds struct{ AccountID, PublicKey, PrivateKey string }
		if err := json.Unmarshal(pt, &creds); err != nil || creds.AccountID != c.accountID {
			t.Fatalf("%s %v", pt, err)
		}
		d, _ := hex.DecodeString(creds.PrivateKey)
		priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
		if err != nil || wallets.CompressedHex(&priv.PublicKey) != creds.PublicKey {
			t.Fatalf("exported key does not match its public key: %v", err)
		}
		stored, err := e.db.Read().GetWalletKey(t.Context(), e.acTenant(), c.accountID)
		if err != nil || stored.PublicKey != creds.PublicKey {
			t.Fatalf("exported key is not the wallet's: %v", err)
		}
		// R-IACCT-13
		expect(t, c.retry("POST", path, body, key, payload, rid), http.StatusUnauthorized, "REQUEST_ALREADY_COMPLETED")
		// The private key never appears in any other answer.
		for _, p := range []string{"/auth/sessions?accountId=" + c.accountID, "/auth/credentials?accountId=" + c.accountID} {
			if strings.Contains(string(c.do("GET", p, nil).Body), creds.PrivateKey) {
				t.Fatal("private key in a response")
			}
		}
	})
}

var compressedHex = regexp.MustCompile(`^0[23][0-9a-f]{64}$`)

// R-EWA-19, R-EWA-20, R-EWA-21, R-EWA-23, R-EWA-24, R-EWA-25, R-EWA-26,
// R-EWA-27, R-EWA-28, R-EWA-29: delegated keys are validated, created by
// signed retry as ACTIVE with a compressed public key and no private key,
// listed by account with every status, read, and revoked.
func TestWallets_DelegatedKeys(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c, _, _, key := e.wlLoggedIn(t)
		card := e.cdFixtureCard(t, e.wlOwner(t, c), c.accountID, "ACTIVE") // a card the wallet funds
		agent := "Agent:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1c"
		base := cobj{"internalAccountId": c.accountID, "nickname": "Card payments key", "cardId": card}
		for name, bad := range map[string]cobj{
			"no account":  cwith(base, "internalAccountId", nil),             // R-EWA-19
			"no nickname": cwith(base, "nickname", nil),                      // R-EWA-19
			"empty name":  cwith(base, "nickname", ""),                       // R-EWA-19
			"long name":   cwith(base, "nickname", strings.Repeat("n", 257)), // R-EWA-19
			"both":        cwith(base, "agentId", agent),                     // R-EWA-20
			"neither":     cwith(base, "cardId", nil),                        // R-EWA-20
		} {
			if r := c.do("POST", "/auth/delegated-keys", bad); r.Status != http.StatusBadRequest {
				t.Errorf("%s: status %d", name, r.Status)
			}
		}
		if r := c.do("POST", "/auth/delegated-keys", cwith(base, "nickname", strings.Repeat("n", 256))); r.Status != http.StatusAccepted {
			t.Fatalf("256-character nickname: %d", r.Status)
		}
		r := c.signed("POST", "/auth/delegated-keys", base, key) // R-EWA-21
		expect(t, r, http.StatusCreated, "")
		dk := r.JSON(t)
		// R-EWA-23, R-EWA-24, R-EWA-25
		if dk["status"] != "ACTIVE" || dk["cardId"] != card || dk["accountId"] != c.accountID || dk["agentId"] != nil {
			t.Fatalf("key %v", dk)
		}
		if !compressedHex.MatchString(dk["publicKey"].(string)) {
			t.Fatalf("publicKey %v", dk["publicKey"])
		}
		for k := range dk {
			if strings.Contains(strings.ToLower(k), "private") || strings.Contains(strings.ToLower(k), "secret") {
				t.Fatalf("key material field %s", k)
			}
		}
		r = c.signed("POST", "/auth/delegated-keys", cwith(base, "cardId", nil, "agentId", agent), key)
		expect(t, r, http.StatusCreated, "")
		if ak := r.JSON(t); ak["agentId"] != agent || ak["cardId"] != nil {
			t.Fatalf("agent key %v", ak)
		}
		// An unrelated key cannot create one.
		stranger, _ := wallets.NewKey()
		expect(t, c.signed("POST", "/auth/delegated-keys", base, stranger), http.StatusUnauthorized, "WALLET_SIGNATURE_INVALID")
		id := dk["id"].(string)
		expect(t, c.do("GET", "/auth/delegated-keys/"+id, nil), http.StatusOK, "")                  // R-EWA-28
		expect(t, c.do("GET", "/auth/delegated-keys", nil), http.StatusBadRequest, "INVALID_INPUT") // R-EWA-26
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+id, nil), http.StatusNoContent, "")        // R-EWA-29
		if got := c.do("GET", "/auth/delegated-keys/"+id, nil).JSON(t); got["status"] != "REVOKED" {
			t.Fatalf("after revoke: %v", got)
		}
		r = c.do("GET", "/auth/delegated-keys?accountId="+c.accountID, nil) // R-EWA-27
		statuses := map[string]int{}
		for _, x := range r.JSON(t)["data"].([]any) {
			statuses[x.(map[string]any)["status"].(string)]++
		}
		if statuses["REVOKED"] != 1 || statuses["ACTIVE"] != 1 {
			t.Fatalf("listed statuses %v", statuses)
		}
		expect(t, c.do("GET", "/auth/delegated-keys/"+id, nil, withCreds(e.production)), http.StatusNotFound, "NOT_FOUND")
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+id, nil, withCreds(e.production)), http.StatusNotFound, "NOT_FOUND")
	})
}
