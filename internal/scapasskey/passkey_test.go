package scapasskey_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/scapasskey"
	"github.com/paymentsd/paymentsd/internal/scapasskey/scapasskeytest"
)

var cfg = scapasskey.Config{RPID: "app.example.com", Origins: []string{"https://app.example.com"}}

const origin = "https://app.example.com"

// A passkey registers, then asserts over a chosen challenge; an assertion
// over another challenge, from another origin, or replayed is refused.
func TestRegisterAndAssert(t *testing.T) {
	if _, err := scapasskey.BeginRegistration(scapasskey.Config{}, "c"); !errors.Is(err, scapasskey.ErrNotConfigured) {
		t.Fatalf("unconfigured: %v", err)
	}
	dev, err := scapasskeytest.New()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := scapasskey.BeginRegistration(cfg, "Customer:1")
	if err != nil {
		t.Fatal(err)
	}
	cred, err := dev.Register(reg.Options, origin)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := scapasskey.FinishRegistration(cfg, "Customer:1", reg.Session, cred, "https://evil.example"); !errors.Is(err, scapasskey.ErrOrigin) {
		t.Fatalf("disallowed origin: %v", err)
	}
	stored, credID, err := scapasskey.FinishRegistration(cfg, "Customer:1", reg.Session, cred, origin)
	if err != nil || len(credID) == 0 {
		t.Fatalf("finish registration: %v", err)
	}
	challenge := make([]byte, 32)
	challenge[0] = 1
	as, err := scapasskey.BeginAssertion(cfg, "Customer:1", stored, challenge)
	if err != nil {
		t.Fatal(err)
	}
	assertion, err := dev.Assert(as.Options, origin)
	if err != nil {
		t.Fatal(err)
	}
	updated, err := scapasskey.FinishAssertion(cfg, "Customer:1", stored, as.Session, assertion, origin)
	if err != nil {
		t.Fatalf("finish assertion: %v", err)
	}
	// The same assertion against another challenge's session fails.
	other := make([]byte, 32)
	as2, err := scapasskey.BeginAssertion(cfg, "Customer:1", updated, other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scapasskey.FinishAssertion(cfg, "Customer:1", updated, as2.Session, assertion, origin); err == nil {
		t.Fatal("an assertion over another challenge was accepted")
	}
	// An assertion produced on another origin fails.
	bad, _ := dev.Assert(as2.Options, "https://evil.example")
	if _, err := scapasskey.FinishAssertion(cfg, "Customer:1", updated, as2.Session, bad, origin); err == nil {
		t.Fatal("an assertion from another origin was accepted")
	}
	var opts map[string]any
	if err := json.Unmarshal(as2.Options, &opts); err != nil || opts["challenge"] == nil {
		t.Fatalf("assertion options %s", as2.Options)
	}
}

// FuzzFinishAssertion: whatever a client sends as an assertion, checking
// it never panics and never accepts anything but the device's signature.
func FuzzFinishAssertion(f *testing.F) {
	dev, err := scapasskeytest.New()
	if err != nil {
		f.Fatal(err)
	}
	reg, err := scapasskey.BeginRegistration(cfg, "Customer:1")
	if err != nil {
		f.Fatal(err)
	}
	cred, err := dev.Register(reg.Options, origin)
	if err != nil {
		f.Fatal(err)
	}
	stored, _, err := scapasskey.FinishRegistration(cfg, "Customer:1", reg.Session, cred, origin)
	if err != nil {
		f.Fatal(err)
	}
	as, err := scapasskey.BeginAssertion(cfg, "Customer:1", stored, make([]byte, 32))
	if err != nil {
		f.Fatal(err)
	}
	good, _ := dev.Assert(as.Options, origin)
	f.Add([]byte(good))
	f.Add([]byte(`{"id":"x","type":"public-key","response":{}}`))
	signed := func(b []byte) string {
		var a struct {
			Response struct {
				ClientDataJSON, AuthenticatorData, Signature string
			}
		}
		_ = json.Unmarshal(b, &a)
		return a.Response.ClientDataJSON + "|" + a.Response.AuthenticatorData + "|" + a.Response.Signature
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, err := scapasskey.FinishAssertion(cfg, "Customer:1", stored, as.Session, body, origin); err == nil &&
			signed(body) != signed(good) {
			t.Fatalf("accepted an assertion the device did not sign: %s", body)
		}
	})
}
