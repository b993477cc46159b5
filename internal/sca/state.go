package sca

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Factors.
const (
	FactorSMS     = "SMS_OTP"
	FactorTOTP    = "TOTP"
	FactorPasskey = "PASSKEY"
)

// Factor statuses: PENDING until confirmed, then ACTIVE.
const (
	factorPending = "PENDING"
	factorActive  = "ACTIVE"
)

// Limits.
const (
	// SessionLifetime is how long an SCA login session lasts (Part B
	// "Limits": 180 days; R-SCA-03).
	SessionLifetime = 180 * 24 * time.Hour
	// CodeLifetime is how long an SMS code (login or enrolment) is valid.
	CodeLifetime = 5 * time.Minute
	// LockAfter wrong proofs in a row lock a factor.
	LockAfter = 5
	// SandboxCode is the SMS code in sandbox (always 123456).
	SandboxCode = "123456"
)

// lockFor is how long the n-th failure in a row locks (the reference's
// escalation): 5 → 15 minutes, 6 → 30 minutes, 7 → 1 hour, 8 → 24 hours;
// 9 or more suspends (0 = no automatic expiry).
func lockFor(n int) (time.Duration, bool) {
	switch {
	case n < LockAfter:
		return 0, false
	case n == 5:
		return 15 * time.Minute, true
	case n == 6:
		return 30 * time.Minute, true
	case n == 7:
		return time.Hour, true
	case n == 8:
		return 24 * time.Hour, true
	}
	return 0, true
}

// factor is one enrolled (or being enrolled) factor as stored.
type factor struct {
	CredentialID string `json:"credentialId"`
	Type         string `json:"type"`
	Status       string `json:"status"`
	Name         string `json:"name,omitempty"`
	// Phone is the SMS_OTP number (E.164).
	Phone string `json:"phone,omitempty"`
	// SealedSecret is the TOTP secret sealed (base32 text inside).
	SealedSecret []byte `json:"sealedSecret,omitempty"`
	// CodeHash/CodeExpiresAt: the pending SMS enrolment code (SHA-256).
	CodeHash      string     `json:"codeHash,omitempty"`
	CodeExpiresAt *time.Time `json:"codeExpiresAt,omitempty"`
	// Credential is a PASSKEY's registered WebAuthn credential; Session its
	// pending registration ceremony.
	Credential json.RawMessage `json:"credential,omitempty"`
	Session    json.RawMessage `json:"session,omitempty"`
	// LastStep is the last TOTP time step accepted (a code is never
	// accepted twice).
	LastStep       uint64     `json:"lastStep,omitempty"`
	FailedAttempts int        `json:"failedAttempts"`
	LockedUntil    *time.Time `json:"lockedUntil,omitempty"`
	Suspended      bool       `json:"suspended,omitempty"`
	CreatedAt      time.Time  `json:"createdAt"`
}

