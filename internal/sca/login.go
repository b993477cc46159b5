package sca

import (
	"context"
	"encoding/json"
	"net/netip"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// LoginStartRequest is the body of POST /sca/login/start.
type LoginStartRequest struct {
	Factor *string `json:"factor"`
}

// LoginStart is its answer: SMS_OTP carries challengeId and expiresAt; TOTP
// only the factor (the code is in the customer's app); PASSKEY the WebAuthn
// assertion options and the relying party.
type LoginStart struct {
	Factor         string          `json:"factor"`
	ChallengeID    *string         `json:"challengeId"`
	ExpiresAt      *time.Time      `json:"expiresAt"`
	PasskeyOptions json.RawMessage `json:"passkeyOptions,omitempty"`
	AllowedOrigins []string        `json:"allowedOrigins,omitempty"`
	RelyingPartyID string          `json:"relyingPartyId,omitempty"`
}

func checkFactorName(f *apierr.Fields, field string, v *string) {
	switch {
	case v == nil:
		f.Add(field, apierr.Required, "is required: SMS_OTP, TOTP or PASSKEY")
	case *v != FactorSMS && *v != FactorTOTP && *v != FactorPasskey:
		f.Add(field, apierr.Enum, "must be SMS_OTP, TOTP or PASSKEY")
	}
}

// StartLogin begins an SCA login with an enrolled factor; for SMS_OTP it
// sends a code.
func (s *Service) StartLogin(ctx context.Context, t store.Tenant, customerID string, req LoginStartRequest) (LoginStart, error) {
	var fe apierr.Fields
	checkFactorName(&fe, "factor", req.Factor)
	if err := fe.Err(); err != nil {
		return LoginStart{}, err
	}
	var out LoginStart
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		st, f, now, err := s.openFactor(ctx, tx, t, customerID, *req.Factor, factorActive, notEnrolled())
		if err != nil {
			return err
		}
		out = LoginStart{Factor: f.Type}
		st.Login = &loginChallenge{ID: id.New(id.ScaLogin), Factor: f.Type, ExpiresAt: now.Add(CodeLifetime)}
		switch f.Type {
		case FactorSMS:
			code, err := s.sendCode(t, f.Phone)
			if err != nil {
				return err
			}
			st.Login.CodeHash = hashCode(code)
			out.ChallengeID, out.ExpiresAt = &st.Login.ID, &st.Login.ExpiresAt
		case FactorPasskey:
			b, cfg, err := s.beginPasskeyAssertion(ctx, tx.Q, t, customerID, f, nil)
			if err != nil {
				return err
			}
			st.Login.Session = b.Session
			out.PasskeyOptions, out.AllowedOrigins, out.RelyingPartyID = b.Options, cfg.Origins, cfg.RPID
		}
		return saveState(ctx, tx, t, customerID, *st)
	})
	return out, err
}

// LoginCompleteRequest is the body of POST /sca/login/complete.
type LoginCompleteRequest struct {
	Factor           *string         `json:"factor"`
	EndUserIPAddress *string         `json:"endUserIpAddress"`
	ChallengeID      *string         `json:"challengeId"`
	Code             *string         `json:"code"`
	PasskeyAssertion json.RawMessage `json:"passkeyAssertion"`
	Origin           *string         `json:"origin"`
}

// Validate checks the request alone.
func (r LoginCompleteRequest) Validate() error {
	var f apierr.Fields
	checkFactorName(&f, "factor", r.Factor)
	if r.EndUserIPAddress == nil {
		f.Add("endUserIpAddress", apierr.Required, "is required: the end user's IP address")
	} else if _, err := netip.ParseAddr(*r.EndUserIPAddress); err != nil {
		f.Add("endUserIpAddress", apierr.Format, "must be an IPv4 or IPv6 address")
	}
	checkProofFields(&f, r.Factor, r.Code, r.PasskeyAssertion, r.Origin)
	if r.Factor != nil && *r.Factor == FactorSMS && (r.ChallengeID == nil || *r.ChallengeID == "") {
		f.Add("challengeId", apierr.Required, "is required for SMS_OTP: the challengeId of POST /sca/login/start")
	}
	return f.Err()
}

// LoginComplete is the answer of POST /sca/login/complete.
type LoginComplete struct {
	Status           string     `json:"status"`
	SessionExpiresAt *time.Time `json:"sessionExpiresAt"`
}

// CompleteLogin checks the started login's proof and opens the customer's
// SCA session for SessionLifetime (R-SCA-02, R-SCA-03). Wrong codes count
// toward the factor's lock.
func (s *Service) CompleteLogin(ctx context.Context, t store.Tenant, customerID string, req LoginCompleteRequest) (LoginComplete, error) {
	if err := req.Validate(); err != nil {
		return LoginComplete{}, err
	}
	var out LoginComplete
	var refusal error
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		st, f, now, err := s.openFactor(ctx, tx, t, customerID, *req.Factor, factorActive, notEnrolled())
		if err != nil {
			return err
		}
		l := st.Login
		if l == nil || l.Factor != f.Type || (f.Type == FactorSMS && l.ID != *req.ChallengeID) {
			return apierr.Conflict("No " + f.Type + " login of customer " + customerID + " is started (or challengeId is not its); POST /sca/login/start first")
		}
		if !now.Before(l.ExpiresAt) {
			st.Login = nil
			refusal = wrongProof("code", "the login expired; start a new one")
		} else if refusal, err = s.checkCode(ctx, tx.Q, t, customerID, f, l.CodeHash,
			proofOf(req.Code, req.PasskeyAssertion, req.Origin, l.Session), now); err != nil {
			return err
		}
		d := store.ScaDecision{CustomerID: customerID, Kind: KindLogin, Factor: f.Type, Outcome: OutcomeApproved,
			Reason: "endUserIpAddress " + *req.EndUserIPAddress}
		if refusal != nil {
			d.Outcome, d.Reason = outcomeOf(refusal), refusal.Error()
		} else {
			exp := now.Add(SessionLifetime)
			st.SessionExpiresAt, st.Login = &exp, nil
			out = LoginComplete{Status: "SUCCESS", SessionExpiresAt: &exp}
		}
		if err := decide(ctx, tx, t, d); err != nil {
			return err
		}
		return saveState(ctx, tx, t, customerID, *st)
	})
	if err != nil {
		return LoginComplete{}, err
	}
	return out, refusal
}

