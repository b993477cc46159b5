package httpapi

import (
	"bytes"
	"crypto/ecdh"
	"crypto/hpke"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/carddata"
	"github.com/paymentsd/paymentsd/internal/cards"
)

// cdataSeal encrypts a PIN for a card as a client does: to the key of
// GET /cards/pin-encryption-key.
func (e *env) cdataSeal(t *testing.T, cardID, pin string) carddata.PINEnvelope {
	t.Helper()
	r := e.do("GET", "/cards/pin-encryption-key", nil)
	expect(t, r, http.StatusOK, "")
	raw, err := base64.RawURLEncoding.DecodeString(r.JSON(t)["publicKey"].(string))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ecdh.P256().NewPublicKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	env, err := carddata.SealPIN(pub, cardID, pin)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// cdataSetPIN sets a card's PIN through the API.
func (e *env) cdataSetPIN(t *testing.T, cardID, pin string) map[string]any {
	t.Helper()
	r := e.do("POST", "/cards/"+cardID+"/set-pin", cobj{"encryptedPin": e.cdataSeal(t, cardID, pin)})
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

// cdataEnter enters a PIN at the sandbox network's terminal and returns
// whether it verified and the PIN status after it.
func (e *env) cdataEnter(t *testing.T, cardID, pin string) (bool, string) {
	t.Helper()
	r := e.do("POST", "/sandbox/cards/"+cardID+"/simulate/pin_entry", cobj{"encryptedPin": e.cdataSeal(t, cardID, pin)})
	expect(t, r, http.StatusOK, "")
	m := r.JSON(t)
	return m["pinVerified"].(bool), m["pinStatus"].(string)
}

// cdataOrigin sets the platform's pinTargetOrigin.
func (e *env) cdataOrigin(t *testing.T, origin string) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", cobj{"cardConfigs": cobj{"pinTargetOrigin": origin}}), http.StatusOK, "")
}

// R-CARD-42: POST /cards/{id}/reveal returns a signed short-lived
// panEmbedUrl and expiresAt (optional cssUrl); R-CARD-28: the card resource
// still carries no card number, CVV or reveal URL afterwards.
func TestCardData_Reveal_R_CARD_42_R_CARD_28(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		card := e.cdActive(t, cust, acct)
		id := card["id"].(string)
		before := time.Now()
		r := e.do("POST", "/cards/"+id+"/reveal", cobj{"cssUrl": "https://cdn.example.com/card.css"})
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		u, _ := m["panEmbedUrl"].(string)
		exp, err := time.Parse(time.RFC3339, m["expiresAt"].(string))
		if !strings.Contains(u, "/card-pages/reveal?t=") || err != nil || exp.Before(before) || exp.After(before.Add(6*time.Minute)) {
			t.Fatalf("reveal answer %v", m)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("Cache-Control %q", r.Header.Get("Cache-Control"))
		}
		// Without a body (cssUrl is optional).
		expect(t, e.do("POST", "/cards/"+id+"/reveal", nil), http.StatusOK, "")
		// R-CARD-28: GET, list and PATCH bodies carry no PAN, CVV or URL.
		cdNoPAN(t, e.do("GET", "/cards/"+id, nil).Body)
		cdNoPAN(t, e.do("GET", "/cards", nil).Body)
		cdNoPAN(t, e.cdPatch(id, cobj{"status": "FROZEN"}).Body)
		expect(t, e.do("POST", "/cards/"+id+"/reveal", cobj{"cssUrl": "http://cdn.example.com/card.css"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/cards/"+id+"/reveal", nil, withCreds(e.production)), http.StatusNotFound, "")
		expect(t, e.do("POST", "/cards/Card:0195a2f5-b3e7-7d02-8000-000000000009/reveal", nil), http.StatusNotFound, "")
		expect(t, e.cdPatch(id, cobj{"status": "CLOSED"}), http.StatusOK, "")
		expect(t, e.do("POST", "/cards/"+id+"/reveal", nil), http.StatusConflict, "CARD_NOT_MUTABLE")
	})
}

// R-CARD-43: GET /cards/{id}/pin-entry-url takes no body and returns
// iframeUrl and expiresAt with Cache-Control: no-store; R-CARD-44: it needs
// cardConfigs.pinTargetOrigin.
func TestCardData_PinEntryURL_R_CARD_43_R_CARD_44(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		id := e.cdActive(t, cust, acct)["id"].(string)
		expect(t, e.do("GET", "/cards/"+id+"/pin-entry-url", nil), http.StatusConflict, "CONFLICT") // R-CARD-44
		e.cdataOrigin(t, "https://app.example.com")
		r := e.do("GET", "/cards/"+id+"/pin-entry-url", nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if !strings.Contains(m["iframeUrl"].(string), "/card-pages/pin?t=") || m["expiresAt"] == nil ||
			r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("pin-entry-url %v %v", m, r.Header)
		}
		// Cleared again (null): refused again.
		expect(t, e.do("PATCH", "/config", cobj{"cardConfigs": cobj{"pinTargetOrigin": nil}}), http.StatusOK, "")
		expect(t, e.do("GET", "/cards/"+id+"/pin-entry-url", nil), http.StatusConflict, "CONFLICT")
	})
}

