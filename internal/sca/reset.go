package sca

import (
	"context"
	"net/url"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Reset statuses (the reference's TwoFactorResetStatus).
const (
	ResetInitiated      = "INITIATED"
	ResetPendingReview  = "PENDING_REVIEW"
	ResetLivenessPassed = "LIVENESS_PASSED"
	ResetCompleted      = "COMPLETED"
	ResetRejected       = "REJECTED"
	ResetExpired        = "EXPIRED"
)

// ResetMoves is the reset's transition table: liveness is submitted (the
// sandbox simulates its outcome), passes or fails, the reset completes, or
// its window closes first.
var ResetMoves = [][2]string{
	{ResetInitiated, ResetPendingReview},
	{ResetInitiated, ResetExpired},
	{ResetPendingReview, ResetLivenessPassed},
	{ResetPendingReview, ResetRejected},
	{ResetPendingReview, ResetExpired},
	{ResetLivenessPassed, ResetCompleted},
	{ResetLivenessPassed, ResetExpired},
}

func resetAllowed(from, to string) bool {
	for _, m := range ResetMoves {
		if m[0] == from && m[1] == to {
			return true
		}
	}
	return false
}

// Reset limits.
const (
	ResetWindow      = 30 * time.Minute
	ResetsPerDay     = 5
	resetRateWindow  = 24 * time.Hour
	verificationBase = "https://liveness.sandbox.paymentsd.invalid/verify?reset="
)

// reset is one factor reset as stored.
type reset struct {
	ID          string     `json:"id"`
	Factor      string     `json:"factor"`
	Status      string     `json:"status"`
	ExpiresAt   time.Time  `json:"expiresAt"`
	CreatedAt   time.Time  `json:"createdAt"`
	CompletedAt *time.Time `json:"completedAt,omitempty"`
}

// ResetStartRequest is the body of POST /sca/factors/reset.
type ResetStartRequest struct {
	Factor *string `json:"factor"`
}

// ResetStart is its answer.
type ResetStart struct {
	ResetID          string    `json:"resetId"`
	VerificationLink string    `json:"verificationLink"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

// ResetStatus is GET /sca/factors/reset/{resetId}.
type ResetStatus struct {
	Status           string     `json:"status"`
	Factor           string     `json:"factor"`
	EnrollmentStatus *string    `json:"enrollmentStatus"`
	ExpiresAt        time.Time  `json:"expiresAt"`
	CompletedAt      *time.Time `json:"completedAt"`
}

// StartReset opens a liveness-gated reset of a lost factor (at most
// ResetsPerDay a day, else 429 RATE_LIMITED).
func (s *Service) StartReset(ctx context.Context, t store.Tenant, customerID string, req ResetStartRequest) (ResetStart, error) {
	var fe apierr.Fields
	checkFactorName(&fe, "factor", req.Factor)
	if err := fe.Err(); err != nil {
		return ResetStart{}, err
	}
	var out ResetStart
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.requireSCA(ctx, tx.Q, t, customerID); err != nil {
			return err
		}
		if t.Env != store.EnvSandbox {
			// Only the sandbox simulates liveness (SimulateLiveness).
			return apierr.Conflict("No liveness provider is configured in this environment; factor resets cannot be verified")
		}
		st, err := loadState(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		if st.find(*req.Factor, factorActive) == nil {
			return wrongProof("factor", "is not a factor the customer has enrolled")
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		recent := 0
		for _, r := range st.Resets {
			if now.Sub(r.CreatedAt) < resetRateWindow {
				recent++
			}
		}
		if recent >= ResetsPerDay {
			return apierr.New(apierr.CodeRateLimited, "At most 5 factor resets a day per customer; retry later")
		}
		r := reset{ID: id.New(id.ScaReset), Factor: *req.Factor, Status: ResetInitiated,
			ExpiresAt: now.Add(ResetWindow), CreatedAt: now}
		st.Resets = append(st.Resets, r)
		out = ResetStart{ResetID: r.ID, VerificationLink: verificationBase + url.QueryEscape(r.ID), ExpiresAt: r.ExpiresAt}
		if err := decide(ctx, tx, t, store.ScaDecision{CustomerID: customerID, Kind: KindReset, Factor: r.Factor,
			Outcome: ResetInitiated, Reason: r.ID}); err != nil {
			return err
		}
		return saveState(ctx, tx, t, customerID, st)
	})
	return out, err
}

func findReset(st *state, resetID string) *reset {
	for i := range st.Resets {
		if st.Resets[i].ID == resetID {
			return &st.Resets[i]
		}
	}
	return nil
}

// current is a reset's status at now (a reset past its window is EXPIRED).
func (r reset) current(now time.Time) string {
	if r.Status != ResetCompleted && r.Status != ResetRejected && !now.Before(r.ExpiresAt) {
		return ResetExpired
	}
	return r.Status
}

// GetReset reports a reset's status.
func (s *Service) GetReset(ctx context.Context, t store.Tenant, customerID, resetID string) (ResetStatus, error) {
	q := s.DB.Read()
	if err := s.requireSCA(ctx, q, t, customerID); err != nil {
		return ResetStatus{}, err
	}
	st, err := loadState(ctx, q, t, customerID, false)
	if err != nil {
		return ResetStatus{}, err
	}
	r := findReset(&st, resetID)
	if r == nil {
		return ResetStatus{}, apierr.NotFound("NOT_FOUND", "Reset "+resetID+" of customer "+customerID)
	}
	out := ResetStatus{Status: r.current(s.DB.Now()), Factor: r.Factor, ExpiresAt: r.ExpiresAt, CompletedAt: r.CompletedAt}
	if r.Factor != FactorSMS && r.Status == ResetCompleted {
		enrol := "PENDING"
		if st.find(r.Factor, factorActive) != nil {
			enrol = "COMPLETED"
		}
		out.EnrollmentStatus = &enrol
	}
	return out, nil
}

// SimulateLiveness is the sandbox's liveness provider: the end user
// submitted the check (PENDING_REVIEW) and it passed or failed.
func (s *Service) SimulateLiveness(ctx context.Context, t store.Tenant, customerID, resetID string, passed bool) (ResetStatus, error) {
	if t.Env != store.EnvSandbox {
		return ResetStatus{}, apierr.Forbidden("Liveness results are simulated only in sandbox")
	}
	err := s.moveReset(ctx, t, customerID, resetID, func(st *state, r *reset, now time.Time) error {
		to := ResetRejected
		if passed {
			to = ResetLivenessPassed
		}
		if err := stepReset(r, ResetPendingReview, now); err != nil {
			return err
		}
		return stepReset(r, to, now)
	})
	if err != nil {
		return ResetStatus{}, err
	}
	return s.GetReset(ctx, t, customerID, resetID)
}

func stepReset(r *reset, to string, now time.Time) error {
	from := r.current(now)
	if from == to {
		return nil
	}
	if !resetAllowed(from, to) {
		return apierr.Conflict("Reset " + r.ID + " is " + from + " and cannot become " + to)
	}
	r.Status = to
	return nil
}

// ResetCompleteRequest is the optional body of the reset's complete call.
type ResetCompleteRequest struct {
	Mobile *struct {
		CountryCode *string `json:"countryCode"`
		Number      *string `json:"number"`
	} `json:"mobile"`
}

// CompleteReset clears the lost factor once liveness passed: a TOTP factor
// is removed (the customer enrols a new one), an SMS_OTP factor takes the
// new mobile number. The factor's lock goes with it.
func (s *Service) CompleteReset(ctx context.Context, t store.Tenant, customerID, resetID string, req ResetCompleteRequest) error {
	return s.moveReset(ctx, t, customerID, resetID, func(st *state, r *reset, now time.Time) error {
		if r.current(now) != ResetLivenessPassed {
			return apierr.InvalidInput("Reset " + r.ID + " is " + r.current(now) + ": liveness has not passed")
		}
		var phone string
		if r.Factor == FactorSMS {
			m := req.Mobile
			if m == nil || m.CountryCode == nil || m.Number == nil || !phoneRE.MatchString(*m.CountryCode+*m.Number) {
				return wrongProof("mobile", "is required for an SMS_OTP reset: countryCode (+NN) and number, E.164 together")
			}
			phone = *m.CountryCode + *m.Number
		}
		if err := stepReset(r, ResetCompleted, now); err != nil {
			return err
		}
		r.CompletedAt = &now
		kept := st.Factors[:0]
		for _, f := range st.Factors {
			switch {
			case f.Type != r.Factor:
				kept = append(kept, f)
			case r.Factor == FactorSMS && f.Status == factorActive:
				f.Phone = phone
				succeed(&f)
				kept = append(kept, f)
			}
		}
		st.Factors = kept
		return nil
	})
}

// moveReset changes a reset under the customer's lock and records the
// decision.
func (s *Service) moveReset(ctx context.Context, t store.Tenant, customerID, resetID string, fn func(*state, *reset, time.Time) error) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.requireSCA(ctx, tx.Q, t, customerID); err != nil {
			return err
		}
		st, err := loadState(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		r := findReset(&st, resetID)
		if r == nil {
			return apierr.NotFound("NOT_FOUND", "Reset "+resetID+" of customer "+customerID)
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		if err := fn(&st, r, now); err != nil {
			return err
		}
		if err := decide(ctx, tx, t, store.ScaDecision{CustomerID: customerID, Kind: KindReset, Factor: r.Factor,
			Outcome: r.Status, Reason: r.ID}); err != nil {
			return err
		}
		return saveState(ctx, tx, t, customerID, st)
	})
}
