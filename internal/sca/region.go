// Package sca is strong customer authentication (issue 19; rules R-SCA-*,
// R-AUTH-03): who needs it, the factors a customer enrols (SMS_OTP, TOTP),
// the login session, the challenges a payout quote carries until the
// customer authorizes it (dynamic linking: a challenge is bound to one
// quote's payee and amount), attempt limits and locks, the factor reset,
// the platform's security events and the audit trail of every decision.
// It moves no money and knows nothing about HTTP: package quotes asks it
// whether a customer needs SCA and to issue and verify challenges.
package sca

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/store"
)

// regulated are the regions where SCA is required by law: the European
// Economic Area (PSD2) and the United Kingdom.
var regulated = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE
		IS LI NO GB`) {
		regulated[c] = true
	}
}

// Regulated reports whether country (ISO 3166-1 alpha-2) requires SCA by law.
func Regulated(country string) bool { return regulated[country] }

// CountryOf is the country that places a customer in a region: its region
// when the platform gave one, else its address's country, else its
// nationality ("" when the profile names none).
func CountryOf(p customers.Profile) string {
	switch {
	case p.Region != nil && *p.Region != "":
		return *p.Region
	case p.Address != nil && p.Address.Country != nil && *p.Address.Country != "":
		return *p.Address.Country
	case p.Nationality != nil:
		return *p.Nationality
	}
	return ""
}

// LowValue is the low-value exemption: a payout of at most MaxAmount (in
// the smallest unit of Currency) needs no per-payout challenge.
type LowValue struct {
	Currency  string `json:"currency"`
	MaxAmount int64  `json:"maxAmount"`
}

// Settings are a platform's SCA settings (GET/PATCH /sca/settings).
type Settings struct {
	// AdditionalRegions are countries where the platform requires SCA
	// besides those where the law does.
	AdditionalRegions []string `json:"additionalRegions"`
	// LowValueExemption, when set, exempts small payouts.
	LowValueExemption *LowValue `json:"lowValueExemption"`
	// TrustedBeneficiaryExemption exempts payouts to external accounts the
	// customer trusted (POST /customers/external-accounts/{id}/trust).
	TrustedBeneficiaryExemption bool `json:"trustedBeneficiaryExemption"`
	// PasskeyRelyingPartyID and PasskeyAllowedOrigins are the WebAuthn
	// relying party of PASSKEY factors (none: passkeys cannot be enrolled).
	PasskeyRelyingPartyID string   `json:"passkeyRelyingPartyId"`
	PasskeyAllowedOrigins []string `json:"passkeyAllowedOrigins"`
}

// SettingsPatch is the body of PATCH /sca/settings: absent fields stay.
type SettingsPatch struct {
	AdditionalRegions           *[]string       `json:"additionalRegions"`
	LowValueExemption           json.RawMessage `json:"lowValueExemption"`
	TrustedBeneficiaryExemption *bool           `json:"trustedBeneficiaryExemption"`
	PasskeyRelyingPartyID       *string         `json:"passkeyRelyingPartyId"`
	PasskeyAllowedOrigins       *[]string       `json:"passkeyAllowedOrigins"`
}

// Validate lists every invalid field.
func (p SettingsPatch) Validate() error {
	var f apierr.Fields
	if p.AdditionalRegions != nil {
		for i, r := range *p.AdditionalRegions {
			if len(r) != 2 || strings.ToUpper(r) != r {
				f.Add(fmt.Sprintf("additionalRegions[%d]", i), apierr.Pattern, "must be an ISO 3166-1 alpha-2 country code")
			}
		}
	}
	if p.PasskeyRelyingPartyID != nil && *p.PasskeyRelyingPartyID != "" && !validOrigin("https://"+*p.PasskeyRelyingPartyID) {
		f.Add("passkeyRelyingPartyId", apierr.Format, "must be a domain name, such as app.example.com")
	}
	if p.PasskeyAllowedOrigins != nil {
		for i, o := range *p.PasskeyAllowedOrigins {
			if !validOrigin(o) {
				f.Add(fmt.Sprintf("passkeyAllowedOrigins[%d]", i), apierr.Format, "must be an origin: https://host[:port] (http only for localhost)")
			}
		}
	}
	if len(p.LowValueExemption) > 0 && string(p.LowValueExemption) != "null" {
		var lv struct {
			Currency  *string `json:"currency"`
			MaxAmount *int64  `json:"maxAmount"`
		}
		if err := json.Unmarshal(p.LowValueExemption, &lv); err != nil {
			f.Add("lowValueExemption", apierr.Type, "must be an object with currency and maxAmount, or null")
		} else {
			if lv.Currency == nil {
				f.Add("lowValueExemption.currency", apierr.Required, "is required")
			} else if _, ok := currency.Lookup(*lv.Currency); !ok {
				f.Add("lowValueExemption.currency", apierr.Enum, "is not a currency this server knows")
			}
			if lv.MaxAmount == nil {
				f.Add("lowValueExemption.maxAmount", apierr.Required, "is required, an integer in the smallest unit")
			} else if *lv.MaxAmount <= 0 {
				f.Add("lowValueExemption.maxAmount", apierr.Minimum, "must be a positive integer in the smallest unit")
			}
		}
	}
	return f.Err()
}

// Settings returns the tenant's SCA settings (defaults when none are stored).
func (s *Service) Settings(ctx context.Context, q store.Q, t store.Tenant) (Settings, error) {
	out := Settings{AdditionalRegions: []string{}, PasskeyAllowedOrigins: []string{}}
	doc, err := q.ScaSettings(ctx, t)
	if err != nil || doc == nil {
		return out, err
	}
	if err := json.Unmarshal(doc, &out); err != nil {
		return out, fmt.Errorf("sca: stored settings: %w", err)
	}
	if out.AdditionalRegions == nil {
		out.AdditionalRegions = []string{}
	}
	if out.PasskeyAllowedOrigins == nil {
		out.PasskeyAllowedOrigins = []string{}
	}
	return out, nil
}

// PatchSettings changes the tenant's SCA settings.
func (s *Service) PatchSettings(ctx context.Context, t store.Tenant, p SettingsPatch) (Settings, error) {
	if err := p.Validate(); err != nil {
		return Settings{}, err
	}
	var out Settings
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, err := s.Settings(ctx, tx.Q, t)
		if err != nil {
			return err
		}
		if p.AdditionalRegions != nil {
			cur.AdditionalRegions = slices.Compact(slices.Sorted(slices.Values(*p.AdditionalRegions)))
		}
		if len(p.LowValueExemption) > 0 {
			cur.LowValueExemption = nil
			if string(p.LowValueExemption) != "null" {
				cur.LowValueExemption = &LowValue{}
				_ = json.Unmarshal(p.LowValueExemption, cur.LowValueExemption) // validated
			}
		}
		if p.TrustedBeneficiaryExemption != nil {
			cur.TrustedBeneficiaryExemption = *p.TrustedBeneficiaryExemption
		}
		if p.PasskeyRelyingPartyID != nil {
			cur.PasskeyRelyingPartyID = *p.PasskeyRelyingPartyID
		}
		if p.PasskeyAllowedOrigins != nil {
			cur.PasskeyAllowedOrigins = slices.Compact(slices.Sorted(slices.Values(*p.PasskeyAllowedOrigins)))
		}
		doc, err := json.Marshal(cur)
		if err != nil {
			return err
		}
		out = cur
		return tx.PutScaSettings(ctx, t, doc, tx.Now())
	})
	return out, err
}

// RequiredFor reports whether a customer with profile p needs SCA under
// settings.
func RequiredFor(p customers.Profile, settings Settings) bool {
	c := CountryOf(p)
	return c != "" && (regulated[c] || slices.Contains(settings.AdditionalRegions, c))
}

// Required reports whether the customer needs SCA (404 CUSTOMER_NOT_FOUND
// for an unknown or deleted customer).
func (s *Service) Required(ctx context.Context, q store.Q, t store.Tenant, customerID string) (bool, error) {
	need, found, err := s.required(ctx, q, t, customerID)
	if err == nil && !found {
		return false, apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+customerID)
	}
	return need, err
}

func (s *Service) required(ctx context.Context, q store.Q, t store.Tenant, customerID string) (need, found bool, err error) {
	row, err := q.GetCustomer(ctx, t, customerID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && row.DeletedAt != nil) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	need, err = s.requiredOf(ctx, q, t, row)
	return need, true, err
}

// requiredOf decides for a live customer's row.
func (s *Service) requiredOf(ctx context.Context, q store.Q, t store.Tenant, row store.Customer) (bool, error) {
	var p customers.Profile
	if err := json.Unmarshal(row.Profile, &p); err != nil {
		return false, fmt.Errorf("sca: stored profile of %s: %w", row.ID, err)
	}
	settings, err := s.Settings(ctx, q, t)
	if err != nil {
		return false, err
	}
	return RequiredFor(p, settings), nil
}

// requireSCA is the gate of every /sca endpoint: 404 for an unknown
// customer, 409 CONFLICT for one who does not need SCA.
func (s *Service) requireSCA(ctx context.Context, q store.Q, t store.Tenant, customerID string) error {
	ok, err := s.Required(ctx, q, t, customerID)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.Conflict("Customer " + customerID + " is not in a region that requires strong customer authentication")
	}
	return nil
}

// now is the store clock, truncated as stored.
func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }
