package externalaccounts

import (
	"time"

	"context"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Trust changes waiting for confirmation.
const (
	changeTrust   = "TRUST"
	changeUntrust = "UNTRUST"
)

// StartTrust begins trusting (untrust false) or untrusting a customer's
// account. The change waits on a strong-customer-authentication challenge
// and takes effect on ConfirmTrust; a new start replaces a pending one.
func (s *Service) StartTrust(ctx context.Context, t store.Tenant, accountID string, untrust bool) (TrustStart, error) {
	sca := s.sca(t)
	var out TrustStart
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getOwned(ctx, tx.Q, t, false, accountID, true)
		if err != nil {
			return err
		}
		if row.Trusted != untrust {
			if untrust {
				return apierr.Conflict("The account is not a trusted beneficiary")
			}
			return apierr.Conflict("The account is already a trusted beneficiary")
		}
		if sca == nil {
			return apierr.Conflict("Trusting beneficiaries needs strong customer authentication, and no SCA provider is configured in this environment")
		}
		change, purpose := changeTrust, "TRUST_BENEFICIARY"
		if untrust {
			change, purpose = changeUntrust, "UNTRUST_BENEFICIARY"
		}
		now := s.now()
		ch, err := sca.Issue(ctx, t, row.CustomerID, purpose, now)
		if err != nil {
			return err
		}
		exp := ch.ExpiresAt.UTC().Truncate(time.Microsecond)
		ch.ExpiresAt = exp
		row.TrustChange, row.TrustChallengeID, row.TrustExpiresAt, row.UpdatedAt = change, ch.ID, &exp, now
		if err := tx.UpdateExternalAccount(ctx, row); err != nil {
			return err
		}
		out = TrustStart{ScaChallenge: &ch}
		return nil
	})
	return out, err
}

// ConfirmTrust completes the pending trust (untrust false) or untrust change
// of a customer's account with the customer's proof. A wrong or expired
// proof changes nothing.
func (s *Service) ConfirmTrust(ctx context.Context, t store.Tenant, accountID string, untrust bool, req TrustConfirmRequest) (TrustConfirm, error) {
	if err := req.Validate(); err != nil {
		return TrustConfirm{}, err
	}
	want, verb := changeTrust, "trust"
	if untrust {
		want, verb = changeUntrust, "untrust"
	}
	var out TrustConfirm
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getOwned(ctx, tx.Q, t, false, accountID, true)
		if err != nil {
			return err
		}
		if row.TrustChange != want {
			return apierr.Conflict("No " + verb + " change is waiting for confirmation; POST …/" + accountID + "/" + verb + " first")
		}
		if req.ChallengeID != nil && *req.ChallengeID != row.TrustChallengeID {
			x := &checker{}
			x.add("challengeId", apierr.Enum, "is not the challenge of the pending %s change", verb)
			return x.err()
		}
		now := s.now()
		if row.TrustExpiresAt == nil || !now.Before(*row.TrustExpiresAt) {
			return apierr.InvalidInput("The challenge expired at " + row.TrustExpiresAt.Format("2006-01-02T15:04:05Z07:00") +
				"; start again with POST …/" + accountID + "/" + verb).
				WithDetails(map[string]any{"challengeExpiresAt": row.TrustExpiresAt})
		}
		sca := s.sca(t)
		if sca == nil {
			return apierr.Conflict("No SCA provider is configured in this environment")
		}
		if err := sca.Check(ctx, t, row.TrustChallengeID, req); err != nil {
			return err
		}
		row.Trusted = !untrust
		row.TrustChange, row.TrustChallengeID, row.TrustExpiresAt, row.UpdatedAt = "", "", nil, now
		if err := tx.UpdateExternalAccount(ctx, row); err != nil {
			return err
		}
		out = TrustConfirm{Trusted: row.Trusted}
		return nil
	})
	return out, err
}
