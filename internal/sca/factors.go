package sca

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// FactorView is an enrolled factor as the API shows it.
type FactorView struct {
	Factor       string    `json:"factor"`
	CredentialID string    `json:"credentialId"`
	Name         string    `json:"name,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
}

// FactorList is GET /sca/factors.
type FactorList struct {
	Factors []FactorView `json:"factors"`
}

func view(f factor) FactorView {
	return FactorView{Factor: f.Type, CredentialID: f.CredentialID, Name: f.Name, CreatedAt: f.CreatedAt}
}

// ListFactors lists the customer's enrolled (confirmed) factors.
func (s *Service) ListFactors(ctx context.Context, t store.Tenant, customerID string) (FactorList, error) {
	q := s.DB.Read()
	if err := s.requireSCA(ctx, q, t, customerID); err != nil {
		return FactorList{}, err
	}
	st, err := loadState(ctx, q, t, customerID, false)
	if err != nil {
		return FactorList{}, err
	}
	out := FactorList{Factors: []FactorView{}}
	for _, f := range st.active() {
		out.Factors = append(out.Factors, view(f))
	}
	return out, nil
}

// EnrolRequest is the body of POST /sca/factors.
type EnrolRequest struct {
	Type *string `json:"type"`
	Name *string `json:"name"`
}

// Validate checks the request alone.
func (r EnrolRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Type == nil:
		f.Add("type", apierr.Required, "is required: SMS_OTP, TOTP or PASSKEY")
	case *r.Type != FactorSMS && *r.Type != FactorTOTP && *r.Type != FactorPasskey:
		f.Add("type", apierr.Enum, "must be SMS_OTP, TOTP or PASSKEY")
	}
	if r.Name != nil && (len(*r.Name) == 0 || len(*r.Name) > 64) {
		f.Add("name", apierr.MaxLength, "must be 1 to 64 characters")
	}
	return f.Err()
}

// EnrolStart is the answer of POST /sca/factors: for TOTP the shared secret
// and its otpauth:// URI, for SMS_OTP where the code went and until when,
// for PASSKEY the WebAuthn registration options and the relying party.
type EnrolStart struct {
	Type                string     `json:"type"`
	CredentialID        string     `json:"credentialId"`
	Secret              string     `json:"secret,omitempty"`
	SecretBase32Encoded string     `json:"secretBase32Encoded,omitempty"`
	TotpURI             string     `json:"totpUri,omitempty"`
	PhoneNumber         string     `json:"phoneNumber,omitempty"`
	ExpiresAt           *time.Time `json:"expiresAt,omitempty"`
	// PASSKEY.
	Options        json.RawMessage `json:"options,omitempty"`
	AllowedOrigins []string        `json:"allowedOrigins,omitempty"`
	RelyingPartyID string          `json:"relyingPartyId,omitempty"`
}

// sealAD binds a sealed TOTP secret to its customer and credential.
func sealAD(t store.Tenant, customerID, credentialID string) []byte {
	return []byte("sca-totp|" + t.PlatformID + "|" + string(t.Env) + "|" + customerID + "|" + credentialID)
}

// StartEnrolment begins enrolling a factor (a pending enrolment of the same
// type is replaced). A confirmed factor of the type must be deleted first.
func (s *Service) StartEnrolment(ctx context.Context, t store.Tenant, customerID string, req EnrolRequest) (EnrolStart, error) {
	if err := req.Validate(); err != nil {
		return EnrolStart{}, err
	}
	var out EnrolStart
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.requireSCA(ctx, tx.Q, t, customerID); err != nil {
			return err
		}
		st, err := loadState(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		if *req.Type == FactorPasskey && st.find(FactorPasskey, factorActive) != nil {
			return apierr.New("PASSKEY_ALREADY_ENROLLED", "Customer "+customerID+" already has a passkey; delete it first")
		}
		if st.find(*req.Type, factorActive) != nil {
			return apierr.Conflict(fmt.Sprintf("Customer %s already has a %s factor; delete it first", customerID, *req.Type))
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		f := factor{CredentialID: id.New(id.ScaFactor), Type: *req.Type, Status: factorPending, CreatedAt: now}
		if req.Name != nil {
			f.Name = *req.Name
		}
		switch f.Type {
		case FactorTOTP:
			out, err = s.startTOTP(t, customerID, &f)
		case FactorSMS:
			out, err = s.startSMS(ctx, tx.Q, t, customerID, &f, now)
		case FactorPasskey:
			out, err = s.startPasskey(ctx, tx.Q, t, customerID, &f)
		}
		if err != nil {
			return err
		}
		kept := st.Factors[:0]
		for _, g := range st.Factors {
			if g.Type != f.Type || g.Status != factorPending {
				kept = append(kept, g)
			}
		}
		st.Factors = append(kept, f)
		return saveState(ctx, tx, t, customerID, st)
	})
	return out, err
}

func (s *Service) startTOTP(t store.Tenant, customerID string, f *factor) (EnrolStart, error) {
	key, err := totp.Generate(totp.GenerateOpts{Issuer: s.Issuer, AccountName: customerID, Algorithm: otp.AlgorithmSHA1,
		Digits: otp.DigitsSix, Period: 30})
	if err != nil {
		return EnrolStart{}, err
	}
	if f.SealedSecret, err = s.Sealer.Seal([]byte(key.Secret()), sealAD(t, customerID, f.CredentialID)); err != nil {
		return EnrolStart{}, err
	}
	return EnrolStart{Type: FactorTOTP, CredentialID: f.CredentialID, Secret: key.Secret(),
		SecretBase32Encoded: key.Secret(), TotpURI: key.URL()}, nil
}

// startSMS sends the enrolment code to the customer's phone number (on
// file, and verified when the customer's provider verifies contacts).
func (s *Service) startSMS(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor, now time.Time) (EnrolStart, error) {
	row, err := q.GetCustomer(ctx, t, customerID, false)
	if err != nil {
		return EnrolStart{}, err
	}
	var p customers.Profile
	if err := json.Unmarshal(row.Profile, &p); err != nil {
		return EnrolStart{}, err
	}
	if p.PhoneNumber == nil || *p.PhoneNumber == "" {
		return EnrolStart{}, apierr.InvalidInput("Customer " + customerID + " has no phoneNumber to send SMS codes to; set one first")
	}
	if customers.ProviderRuleFor(p).VerifiesContact && (row.PhoneVerified == nil || *row.PhoneVerified != *p.PhoneNumber) {
		return EnrolStart{}, apierr.InvalidInput("Customer " + customerID + "'s phone number is not verified; verify it first (POST /customers/{customerId}/verify-phone)")
	}
	code, err := s.sendCode(t, *p.PhoneNumber)
	if err != nil {
		return EnrolStart{}, err
	}
	exp := now.Add(CodeLifetime)
	f.Phone, f.CodeHash, f.CodeExpiresAt = *p.PhoneNumber, hashCode(code), &exp
	return EnrolStart{Type: FactorSMS, CredentialID: f.CredentialID, PhoneNumber: maskPhone(f.Phone), ExpiresAt: &exp}, nil
}

// sendCode sends a one-time code by SMS and returns it. The sandbox sends
// nothing and its code is always SandboxCode; production has no SMS partner
// configured and refuses.
func (s *Service) sendCode(t store.Tenant, phone string) (string, error) {
	if t.Env != store.EnvSandbox {
		return "", apierr.Conflict("No SMS provider is configured in this environment; SMS_OTP codes cannot be sent")
	}
	s.Log.Info("sca: sandbox SMS code sent", "to", maskPhone(phone))
	return SandboxCode, nil
}

func maskPhone(p string) string {
	if len(p) <= 4 {
		return p
	}
	out := []byte(p)
	for i := 0; i < len(out)-4; i++ {
		if out[i] >= '0' && out[i] <= '9' && i > 2 {
			out[i] = '*'
		}
	}
	return string(out)
}

// ConfirmRequest is the body of POST /sca/factors/confirm.
type ConfirmRequest struct {
	Type       *string         `json:"type"`
	Secret     *string         `json:"secret"`
	Code       *string         `json:"code"`
	Origin     *string         `json:"origin"`
	Credential json.RawMessage `json:"credential"`
}

// Validate checks the request alone.
func (r ConfirmRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Type == nil:
		f.Add("type", apierr.Required, "is required: SMS_OTP, TOTP or PASSKEY")
	case *r.Type == FactorPasskey:
		if r.Origin == nil || *r.Origin == "" {
			f.Add("origin", apierr.Required, "is required for PASSKEY: the origin the credential was made on")
		}
		if len(r.Credential) == 0 || string(r.Credential) == "null" {
			f.Add("credential", apierr.Required, "is required for PASSKEY: the device's credential")
		}
		return f.Err()
	case *r.Type == FactorTOTP:
		if r.Secret == nil || *r.Secret == "" {
			f.Add("secret", apierr.Required, "is required for TOTP: the secret the enrolment returned")
		}
	case *r.Type != FactorSMS:
		f.Add("type", apierr.Enum, "must be SMS_OTP, TOTP or PASSKEY")
	}
	if r.Code == nil || *r.Code == "" {
		f.Add("code", apierr.Required, "is required")
	}
	return f.Err()
}

// ConfirmResult is the answer of POST /sca/factors/confirm.
type ConfirmResult struct {
	Type   string     `json:"type"`
	Factor FactorView `json:"factor"`
}

// ConfirmEnrolment finishes a pending enrolment with the first code. Wrong
// codes count toward the factor's lock.
func (s *Service) ConfirmEnrolment(ctx context.Context, t store.Tenant, customerID string, req ConfirmRequest) (ConfirmResult, error) {
	if err := req.Validate(); err != nil {
		return ConfirmResult{}, err
	}
	var out ConfirmResult
	var refusal error
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		st, f, now, err := s.openFactor(ctx, tx, t, customerID, *req.Type, factorPending,
			apierr.NotFound("NOT_FOUND", "A pending "+*req.Type+" enrolment of customer "+customerID))
		if err != nil {
			return err
		}
		refusal, err = s.checkEnrolment(ctx, tx.Q, t, customerID, f, req, now)
		if err != nil {
			return err
		}
		d := store.ScaDecision{CustomerID: customerID, Kind: KindEnrolment, Factor: f.Type, Outcome: OutcomeApproved}
		if refusal != nil {
			d.Outcome, d.Reason = OutcomeRejected, refusal.Error()
		} else {
			f.Status, f.CodeHash, f.CodeExpiresAt = factorActive, "", nil
			succeed(f)
			out = ConfirmResult{Type: f.Type, Factor: view(*f)}
		}
		if err := decide(ctx, tx, t, d); err != nil {
			return err
		}
		return saveState(ctx, tx, t, customerID, *st)
	})
	if err != nil {
		return ConfirmResult{}, err
	}
	return out, refusal
}

// checkEnrolment checks the confirmation's proof; a wrong one is counted
// on f and returned as the refusal (nil error: the state must be saved).
func (s *Service) checkEnrolment(ctx context.Context, q store.Q, t store.Tenant, customerID string, f *factor, req ConfirmRequest, now time.Time) (error, error) {
	ok := false
	switch f.Type {
	case FactorPasskey:
		var refusal, err error
		if ok, refusal, err = s.checkPasskeyRegistration(ctx, q, t, customerID, f, req); err != nil {
			return nil, err
		}
		if refusal != nil {
			if locked := fail(f, now); locked != nil {
				return locked, nil
			}
			return refusal, nil
		}
	case FactorSMS:
		ok = f.CodeExpiresAt != nil && now.Before(*f.CodeExpiresAt) && codeMatches(f.CodeHash, *req.Code)
	case FactorTOTP:
		secret, err := s.Sealer.Open(f.SealedSecret, sealAD(t, customerID, f.CredentialID))
		if err != nil {
			return nil, err
		}
		if string(secret) != *req.Secret {
			return wrongProof("secret", "is not the secret of the customer's pending TOTP enrolment"), nil
		}
		var step uint64
		ok, step = checkTOTP(string(secret), *req.Code, now, 0)
		if ok {
			f.LastStep = step
		}
	}
	if ok {
		return nil, nil
	}
	if locked := fail(f, now); locked != nil {
		return locked, nil
	}
	return wrongProof("code", "is not the expected code (or it expired)"), nil
}

func wrongProof(field, msg string) error {
	var f apierr.Fields
	f.Add(field, apierr.Format, "%s", msg)
	return f.Err()
}

// checkTOTP verifies an RFC 6238 code (SHA-1, 6 digits, 30 s) at now,
// allowing one step of clock drift each way, never a step at or before
// last (a code is accepted once). It returns the step matched.
func checkTOTP(secret, code string, now time.Time, last uint64) (bool, uint64) {
	cur := uint64(now.Unix()) / 30
	for _, step := range []uint64{cur, cur - 1, cur + 1} {
		if step <= last {
			continue
		}
		want, err := totp.GenerateCodeCustom(secret, time.Unix(int64(step*30), 0),
			totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && len(code) == len(want) && subtleEq(code, want) {
			return true, step
		}
	}
	return false, 0
}

// DeleteFactor removes an enrolled factor; never the customer's last one.
func (s *Service) DeleteFactor(ctx context.Context, t store.Tenant, customerID, credentialID string) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.requireSCA(ctx, tx.Q, t, customerID); err != nil {
			return err
		}
		st, err := loadState(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		at := -1
		for i, f := range st.Factors {
			if f.CredentialID == credentialID {
				at = i
			}
		}
		if at < 0 {
			return apierr.NotFound("NOT_FOUND", "Factor "+credentialID+" of customer "+customerID)
		}
		f := st.Factors[at]
		if f.Status == factorActive && len(st.active()) == 1 {
			return apierr.Conflict("Factor " + credentialID + " is the customer's last enrolled factor and cannot be deleted; enrol another first")
		}
		st.Factors = append(st.Factors[:at], st.Factors[at+1:]...)
		if err := decide(ctx, tx, t, store.ScaDecision{CustomerID: customerID, Kind: KindEnrolment, Factor: f.Type,
			Outcome: "DELETED"}); err != nil {
			return err
		}
		return saveState(ctx, tx, t, customerID, st)
	})
}