func outcomeOf(refusal error) string {
	if e, ok := apierr.From(refusal); ok && e.Code == "ACCOUNT_LOCKED" {
		return OutcomeLocked
	}
	return OutcomeRejected
}

// checkCode checks a code for factor f: an SMS code against codeHash, a
// TOTP code against the factor's secret (once per time step). A wrong code
// is counted on f and returned as the refusal (ACCOUNT_LOCKED once the
// count locks the factor); the error is for failures of the service.
func (s *Service) checkCode(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor, codeHash string, p proof, now time.Time) (error, error) {
	ok := false
	refusal := wrongProof("code", "is not the expected code (a TOTP code is accepted once)")
	switch f.Type {
	case FactorSMS:
		ok = codeMatches(codeHash, p.code)
	case FactorTOTP:
		secret, err := s.Sealer.Open(f.SealedSecret, sealAD(t, customerID, f.CredentialID))
		if err != nil {
			return nil, err
		}
		var step uint64
		if ok, step = checkTOTP(string(secret), p.code, now, f.LastStep); ok {
			f.LastStep = step
		}
	case FactorPasskey:
		var pkRefusal, err error
		if ok, pkRefusal, err = s.checkPasskeyAssertion(ctx, q, t, customerID, f, p.session, p.assertion, p.origin); err != nil {
			return nil, err
		}
		if pkRefusal != nil {
			refusal = pkRefusal
		}
	}
	if ok {
		succeed(f)
		return nil, nil
	}
	if locked := fail(f, now); locked != nil {
		return locked, nil
	}
	return refusal, nil
}

// proof is what a customer proves a factor with: a code, or a passkey
// assertion made on origin for the ceremony session.
type proof struct {
	code      string
	assertion json.RawMessage
	origin    string
	session   json.RawMessage
}

func proofOf(code *string, assertion json.RawMessage, origin *string, session json.RawMessage) proof {
	p := proof{assertion: assertion, session: session}
	if code != nil {
		p.code = *code
	}
	if origin != nil {
		p.origin = *origin
	}
	return p
}

// checkProofFields: a PASSKEY proof is passkeyAssertion with origin, any
// other a code.
func checkProofFields(f *apierr.Fields, factorName, code *string, assertion json.RawMessage, origin *string) {
	hasAssertion := len(assertion) > 0 && string(assertion) != "null"
	if (factorName != nil && *factorName == FactorPasskey) || (factorName == nil && hasAssertion) {
		if !hasAssertion {
			f.Add("passkeyAssertion", apierr.Required, "is required for PASSKEY")
		}
		if origin == nil || *origin == "" {
			f.Add("origin", apierr.Required, "is required with passkeyAssertion: the origin it was made on")
		}
		return
	}
	if code == nil || *code == "" {
		f.Add("code", apierr.Required, "is required")
	}
	if hasAssertion {
		f.Add("passkeyAssertion", apierr.AdditionalProperties, "is only for the PASSKEY factor")
	}
}

// sessionRequired is 409 SCA_SESSION_REQUIRED (R-SCA-01, R-AUTH-03: never
// 401, the platform's credentials were fine).
func sessionRequired(customerID string) error {
	return apierr.New("SCA_SESSION_REQUIRED", "Customer "+customerID+
		" has no valid SCA login session; complete POST /sca/login/start and /sca/login/complete first")
}

// RequireSession refuses an operation of a customer who needs SCA and has
// no valid login session (R-SCA-01). It reports whether the customer needs
// SCA (an unknown or deleted customer does not: the caller reports it).
func (s *Service) RequireSession(ctx context.Context, q store.Q, t store.Tenant, customerID string) (bool, error) {
	need, _, err := s.required(ctx, q, t, customerID)
	if err != nil || !need {
		return need, err
	}
	return true, s.sessionOf(ctx, q, t, customerID)
}

// RequireSessionOf is RequireSession for a live customer's row the caller
// has read.
func (s *Service) RequireSessionOf(ctx context.Context, q store.Q, t store.Tenant, row store.Customer) (bool, error) {
	need, err := s.requiredOf(ctx, q, t, row)
	if err != nil || !need {
		return need, err
	}
	return true, s.sessionOf(ctx, q, t, row.ID)
}

// sessionOf refuses a customer who needs SCA without a valid login session.
func (s *Service) sessionOf(ctx context.Context, q store.Q, t store.Tenant, customerID string) error {
	st, err := loadState(ctx, q, t, customerID, false)
	if err != nil {
		return err
	}
	if st.SessionExpiresAt == nil || !s.DB.Now().Before(*st.SessionExpiresAt) {
		return sessionRequired(customerID)
	}
	return nil
}

func notEnrolled() error {
	return wrongProof("factor", "is not a factor the customer has enrolled (GET /sca/factors)")
}
