package sca

import (
	"context"
	"regexp"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

var phoneRE = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// Security events a platform records.
const (
	EventResetPasswordCompleted = "RESET_PASSWORD_COMPLETED"
	EventFailedLoginAttempt     = "FAILED_LOGIN_ATTEMPT"
)

// EventRequest is the body of POST /sca/record-event.
type EventRequest struct {
	EventType *string `json:"eventType"`
}

// EventResult is the customer's login-security state after the event.
type EventResult struct {
	EventType      string     `json:"eventType"`
	Suspended      bool       `json:"suspended"`
	LockedUntil    *time.Time `json:"lockedUntil"`
	FailedAttempts int        `json:"failedAttempts"`
}

// RecordEvent records a platform's security event: a failed login counts
// toward the customer's lockout (escalating as lockFor says), a completed
// password reset revokes the SCA session and clears the lockout.
func (s *Service) RecordEvent(ctx context.Context, t store.Tenant, customerID string, req EventRequest) (EventResult, error) {
	if req.EventType == nil || (*req.EventType != EventResetPasswordCompleted && *req.EventType != EventFailedLoginAttempt) {
		return EventResult{}, wrongProof("eventType", "must be RESET_PASSWORD_COMPLETED or FAILED_LOGIN_ATTEMPT")
	}
	var out EventResult
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := s.requireSCA(ctx, tx.Q, t, customerID); err != nil {
			return err
		}
		st, err := loadState(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		switch *req.EventType {
		case EventResetPasswordCompleted:
			st.FailedLogins, st.LockedUntil, st.Suspended, st.SessionExpiresAt, st.Login = 0, nil, false, nil, nil
		case EventFailedLoginAttempt:
			st.FailedLogins++
			if d, locks := lockFor(st.FailedLogins); locks && d == 0 {
				st.Suspended, st.LockedUntil = true, nil
			} else if locks {
				until := now.Add(d)
				st.LockedUntil = &until
			}
		}
		out = EventResult{EventType: *req.EventType, Suspended: st.Suspended, FailedAttempts: st.FailedLogins}
		if !st.Suspended && st.LockedUntil != nil && now.Before(*st.LockedUntil) {
			out.LockedUntil = st.LockedUntil
		}
		if err := decide(ctx, tx, t, store.ScaDecision{CustomerID: customerID, Kind: KindEvent,
			Outcome: OutcomeRecorded, Reason: *req.EventType}); err != nil {
			return err
		}
		return saveState(ctx, tx, t, customerID, st)
	})
	if err != nil {
		return EventResult{}, err
	}
	return out, nil
}