// loginChallenge is a started login.
type loginChallenge struct {
	ID        string    `json:"id"`
	Factor    string    `json:"factor"`
	CodeHash  string    `json:"codeHash,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
	// Session is a PASSKEY login's WebAuthn ceremony.
	Session json.RawMessage `json:"session,omitempty"`
}

// state is a customer's SCA document (sca_customers).
type state struct {
	Factors []factor `json:"factors"`
	// Customer-level lockout from the platform's FAILED_LOGIN_ATTEMPT events.
	FailedLogins     int             `json:"failedLogins"`
	LockedUntil      *time.Time      `json:"lockedUntil,omitempty"`
	Suspended        bool            `json:"suspended,omitempty"`
	SessionExpiresAt *time.Time      `json:"sessionExpiresAt,omitempty"`
	Login            *loginChallenge `json:"login,omitempty"`
	Resets           []reset         `json:"resets,omitempty"`
}

func (st *state) active() []factor {
	var out []factor
	for _, f := range st.Factors {
		if f.Status == factorActive {
			out = append(out, f)
		}
	}
	return out
}

// find returns the factor of a type in a status ("" any), or nil.
func (st *state) find(typ, status string) *factor {
	for i := range st.Factors {
		if f := &st.Factors[i]; f.Type == typ && (status == "" || f.Status == status) {
			return f
		}
	}
	return nil
}

// loadState reads (and with lock, locks) a customer's SCA state.
func loadState(ctx context.Context, q store.Q, t store.Tenant, customerID string, lock bool) (state, error) {
	var st state
	row, err := q.GetScaCustomer(ctx, t, customerID, lock)
	if errors.Is(err, store.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(row.Document, &st); err != nil {
		return st, fmt.Errorf("sca: stored state of %s: %w", customerID, err)
	}
	return st, nil
}

func saveState(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, st state) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return tx.PutScaCustomer(ctx, store.ScaCustomer{Tenant: t, CustomerID: customerID, Document: doc,
		UpdatedAt: tx.Now().UTC()})
}

func hashCode(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}

func codeMatches(hash, code string) bool {
	return hash != "" && subtle.ConstantTimeCompare([]byte(hash), []byte(hashCode(code))) == 1
}

// lockedError is 423 ACCOUNT_LOCKED with when the customer may retry
// (R-SCA-07, R-ERR-19).
func lockedError(until *time.Time, failed int, suspended bool) error {
	details := map[string]any{"failedAttempts": failed, "suspended": suspended}
	msg := "Too many failed attempts: locked with no automatic expiry; reset the factor or record RESET_PASSWORD_COMPLETED"
	if until != nil && !suspended {
		details["lockedUntil"] = until.UTC().Format(time.RFC3339)
		msg = "Too many failed attempts: locked until " + until.UTC().Format(time.RFC3339)
	}
	return apierr.New("ACCOUNT_LOCKED", msg).WithDetails(details)
}

// checkLocks refuses while the customer or the factor is locked.
func checkLocks(st *state, f *factor, now time.Time) error {
	if st.Suspended || (st.LockedUntil != nil && now.Before(*st.LockedUntil)) {
		return lockedError(st.LockedUntil, st.FailedLogins, st.Suspended)
	}
	if f != nil && (f.Suspended || (f.LockedUntil != nil && now.Before(*f.LockedUntil))) {
		return lockedError(f.LockedUntil, f.FailedAttempts, f.Suspended)
	}
	return nil
}

// fail counts a wrong proof against f and reports the lock it caused, if
// any (nil: the caller answers its own 400).
func fail(f *factor, now time.Time) error {
	f.FailedAttempts++
	d, locks := lockFor(f.FailedAttempts)
	if !locks {
		return nil
	}
	if d == 0 {
		f.Suspended, f.LockedUntil = true, nil
	} else {
		until := now.Add(d)
		f.LockedUntil = &until
	}
	return lockedError(f.LockedUntil, f.FailedAttempts, f.Suspended)
}

func succeed(f *factor) { f.FailedAttempts, f.LockedUntil, f.Suspended = 0, nil, false }

// decide records one decision.
func decide(ctx context.Context, tx *store.Tx, t store.Tenant, d store.ScaDecision) error {
	d.ID, d.Tenant, d.CreatedAt = id.New(id.ScaDecision), t, tx.Now().UTC().Truncate(time.Microsecond)
	return tx.InsertScaDecision(ctx, d)
}

// Decision is a stored SCA decision as the platform sees it.
type Decision struct {
	ID          string    `json:"id"`
	CustomerID  string    `json:"customerId"`
	Kind        string    `json:"kind"`
	Factor      string    `json:"factor,omitempty"`
	Outcome     string    `json:"outcome"`
	Reason      string    `json:"reason,omitempty"`
	QuoteID     string    `json:"quoteId,omitempty"`
	ChallengeID string    `json:"challengeId,omitempty"`
	CreatedAt   time.Time `json:"createdAt"`
}

// Decision kinds and outcomes.
const (
	KindEnrolment     = "ENROLMENT"
	KindLogin         = "LOGIN"
	KindAuthorization = "AUTHORIZATION"
	KindExemption     = "EXEMPTION"
	KindReset         = "RESET"
	KindEvent         = "SECURITY_EVENT"
	KindExpiry        = "EXPIRY"

	OutcomeApproved = "APPROVED"
	OutcomeRejected = "REJECTED"
	OutcomeLocked   = "LOCKED"
	OutcomeIssued   = "ISSUED"
	OutcomeRecorded = "RECORDED"
)

// MaxDecisions is how many decisions GET /sca/decisions returns at most.
const MaxDecisions = 1000

// Decisions lists a customer's SCA decisions, oldest first.
func (s *Service) Decisions(ctx context.Context, t store.Tenant, customerID string) ([]Decision, error) {
	q := s.DB.Read()
	if _, err := s.Required(ctx, q, t, customerID); err != nil {
		return nil, err
	}
	rows, err := q.ScaDecisions(ctx, t, customerID, MaxDecisions)
	if err != nil {
		return nil, err
	}
	out := make([]Decision, 0, len(rows))
	for _, r := range rows {
		out = append(out, Decision{ID: r.ID, CustomerID: r.CustomerID, Kind: r.Kind, Factor: r.Factor,
			Outcome: r.Outcome, Reason: r.Reason, QuoteID: r.QuoteID, ChallengeID: r.ChallengeID, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

func subtleEq(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// openFactor loads the customer's SCA state, locked for the transaction, and
// its factor typ in status, checked against its locks: a customer who needs
// no SCA is refused (requireSCA), a factor not there is the missing error.
// now is the transaction's time, truncated as stored.
func (s *Service) openFactor(ctx context.Context, tx *store.Tx, t store.Tenant, customerID, typ, status string, missing error) (*state, *factor, time.Time, error) {
	if err := s.requireSCA(ctx, tx.Q, t, customerID); err != nil {
		return nil, nil, time.Time{}, err
	}
	st, err := loadState(ctx, tx.Q, t, customerID, true)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	f := st.find(typ, status)
	if f == nil {
		return nil, nil, time.Time{}, missing
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	if err := checkLocks(&st, f, now); err != nil {
		return nil, nil, time.Time{}, err
	}
	return &st, f, now, nil
}
