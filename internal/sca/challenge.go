package sca

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Challenge purposes.
const (
	PurposePayout             = "PAYOUT"
	PurposeCurrencyConversion = "CURRENCY_CONVERSION"
)

// Challenge statuses.
const (
	challengePending    = "PENDING"
	challengeAuthorized = "AUTHORIZED"
	challengeFailed     = "FAILED"
)

// ChallengeLifetime is how long a payout challenge may be authorized; a
// payout not authorized by then fails with SCA_NOT_COMPLETED.
const ChallengeLifetime = 5 * time.Minute

// ResendInterval is the least time between two SMS codes of a challenge.
const ResendInterval = 30 * time.Second

// Challenge is the scaChallenge of a quote (R-SCA-06).
type Challenge struct {
	ID                      string         `json:"id"`
	ExpiresAt               time.Time      `json:"expiresAt"`
	Factor                  string         `json:"factor"`
	AvailableFactors        []string       `json:"availableFactors"`
	Purpose                 string         `json:"purpose"`
	PasskeyAssertionOptions map[string]any `json:"passkeyAssertionOptions"`
	PasskeyAllowedOrigins   []string       `json:"passkeyAllowedOrigins"`
}

// challengeDoc is the stored document of a challenge: the API's view, when
// the last SMS code went (resend rate) and the passkey ceremony's session.
type challengeDoc struct {
	Challenge
	SentAt         *time.Time      `json:"sentAt,omitempty"`
	PasskeySession json.RawMessage `json:"passkeySession,omitempty"`
}

// Payout is what a payout challenge authorizes: dynamic linking binds the
// challenge to exactly this quote, customer, payee and amounts.
type Payout struct {
	CustomerID        string
	QuoteID           string
	Payee             string
	SendingAmount     int64
	SendingCurrency   string
	ReceivingAmount   int64
	ReceivingCurrency string
	// Steps is how many challenges the payout needs: 2 for a cross-currency
	// payout (the conversion, then the payout), else 1.
	Steps int
	// Factor is the preferred factor ("" = SMS_OTP when enrolled).
	Factor string
}

// binding is the SHA-256 of everything a challenge step authorizes.
func binding(p Payout, purpose string, step int) string {
	sum := sha256.Sum256([]byte(p.QuoteID + "|" + p.CustomerID + "|" + p.Payee + "|" +
		strconv.FormatInt(p.SendingAmount, 10) + "|" + p.SendingCurrency + "|" +
		strconv.FormatInt(p.ReceivingAmount, 10) + "|" + p.ReceivingCurrency + "|" + purpose + "|" + strconv.Itoa(step)))
	return hex.EncodeToString(sum[:])
}

func purposeOf(p Payout, step int) string {
	if p.Steps > 1 && step == 1 {
		return PurposeCurrencyConversion
	}
	return PurposePayout
}

