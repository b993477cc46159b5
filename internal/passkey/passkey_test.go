package passkey_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/passkey"
	"github.com/paymentsd/paymentsd/internal/passkey/passkeytest"
)

var rp = passkey.RelyingParty{ID: "wallet.example.com", Origins: []string{"https://wallet.example.com"}}

// A registration and two logins through go-webauthn; each tampering is
// refused.
func TestRegisterAndVerify(t *testing.T) {
	auth := passkeytest.New(rp.ID, rp.Origins[0])
	auth.Counter = 1
	user := []byte("InternalAccount:1")
	regChallenge := bytes.Repeat([]byte{7}, 32)
	cred, err := passkey.Register(rp, user, regChallenge, auth.Create(regChallenge))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cred.ID, auth.ID) {
		t.Fatal("credential id")
	}
	// The wrong challenge, origin or RP id is refused.
	if _, err := passkey.Register(rp, user, bytes.Repeat([]byte{8}, 32), auth.Create(regChallenge)); !isRefused(err) {
		t.Errorf("other challenge: %v", err)
	}
	other := passkeytest.New(rp.ID, "https://evil.example.com")
	if _, err := passkey.Register(rp, user, regChallenge, other.Create(regChallenge)); !isRefused(err) {
		t.Errorf("other origin: %v", err)
	}
	otherRP := passkeytest.New("evil.example.com", rp.Origins[0])
	if _, err := passkey.Register(rp, user, regChallenge, otherRP.Create(regChallenge)); !isRefused(err) {
		t.Errorf("other rp id: %v", err)
	}

	challenge := []byte(passkey.Challenge(`{"operation":"PASSKEY_LOGIN"}`))
	a := auth.Get(challenge)
	updated, err := passkey.Verify(rp, user, challenge, cred, a)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Authenticator.SignCount != 2 {
		t.Fatalf("counter %d", updated.Authenticator.SignCount)
	}
	// Another challenge, another key, a forged signature, or a replayed
	// counter: refused.
	if _, err := passkey.Verify(rp, user, []byte(passkey.Challenge("x")), updated, auth.Get(challenge)); !isRefused(err) {
		t.Errorf("other challenge: %v", err)
	}
	imp := passkeytest.New(rp.ID, rp.Origins[0])
	imp.ID = auth.ID
	if _, err := passkey.Verify(rp, user, challenge, updated, imp.Get(challenge)); !isRefused(err) {
		t.Errorf("other key: %v", err)
	}
	if _, err := passkey.Verify(rp, user, challenge, updated, a); !isRefused(err) {
		t.Errorf("replayed counter: %v", err)
	}
	if _, err := passkey.Verify(passkey.RelyingParty{}, user, challenge, updated, a); !errors.Is(err, passkey.ErrNoRelyingParty) {
		t.Errorf("no relying party: %v", err)
	}
}

func isRefused(err error) bool {
	var r *passkey.Refused
	return errors.As(err, &r)
}

// R-EWA-05: the challenge is the lowercase hex SHA-256 of the body.
func TestChallenge_R_EWA_05(t *testing.T) {
	if got := passkey.Challenge("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatal(got)
	}
}

// FuzzAttestationParse: any attestation input is parsed or refused with a
// field error, never a panic.
func FuzzAttestationParse(f *testing.F) {
	auth := passkeytest.New(rp.ID, rp.Origins[0])
	good := auth.Create(bytes.Repeat([]byte{1}, 32))
	f.Add(good.CredentialID, good.ClientDataJSON, good.AttestationObject)
	f.Add("", "e30", "oA")
	f.Fuzz(func(t *testing.T, id, cdj, ao string) {
		_, err := passkey.Attestation{CredentialID: id, ClientDataJSON: cdj, AttestationObject: ao}.Parse()
		var fe *passkey.FieldError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error of another kind: %v", err)
		}
	})
}

// FuzzAssertionParse: likewise for assertions, and a parsed one goes
// through verification without panicking.
func FuzzAssertionParse(f *testing.F) {
	auth := passkeytest.New(rp.ID, rp.Origins[0])
	ch := bytes.Repeat([]byte{1}, 32)
	cred, err := passkey.Register(rp, []byte("u"), ch, auth.Create(ch))
	if err != nil {
		f.Fatal(err)
	}
	good := auth.Get(ch)
	f.Add(good.CredentialID, good.ClientDataJSON, good.AuthenticatorData, good.Signature)
	f.Add(base64.RawURLEncoding.EncodeToString(auth.ID), "e30", "AA", "AA")
	f.Fuzz(func(t *testing.T, id, cdj, ad, sig string) {
		a := passkey.Assertion{CredentialID: id, ClientDataJSON: cdj, AuthenticatorData: ad, Signature: sig}
		if _, err := a.Parse(); err != nil {
			var fe *passkey.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		_, _ = passkey.Verify(rp, []byte("u"), ch, cred, a)
	})
}