// R-CARD-47: unblock without a PIN is 409. R-CARD-45: set-pin takes a
// client-encrypted PIN block and the PIN is OK. R-CARD-41: three consecutive
// wrong entries make pinStatus BLOCKED and PIN-verified entries decline.
// R-CARD-46: unblock restores the existing PIN and OK; a second unblock
// within seven days is 409 PIN_CHANGE_REQUIRED with
// details.pinUnblockAvailableAt. R-CARD-45 again: set-pin clears BLOCKED.
func TestCardData_PIN_R_CARD_41_R_CARD_45_R_CARD_46_R_CARD_47(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		id := e.cdActive(t, cust, acct)["id"].(string)
		if c := e.cdGet(t, id); c["pinStatus"] != nil {
			t.Fatalf("a new card has pinStatus %v", c["pinStatus"])
		}
		expect(t, e.do("POST", "/cards/"+id+"/pin/unblock", nil), http.StatusConflict, "CONFLICT") // R-CARD-47
		// R-CARD-45
		if c := e.cdataSetPIN(t, id, "2580"); c["pinStatus"] != "OK" {
			t.Fatalf("after set-pin %v", c)
		}
		if ok, st := e.cdataEnter(t, id, "2580"); !ok || st != "OK" {
			t.Fatalf("right PIN: %v %s", ok, st)
		}
		// R-CARD-41
		for i := 1; i <= 3; i++ {
			ok, st := e.cdataEnter(t, id, "1111")
			if ok || st != map[bool]string{true: "BLOCKED", false: "OK"}[i == 3] {
				t.Fatalf("wrong entry %d: %v %s", i, ok, st)
			}
		}
		if c := e.cdGet(t, id); c["pinStatus"] != "BLOCKED" {
			t.Fatalf("after three wrong entries %v", c["pinStatus"])
		}
		if ok, st := e.cdataEnter(t, id, "2580"); ok || st != "BLOCKED" {
			t.Fatalf("right PIN on a blocked PIN: %v %s", ok, st)
		}
		// R-CARD-46
		r := e.do("POST", "/cards/"+id+"/pin/unblock", nil)
		expect(t, r, http.StatusOK, "")
		if c := r.JSON(t); c["pinStatus"] != "OK" || c["pinUnblockAvailableAt"] == nil {
			t.Fatalf("after unblock %v", c)
		}
		if ok, _ := e.cdataEnter(t, id, "2580"); !ok {
			t.Fatal("the existing PIN does not verify after unblock")
		}
		r = e.do("POST", "/cards/"+id+"/pin/unblock", nil)
		expect(t, r, http.StatusConflict, "PIN_CHANGE_REQUIRED")
		// R-ERR-06: PIN_CHANGE_REQUIRED carries details.pinUnblockAvailableAt, a date-time.
		at, _ := r.JSON(t)["details"].(map[string]any)["pinUnblockAvailableAt"].(string)
		if when, err := time.Parse(time.RFC3339, at); err != nil || when.Before(time.Now().Add(6*24*time.Hour)) {
			t.Fatalf("pinUnblockAvailableAt %q %v", at, err)
		}
		// R-CARD-45: set-pin clears BLOCKED (the unblock is used up).
		for i := 0; i < 3; i++ {
			e.cdataEnter(t, id, "9999")
		}
		if c := e.cdataSetPIN(t, id, "3690"); c["pinStatus"] != "OK" {
			t.Fatalf("set-pin on a blocked PIN %v", c)
		}
		if ok, _ := e.cdataEnter(t, id, "3690"); !ok {
			t.Fatal("the new PIN does not verify")
		}
		// Bad blocks: for another card, or malformed; nothing changes.
		other := e.cdataSeal(t, "Card:0195a2f5-b3e7-7d02-8000-000000000009", "1234")
		expect(t, e.do("POST", "/cards/"+id+"/set-pin", cobj{"encryptedPin": other}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/cards/"+id+"/set-pin", cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/cards/"+id+"/set-pin", `{"encryptedPin":{"ephemeralPublicKey":"x","iv":"y","ciphertext":"z"}}`),
			http.StatusBadRequest, "INVALID_INPUT")
		if ok, _ := e.cdataEnter(t, id, "3690"); !ok {
			t.Fatal("a refused set-pin changed the PIN")
		}
		expect(t, e.do("POST", "/cards/"+id+"/set-pin", cobj{"encryptedPin": e.cdataSeal(t, id, "1234")}, withCreds(e.production)),
			http.StatusNotFound, "")
	})
}

