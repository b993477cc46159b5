package carddata

import (
	"crypto/ecdh"
	"crypto/hpke"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// Digital-wallet provisioning. The wallet provider (its token service)
// publishes a P-256 public key; the issuer returns the card's data sealed to
// it with HPKE (RFC 9180) base mode, DHKEM(P-256, HKDF-SHA256),
// HKDF-SHA256, AES-128-GCM, info ProvisioningInfo. The payload carries a
// fresh provisioning id and a short expiry: it is good for one provisioning
// attempt, and a new request makes a new payload. It is never stored or
// logged by the service.

// ProvisioningInfo is the HPKE info of provisioning payloads.
const ProvisioningInfo = "paymentsd-card-provisioning-v1"

// ProvisioningTTL is how long a provisioning payload is valid.
const ProvisioningTTL = 10 * time.Minute

// provEncSize is the size of a DHKEM(P-256) encapsulated key (Nenc).
const provEncSize = 65

var (
	provKEM  = hpke.DHKEM(ecdh.P256())
	provKDF  = hpke.HKDFSHA256()
	provAEAD = hpke.AES128GCM()
)

// ErrBadProviderKey: the wallet provider's public key is not a P-256 point.
var ErrBadProviderKey = errors.New("carddata: walletProviderPublicKey must be an uncompressed P-256 public key, base64")

// ProvisioningRequest is what the wallet provider gives the platform for one
// attempt: its public key (uncompressed P-256, standard or URL base64) and,
// optionally, its nonce and the device's id, echoed inside the payload.
type ProvisioningRequest struct {
	ProviderPublicKey string
	Nonce             string
	DeviceID          string
}

// provisioningPlain is the sealed content.
type provisioningPlain struct {
	ProvisioningID  string `json:"provisioningId"`
	PAN             string `json:"primaryAccountNumber"`
	ExpirationMonth int    `json:"expirationMonth"`
	ExpirationYear  int    `json:"expirationYear"`
	Nonce           string `json:"nonce,omitempty"`
	DeviceID        string `json:"deviceId,omitempty"`
	IssuedAt        string `json:"issuedAt"`
	ExpiresAt       string `json:"expiresAt"`
}

// Provisioning is the answer: the HPKE encapsulated key and ciphertext
// (base64), the attempt's id and expiry.
type Provisioning struct {
	ProvisioningID     string
	EphemeralPublicKey string
	EncryptedData      string
	ExpiresAt          time.Time
}

// ParseProviderKey reads a wallet provider's HPKE public key.
func ParseProviderKey(s string) (hpke.PublicKey, error) {
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil || len(raw) != 65 {
		return nil, ErrBadProviderKey
	}
	pk, err := provKEM.NewPublicKey(raw)
	if err != nil {
		return nil, ErrBadProviderKey
	}
	return pk, nil
}

// SealProvisioning seals a card's data for a wallet provider.
func SealProvisioning(c Card, req ProvisioningRequest, now time.Time) (Provisioning, error) {
	pk, err := ParseProviderKey(req.ProviderPublicKey)
	if err != nil {
		return Provisioning{}, err
	}
	if len(req.Nonce) > 256 || len(req.DeviceID) > 256 {
		return Provisioning{}, errors.New("carddata: nonce and deviceId are at most 256 characters")
	}
	id, err := newJTI()
	if err != nil {
		return Provisioning{}, err
	}
	exp := now.Add(ProvisioningTTL).UTC()
	plain, err := json.Marshal(provisioningPlain{ProvisioningID: id, PAN: c.PAN, ExpirationMonth: c.ExpMonth,
		ExpirationYear: c.ExpYear, Nonce: req.Nonce, DeviceID: req.DeviceID,
		IssuedAt: now.UTC().Format(time.RFC3339), ExpiresAt: exp.Format(time.RFC3339)})
	if err != nil {
		return Provisioning{}, err
	}
	sealed, err := hpke.Seal(pk, provKDF, provAEAD, []byte(ProvisioningInfo), plain)
	if err != nil {
		return Provisioning{}, err
	}
	n := provEncSize
	return Provisioning{ProvisioningID: id, EphemeralPublicKey: base64.StdEncoding.EncodeToString(sealed[:n]),
		EncryptedData: base64.StdEncoding.EncodeToString(sealed[n:]), ExpiresAt: exp}, nil
}