// Issue creates the challenge of step (1-based) of a payout inside tx and
// sends its SMS code when its factor is SMS_OTP.
func (s *Service) Issue(ctx context.Context, tx *store.Tx, t store.Tenant, p Payout, step int) (Challenge, error) {
	if p.Steps < 1 {
		p.Steps = 1
	}
	st, err := loadState(ctx, tx.Q, t, p.CustomerID, false)
	if err != nil {
		return Challenge{}, err
	}
	var avail []string
	for _, f := range st.active() {
		avail = append(avail, f.Type)
	}
	if len(avail) == 0 {
		return Challenge{}, apierr.Conflict("Customer " + p.CustomerID + " has no enrolled SCA factor; enrol one (POST /sca/factors) first")
	}
	slices.Sort(avail)
	avail = slices.Compact(avail)
	factorName := avail[0]
	switch {
	case p.Factor != "" && slices.Contains(avail, p.Factor):
		factorName = p.Factor
	case p.Factor != "":
		return Challenge{}, wrongProof("scaFactor", "is not a factor the customer has enrolled")
	case slices.Contains(avail, FactorSMS):
		factorName = FactorSMS
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	purpose := purposeOf(p, step)
	c := challengeDoc{Challenge: Challenge{ID: id.New(id.ScaChallenge), ExpiresAt: now.Add(ChallengeLifetime),
		Factor: factorName, AvailableFactors: avail, Purpose: purpose,
		PasskeyAssertionOptions: map[string]any{}, PasskeyAllowedOrigins: []string{}}}
	row := store.ScaChallenge{ID: c.ID, Tenant: t, CustomerID: p.CustomerID, QuoteID: p.QuoteID, Purpose: purpose,
		Factor: factorName, Binding: binding(p, purpose, step), Step: step, Steps: p.Steps, Status: challengePending,
		ExpiresAt: c.ExpiresAt, CreatedAt: now, UpdatedAt: now}
	if pk := st.find(FactorPasskey, factorActive); pk != nil {
		// The device signs the binding itself: dynamic linking.
		b, cfg, err := s.beginPasskeyAssertion(ctx, tx.Q, t, p.CustomerID, pk, bindingBytes(row.Binding))
		if err != nil {
			return Challenge{}, err
		}
		if err := json.Unmarshal(b.Options, &c.PasskeyAssertionOptions); err != nil {
			return Challenge{}, err
		}
		c.PasskeySession, c.PasskeyAllowedOrigins = b.Session, cfg.Origins
	}
	if factorName == FactorSMS {
		code, err := s.sendCode(t, st.find(FactorSMS, factorActive).Phone)
		if err != nil {
			return Challenge{}, err
		}
		row.CodeHash, c.SentAt = hashCode(code), &now
	}
	if row.Document, err = json.Marshal(c); err != nil {
		return Challenge{}, err
	}
	if err := tx.InsertScaChallenge(ctx, row); err != nil {
		return Challenge{}, err
	}
	return c.Challenge, decide(ctx, tx, t, store.ScaDecision{CustomerID: p.CustomerID, Kind: KindAuthorization,
		Factor: factorName, Outcome: OutcomeIssued, Reason: purpose, QuoteID: p.QuoteID, ChallengeID: c.ID})
}

// Proof is the body of POST /quotes/{quoteId}/authorize: a code, and which
// of the challenge's availableFactors produced it (default: the
// challenge's factor).
type Proof struct {
	Code             *string         `json:"code"`
	Factor           *string         `json:"factor"`
	PasskeyAssertion json.RawMessage `json:"passkeyAssertion"`
	Origin           *string         `json:"origin"`
	EndUserIPAddress *string         `json:"endUserIpAddress"`
}

// Validate checks the proof alone.
func (p Proof) Validate() error {
	var f apierr.Fields
	if p.Factor != nil {
		checkFactorName(&f, "factor", p.Factor)
	}
	checkProofFields(&f, p.Factor, p.Code, p.PasskeyAssertion, p.Origin)
	return f.Err()
}

// factorOf is the factor a proof is for: the one named, else PASSKEY for
// an assertion, else the challenge's.
func (p Proof) factorOf(challengeFactor string) string {
	switch {
	case p.Factor != nil:
		return *p.Factor
	case len(p.PasskeyAssertion) > 0 && string(p.PasskeyAssertion) != "null":
		return FactorPasskey
	}
	return challengeFactor
}

func decodeChallenge(row store.ScaChallenge) (challengeDoc, error) {
	var c challengeDoc
	if err := json.Unmarshal(row.Document, &c); err != nil {
		return c, fmt.Errorf("sca: stored challenge %s: %w", row.ID, err)
	}
	c.Factor = row.Factor
	return c, nil
}

// Current returns the quote's current challenge as the API shows it (nil
// when it has none pending).
func (s *Service) Current(ctx context.Context, q store.Q, t store.Tenant, quoteID string) (*Challenge, error) {
	row, err := q.LatestScaChallenge(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil || row.Status != challengePending {
		return nil, err
	}
	c, err := decodeChallenge(row)
	return &c.Challenge, err
}

// Authorized reports whether the payout's last challenge is authorized and
// bound to exactly p (dynamic linking).
func (s *Service) Authorized(ctx context.Context, q store.Q, t store.Tenant, p Payout) (bool, error) {
	row, err := q.LatestScaChallenge(ctx, t, p.QuoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return row.Status == challengeAuthorized && row.Step == row.Steps && row.CustomerID == p.CustomerID &&
		row.Binding == binding(p, row.Purpose, row.Step), nil
}

func marshalChallenge(c challengeDoc) ([]byte, error) { return json.Marshal(c) }
