package externalaccounts

import (
	"context"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// The hosted liveness check. paymentsd serves the page of a LIVENESS
// challenge itself; in sandbox it is a simulator where the person picks the
// outcome. Finishing the check records the outcome on the challenge with a
// due time; Run applies due outcomes in the background, moving the account
// to ACTIVE or UNVERIFIED and emitting EXTERNAL_ACCOUNT.STATUS_UPDATED
// (R-EACCT-16). The outcome row is durable: a crash between the two steps
// delays the outcome, never loses it, and several nodes may run Run at once.

// Errors of the hosted page.
var (
	ErrLinkNotFound = errors.New("externalaccounts: no such verification link")
	ErrLinkExpired  = errors.New("externalaccounts: verification link expired")
	ErrLinkUsed     = errors.New("externalaccounts: verification link already used or replaced")
)

// LivenessView is what the hosted page shows.
type LivenessView struct {
	// State is OPEN (waiting for the person), RECORDED (outcome recorded,
	// being applied), COMPLETED (applied), ABANDONED (replaced by a newer
	// challenge) or EXPIRED.
	State       string
	Outcome     string
	AccountType string
	Network     string
	// Wallet is the wallet's address (or Lightning destination), shortened.
	Wallet    string
	ExpiresAt time.Time
	Sandbox   bool
}

// Liveness returns the page of a liveness link.
func (s *Service) Liveness(ctx context.Context, token string) (LivenessView, error) {
	c, err := s.DB.Read().OwnershipChallengeByToken(ctx, hashToken(token))
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.Method != MethodLiveness) {
		return LivenessView{}, ErrLinkNotFound
	}
	if err != nil {
		return LivenessView{}, err
	}
	return s.view(ctx, s.DB.Read(), c)
}

func (s *Service) view(ctx context.Context, q store.Q, c store.OwnershipChallenge) (LivenessView, error) {
	v := LivenessView{State: c.State, Outcome: c.Outcome, ExpiresAt: c.ExpiresAt, Sandbox: c.Tenant.Env == store.EnvSandbox}
	if c.State == challengeOpen && !s.now().Before(c.ExpiresAt) {
		v.State = "EXPIRED"
	}
	row, err := q.GetExternalAccount(ctx, c.Tenant, c.AccountID, false)
	if errors.Is(err, store.ErrNotFound) {
		if v.State == challengeOpen {
			v.State = challengeAbandoned
		}
		return v, nil
	}
	if err != nil {
		return LivenessView{}, err
	}
	info, err := infoOf(row)
	if err != nil {
		return LivenessView{}, err
	}
	spec := specs[row.AccountType]
	v.AccountType, v.Network = row.AccountType, spec.chain
	for _, p := range []*string{info.Address, info.LightningAddress, info.Invoice, info.Bolt12} {
		if p != nil {
			v.Wallet = shorten(*p)
			break
		}
	}
	return v, nil
}

func shorten(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:10] + "…" + s[len(s)-8:]
}

// RecordLiveness records the outcome (PASS or FAIL) of the check behind a
// link. It is applied after LivenessDelay by Run.
func (s *Service) RecordLiveness(ctx context.Context, token, outcome string) (LivenessView, error) {
	if outcome != OutcomePass && outcome != OutcomeFail {
		return LivenessView{}, errors.New("externalaccounts: outcome must be PASS or FAIL")
	}
	var out LivenessView
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		found, err := tx.OwnershipChallengeByToken(ctx, hashToken(token))
		if errors.Is(err, store.ErrNotFound) || (err == nil && (found.Method != MethodLiveness || found.Tenant.Env != store.EnvSandbox)) {
			// The page is a sandbox simulator: it never decides a
			// production check.
			return ErrLinkNotFound
		}
		if err != nil {
			return err
		}
		c, err := tx.GetOwnershipChallenge(ctx, found.ID, true)
		if err != nil {
			return err
		}
		now := s.now()
		switch {
		case c.State != challengeOpen:
			return ErrLinkUsed
		case !now.Before(c.ExpiresAt):
			return ErrLinkExpired
		}
		due := now.Add(orDefault(s.LivenessDelay, 2*time.Second))
		c.State, c.Outcome, c.ApplyAfter, c.UpdatedAt = challengeRecorded, outcome, &due, now
		if err := tx.UpdateOwnershipChallenge(ctx, c, challengeOpen); err != nil {
			return err
		}
		out, err = s.view(ctx, tx.Q, c)
		return err
	})
	return out, err
}

// ApplyDueLivenessOutcomes applies every recorded liveness outcome that is
// due, and reports how many changed an account.
func (s *Service) ApplyDueLivenessOutcomes(ctx context.Context) (int, error) {
	due, err := s.DB.Read().DueLivenessOutcomes(ctx, s.now(), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range due {
		applied, err := s.applyOutcome(ctx, c.ID)
		if err != nil {
			return n, err
		}
		if applied {
			n++
		}
	}
	return n, nil
}

// applyOutcome applies one recorded outcome, once: the challenge moves from
// RECORDED to COMPLETED in the same transaction as the account's status and
// its event, so a second runner finds nothing left to do.
func (s *Service) applyOutcome(ctx context.Context, challengeID string) (bool, error) {
	applied := false
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		applied = false
		c, err := tx.GetOwnershipChallenge(ctx, challengeID, true)
		if err != nil {
			return err
		}
		if c.State != challengeRecorded {
			return nil
		}
		now := s.now()
		from := c.State
		c.State, c.UpdatedAt = challengeCompleted, now
		if err := tx.UpdateOwnershipChallenge(ctx, c, from); errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		row, err := tx.GetExternalAccount(ctx, c.Tenant, c.AccountID, true)
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted meanwhile: nothing to verify
		}
		if err != nil {
			return err
		}
		if row.Status != StatusPendingOwnershipVerification {
			return nil
		}
		to := StatusUnverified
		if c.Outcome == OutcomePass {
			to = StatusActive
		}
		if err := move(&row, "liveness", to); err != nil {
			return err
		}
		row.UpdatedAt = now
		if err := tx.UpdateExternalAccount(ctx, row); err != nil {
			return err
		}
		applied = true
		return emitStatus(ctx, tx, row)
	})
	return applied, err
}

// Run applies due liveness outcomes every Poll until ctx ends. Every node
// may run it.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(orDefault(s.Poll, time.Second))
	defer t.Stop()
	for {
		if n, err := s.ApplyDueLivenessOutcomes(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("apply liveness outcomes", "error", err.Error())
		} else if n > 0 {
			s.Log.Debug("applied liveness outcomes", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