// R-CARD-48: POST /cards/{id}/tokenize returns a provisioning payload
// encrypted to the wallet provider's key, a new one per request, for ACTIVE
// cards only.
func TestCardData_Tokenize_R_CARD_48(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		card := e.cdActive(t, cust, acct)
		id := card["id"].(string)
		kem := hpke.DHKEM(ecdh.P256())
		provider, err := kem.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		body := cobj{"walletProvider": "APPLE_PAY", "nonce": "n-1",
			"walletProviderPublicKey": base64.StdEncoding.EncodeToString(provider.PublicKey().Bytes())}
		r := e.do("POST", "/cards/"+id+"/tokenize", body)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Fatal("tokenize answer may be cached")
		}
		enc, _ := base64.StdEncoding.DecodeString(m["ephemeralPublicKey"].(string))
		ct, _ := base64.StdEncoding.DecodeString(m["encryptedData"].(string))
		plain, err := hpke.Open(provider, hpke.HKDFSHA256(), hpke.AES128GCM(), []byte(carddata.ProvisioningInfo), append(enc, ct...))
		if err != nil {
			t.Fatalf("the provider cannot open the payload: %v", err)
		}
		var p struct {
			PAN   string `json:"primaryAccountNumber"`
			Month int    `json:"expirationMonth"`
			Year  int    `json:"expirationYear"`
			Nonce string `json:"nonce"`
			ID    string `json:"provisioningId"`
		}
		if err := json.Unmarshal(plain, &p); err != nil || !strings.HasSuffix(p.PAN, card["last4"].(string)) ||
			float64(p.Month) != card["expMonth"] || float64(p.Year) != card["expYear"] || p.Nonce != "n-1" || p.ID != m["provisioningId"] {
			t.Fatalf("payload %+v %v", p, err)
		}
		cdNoPAN(t, r.Body)
		if bytes.Contains(r.Body, []byte(p.PAN)) {
			t.Fatal("the tokenize answer carries the PAN in clear")
		}
		again := e.do("POST", "/cards/"+id+"/tokenize", body).JSON(t)
		if again["provisioningId"] == m["provisioningId"] || again["encryptedData"] == m["encryptedData"] {
			t.Fatal("two requests gave one payload")
		}
		expect(t, e.do("POST", "/cards/"+id+"/tokenize", cobj{"walletProvider": "APPLE_PAY", "walletProviderPublicKey": "AAAA"}),
			http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/cards/"+id+"/tokenize", cobj{"walletProviderPublicKey": body["walletProviderPublicKey"]}),
			http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.cdPatch(id, cobj{"status": "FROZEN"}), http.StatusOK, "")
		expect(t, e.do("POST", "/cards/"+id+"/tokenize", body), http.StatusConflict, "CONFLICT")
		// A EUR card: its program has supportsDigitalWalletTokenization false.
		eur := e.cdActive(t, cust, e.acAccount(t, cust, "EUR")["id"].(string))
		if eur["cardCapabilities"].(map[string]any)["supportsDigitalWalletTokenization"] != false {
			t.Fatalf("EUR card capabilities %v", eur["cardCapabilities"])
		}
		expect(t, e.do("POST", "/cards/"+eur["id"].(string)+"/tokenize", body), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-CARD-42: reveal is available only when cardCapabilities.supportsPanReveal
// is true. Every program this service has supports it, so the test takes it
// away from the USD program for the duration (the node's background work is
// stopped first: nothing else reads the programs meanwhile).
func TestCardData_RevealNeedsCapability_R_CARD_42(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		id := e.cdActive(t, cust, acct)["id"].(string)
		e.driveByHand()
		saved := cards.Programs["USD"]
		t.Cleanup(func() { cards.Programs["USD"] = saved })
		without := saved
		without.Capabilities.SupportsPanReveal = false
		cards.Programs["USD"] = without
		if c := e.cdGet(t, id); c["cardCapabilities"].(map[string]any)["supportsPanReveal"] != false {
			t.Fatalf("capabilities %v", c["cardCapabilities"])
		}
		r := e.do("POST", "/cards/"+id+"/reveal", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		cdNoPAN(t, r.Body)
		cards.Programs["USD"] = saved
		expect(t, e.do("POST", "/cards/"+id+"/reveal", nil), http.StatusOK, "")
	})
}
