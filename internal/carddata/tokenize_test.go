package carddata

import (
	"crypto/hpke"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// R-CARD-48: the provisioning payload is encrypted to the wallet provider's
// key (only its private key opens it) and every request makes a new one.
func TestSealProvisioning_R_CARD_48(t *testing.T) {
	provider, err := provKEM.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pubB64 := base64.StdEncoding.EncodeToString(provider.PublicKey().Bytes())
	c := Card{ID: "Card:1", PAN: "4000001234567899", ExpMonth: 3, ExpYear: 2029}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p1, err := SealProvisioning(c, ProvisioningRequest{ProviderPublicKey: pubB64, Nonce: "n1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := SealProvisioning(c, ProvisioningRequest{ProviderPublicKey: pubB64, Nonce: "n1"}, now)
	if p1.ProvisioningID == p2.ProvisioningID || p1.EncryptedData == p2.EncryptedData {
		t.Fatal("two requests gave the same payload")
	}
	if strings.Contains(p1.EncryptedData, c.PAN) || !p1.ExpiresAt.Equal(now.Add(ProvisioningTTL)) {
		t.Fatalf("payload %+v", p1)
	}
	enc, _ := base64.StdEncoding.DecodeString(p1.EphemeralPublicKey)
	ct, _ := base64.StdEncoding.DecodeString(p1.EncryptedData)
	plain, err := hpke.Open(provider, provKDF, provAEAD, []byte(ProvisioningInfo), append(enc, ct...))
	if err != nil {
		t.Fatalf("the provider cannot open it: %v", err)
	}
	var got provisioningPlain
	if err := json.Unmarshal(plain, &got); err != nil || got.PAN != c.PAN || got.ExpirationMonth != 3 ||
		got.ExpirationYear != 2029 || got.Nonce != "n1" || got.ProvisioningID != p1.ProvisioningID {
		t.Fatalf("payload content %+v %v", got, err)
	}
	other, _ := provKEM.GenerateKey()
	if _, err := hpke.Open(other, provKDF, provAEAD, []byte(ProvisioningInfo), append(enc, ct...)); err == nil {
		t.Fatal("another key opened the payload")
	}
	for _, bad := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 65))} {
		if _, err := SealProvisioning(c, ProvisioningRequest{ProviderPublicKey: bad}, now); !errors.Is(err, ErrBadProviderKey) {
			t.Errorf("key %q: %v", bad, err)
		}
	}
}
