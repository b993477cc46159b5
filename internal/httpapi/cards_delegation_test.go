package httpapi

import (
	"net/http"
	"testing"
)

// R-CARD-08, R-CARD-13, R-CARD-14, R-CARD-22, R-CARD-23, R-CARD-24: a card
// funded by a USDB wallet without a delegated key is provisioned into
// PENDING_AUTH (DELEGATION_REQUIRED) and cannot be made ACTIVE; creating the
// key makes it ACTIVE, revoking it moves it back; a frozen card keeps its
// status through revocation and a new key.
func TestCards_DelegatedKeys_R_CARD_08_R_CARD_14_R_CARD_22_R_CARD_23(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.cdFast()
		e.acSupport(t, "USD")
		e.custSkipPaperwork(t, true)
		c, _, _, session := e.wlLoggedIn(t)
		cust := e.wlOwner(t, c)
		if e.custStatus(t, cust) != "APPROVED" {
			t.Fatal("customer not APPROVED")
		}
		usd := e.acAccount(t, cust, "USD")["id"].(string)
		card := e.cdCard(t, cust, c.accountID)["id"].(string)
		got := e.cdWait(t, card, "PENDING_AUTH") // R-CARD-08
		if got["statusReason"] != "DELEGATION_REQUIRED" {
			t.Fatalf("R-CARD-08: %v", got["statusReason"])
		}
		expect(t, e.cdPatch(card, cobj{"status": "ACTIVE"}), http.StatusConflict, "INVALID_STATE_TRANSITION") // R-CARD-14
		newKey := func() string {
			r := c.signed("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "card key", "cardId": card}, session)
			expect(t, r, http.StatusCreated, "")
			k := r.JSON(t)
			// R-CONV-03: the card key's funding source is a CardFundingSource: id.
			if fs, _ := k["fundingSourceId"].(string); len(fs) < len("CardFundingSource:") || fs[:len("CardFundingSource:")] != "CardFundingSource:" {
				t.Fatalf("key fundingSourceId %v", k["fundingSourceId"])
			}
			return k["id"].(string)
		}
		key := newKey()
		if s := e.cdGet(t, card)["status"]; s != "ACTIVE" { // R-CARD-23: completing delegation restores ACTIVE
			t.Fatalf("R-CARD-23: after delegation %v", s)
		}
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+key, nil), http.StatusNoContent, "")
		got = e.cdGet(t, card)
		if got["status"] != "PENDING_AUTH" || got["statusReason"] != "DELEGATION_REQUIRED" { // R-CARD-22, R-EWA-30: revoking moves the ACTIVE card to PENDING_AUTH
			t.Fatalf("R-CARD-22: after revocation %v %v", got["status"], got["statusReason"])
		}
		// R-CARD-13: PENDING_AUTH -> FROZEN, then with a key FROZEN stays (R-CARD-24).
		expect(t, e.cdPatch(card, cobj{"status": "FROZEN"}), http.StatusOK, "")
		key = newKey()
		if s := e.cdGet(t, card)["status"]; s != "FROZEN" { // R-CARD-24
			t.Fatalf("R-CARD-24: delegation unfroze the card: %v", s)
		}
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+key, nil), http.StatusNoContent, "")
		if s := e.cdGet(t, card)["status"]; s != "FROZEN" { // R-CARD-24
			t.Fatalf("R-CARD-24: revocation changed a frozen card: %v", s)
		}
		key = newKey()
		expect(t, e.cdPatch(card, cobj{"status": "ACTIVE"}), http.StatusOK, "") // R-CARD-13: with a key, ACTIVE
		// R-CARD-23: switching to USD funding restores ACTIVE after a revocation.
		expect(t, c.do("DELETE", "/auth/delegated-keys/"+key, nil), http.StatusNoContent, "")
		r := e.cdPatch(card, cobj{"fundingSource": usd})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "ACTIVE" {
			t.Fatalf("R-CARD-23: back on USD %v", r.JSON(t)["status"])
		}
		// A closed card keeps its status (R-CARD-24): closing detaches funding.
		expect(t, e.cdPatch(card, cobj{"status": "CLOSED"}), http.StatusOK, "")
		expect(t, c.do("POST", "/auth/delegated-keys", cobj{"internalAccountId": c.accountID, "nickname": "late", "cardId": card}),
			http.StatusBadRequest, "INVALID_INPUT")
		if s := e.cdGet(t, card)["status"]; s != "CLOSED" {
			t.Fatalf("R-CARD-24: %v", s)
		}
	})
}
