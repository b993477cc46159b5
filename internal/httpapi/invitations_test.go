package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/platforms"
)

// invSetup gives the platform a UMA domain and an inviting customer with an
// address and a USD account; it returns the inviter's address.
func (e *env) invSetup(t *testing.T) string {
	t.Helper()
	e.acSupport(t, "USD")
	e.umaDomain(t, "pay.example.com")
	e.custCreate(t, cwith(custIndividual("Inviter"), "umaAddress", "$alice@pay.example.com"))
	return "$alice@pay.example.com"
}

func (e *env) invCreate(t *testing.T, body any, opts ...reqOpt) map[string]any {
	t.Helper()
	r := e.do("POST", "/invitations", body, opts...)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// R-INV-01: create, fetch, claim and cancel round trip; codes are long
// random strings, distinct, and expire.
func TestInvitations_RoundTrip_R_INV_01(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		inviter := e.invSetup(t)
		inv := e.invCreate(t, cobj{"inviterUma": inviter, "firstName": "Alice", "amountToSend": 12550})
		code := inv["code"].(string)
		if len(code) < 26 || inv["status"] != "PENDING" || inv["inviterUma"] != inviter ||
			inv["url"] != "https://pay.example.com/i/"+code || inv["firstName"] != "Alice" {
			t.Fatalf("%v", inv)
		}
		amt := inv["amountToSend"].(map[string]any)
		if amt["amount"].(float64) != 12550 || amt["currency"].(map[string]any)["code"] != "USD" {
			t.Fatalf("%v", amt)
		}
		exp, _ := time.Parse(time.RFC3339Nano, inv["expiresAt"].(string))
		if d := time.Until(exp); d < 29*24*time.Hour || d > 31*24*time.Hour {
			t.Fatalf("expiresAt %v", exp)
		}
		if other := e.invCreate(t, cobj{"inviterUma": inviter})["code"]; other == code {
			t.Fatal("codes repeat")
		}
		got := e.do("GET", "/invitations/"+code, nil)
		expect(t, got, http.StatusOK, "")
		if got.JSON(t)["status"] != "PENDING" {
			t.Fatalf("%s", got.Body)
		}
		r := e.do("POST", "/invitations/"+code+"/claim", cobj{"inviteeUma": "$bob@other.example.org"})
		expect(t, r, http.StatusOK, "")
		c := r.JSON(t)
		if c["status"] != "CLAIMED" || c["inviteeUma"] != "$bob@other.example.org" || c["claimedAt"] == nil {
			t.Fatalf("%v", c)
		}
		second := e.invCreate(t, cobj{"inviterUma": inviter})["code"].(string)
		r = e.do("POST", "/invitations/"+second+"/cancel", nil)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "CANCELLED" {
			t.Fatalf("%s", r.Body)
		}
		// Bad input.
		expect(t, e.do("POST", "/invitations", cobj{}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/invitations", cobj{"inviterUma": "alice"}), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		expect(t, e.do("POST", "/invitations", cobj{"inviterUma": "$nobody@pay.example.com"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/invitations", cobj{"inviterUma": inviter, "expiresAt": "2001-01-01T00:00:00Z"}), http.StatusBadRequest, "INVALID_INPUT")
		third := e.invCreate(t, cobj{"inviterUma": inviter})["code"].(string)
		expect(t, e.do("POST", "/invitations/"+third+"/claim", cobj{"inviteeUma": inviter}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/invitations/"+third+"/claim", cobj{"inviteeUma": "bob"}), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
	})
}

// R-INV-02, R-INV-06, R-INV-07: only a PENDING invitation can be claimed:
// claiming twice is 400 INVITATION_ALREADY_CLAIMED, a cancelled one 400
// INVITATION_CANCELLED. R-INV-03: only a PENDING one can be cancelled.
func TestInvitations_OnlyPending_R_INV_02_R_INV_03_R_INV_06_R_INV_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		inviter := e.invSetup(t)
		claimed := e.invCreate(t, cobj{"inviterUma": inviter})["code"].(string)
		claim := func(code string) resp {
			return e.do("POST", "/invitations/"+code+"/claim", cobj{"inviteeUma": "$bob@other.example.org"})
		}
		expect(t, claim(claimed), http.StatusOK, "")
		// R-INV-06: the second claim is 400 INVITATION_ALREADY_CLAIMED.
		expect(t, claim(claimed), http.StatusBadRequest, "INVITATION_ALREADY_CLAIMED")
		// R-INV-03: a claimed invitation cannot be cancelled.
		expect(t, e.do("POST", "/invitations/"+claimed+"/cancel", nil), http.StatusBadRequest, "INVITATION_ALREADY_CLAIMED")
		cancelled := e.invCreate(t, cobj{"inviterUma": inviter})["code"].(string)
		expect(t, e.do("POST", "/invitations/"+cancelled+"/cancel", nil), http.StatusOK, "")
		// R-INV-07 and R-INV-02: claiming or cancelling a cancelled one is 400 INVITATION_CANCELLED.
		expect(t, claim(cancelled), http.StatusBadRequest, "INVITATION_CANCELLED")
		expect(t, e.do("POST", "/invitations/"+cancelled+"/cancel", nil), http.StatusBadRequest, "INVITATION_CANCELLED")
		if got := e.do("GET", "/invitations/"+cancelled, nil).JSON(t); got["status"] != "CANCELLED" || got["inviteeUma"] != nil {
			t.Fatalf("%v", got)
		}
	})
}

// Codes expire: past expiresAt the invitation reads EXPIRED and can be
// neither claimed nor cancelled.
func TestInvitations_Expiry(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.driveByHand()
		inviter := e.invSetup(t)
		now := time.Now().UTC()
		move := e.acClock(t, now)
		code := e.invCreate(t, cobj{"inviterUma": inviter, "expiresAt": now.Add(time.Hour).Format(time.RFC3339)})["code"].(string)
		move(now.Add(2 * time.Hour))
		if got := e.do("GET", "/invitations/"+code, nil).JSON(t); got["status"] != "EXPIRED" {
			t.Fatalf("%v", got)
		}
		expect(t, e.do("POST", "/invitations/"+code+"/claim", cobj{"inviteeUma": "$bob@other.example.org"}), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/invitations/"+code+"/cancel", nil), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-INV-04: only the inviter's platform can cancel; another platform
// (which may read and claim by code) is refused.
func TestInvitations_CancelByInviterPlatformOnly_R_INV_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		inviter := e.invSetup(t)
		other, err := platforms.Create(context.Background(), e.db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		code := e.invCreate(t, cobj{"inviterUma": inviter})["code"].(string)
		expect(t, e.do("GET", "/invitations/"+code, nil, withCreds(other.SandboxToken)), http.StatusOK, "")
		expect(t, e.do("POST", "/invitations/"+code+"/cancel", nil, withCreds(other.SandboxToken)), http.StatusForbidden, "FORBIDDEN")
		// The other environment does not see it at all.
		expect(t, e.do("GET", "/invitations/"+code, nil, withCreds(e.production)), http.StatusNotFound, "INVITATION_NOT_FOUND")
		r := e.do("POST", "/invitations/"+code+"/cancel", nil)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["status"] != "CANCELLED" {
			t.Fatalf("%s", r.Body)
		}
	})
}

// R-INV-05: claiming fires INVITATION_CLAIMED to the inviting platform, even
// when another platform claims for its customer.
func TestInvitations_ClaimEvent_R_INV_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		inviter := e.invSetup(t)
		other, _ := platforms.Create(context.Background(), e.db, "Other", false)
		code := e.invCreate(t, cobj{"inviterUma": inviter})["code"].(string)
		if evs := e.acEvents(t, code); len(evs) != 0 {
			t.Fatalf("event before the claim: %v", evs)
		}
		expect(t, e.do("POST", "/invitations/"+code+"/claim", cobj{"inviteeUma": "$bob@other.example.org"}, withCreds(other.SandboxToken)), http.StatusOK, "")
		evs := e.acEvents(t, code)
		if len(evs) != 1 || evs[0]["type"] != "INVITATION_CLAIMED" {
			t.Fatalf("%v", evs)
		}
		data := evs[0]["data"].(map[string]any)
		if data["code"] != code || data["status"] != "CLAIMED" || data["inviteeUma"] != "$bob@other.example.org" {
			t.Fatalf("%v", data)
		}
	})
}

// R-INV-08: a platform without invitation configuration (no umaDomain) gets
// 400 INVITATIONS_NOT_CONFIGURED.
func TestInvitations_NotConfigured_R_INV_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		expect(t, e.do("POST", "/invitations", cobj{"inviterUma": "$alice@pay.example.com"}), http.StatusBadRequest, "INVITATIONS_NOT_CONFIGURED")
	})
}

// R-INV-09: an unknown code is 404 INVITATION_NOT_FOUND, on every route.
func TestInvitations_UnknownCode_R_INV_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.invSetup(t)
		code := "zzzzzzzzzzzzzzzzzzzzzzzzzz"
		expect(t, e.do("GET", "/invitations/"+code, nil), http.StatusNotFound, "INVITATION_NOT_FOUND")
		expect(t, e.do("POST", "/invitations/"+code+"/claim", cobj{"inviteeUma": "$bob@x.example.org"}), http.StatusNotFound, "INVITATION_NOT_FOUND")
		expect(t, e.do("POST", "/invitations/"+code+"/cancel", nil), http.StatusNotFound, "INVITATION_NOT_FOUND")
		if r := e.do("GET", "/invitations/"+strings.Repeat("a", 300), nil); r.Status != http.StatusNotFound {
			t.Fatalf("%d", r.Status)
		}
	})
}
