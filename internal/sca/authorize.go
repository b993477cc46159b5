package sca

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Authorize checks a proof against the payout's pending challenge in its
// own database transaction, so a wrong proof is counted (and may lock the
// factor, 423) even though it is refused. On success the challenge is
// AUTHORIZED and, when the payout needs another step, the next challenge is
// issued and returned; nil means the payout is fully authorized.
func (s *Service) Authorize(ctx context.Context, t store.Tenant, p Payout, proof Proof) (*Challenge, error) {
	if err := proof.Validate(); err != nil {
		return nil, err
	}
	var next *Challenge
	var refusal error
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := s.RequireSession(ctx, tx.Q, t, p.CustomerID); err != nil {
			return err
		}
		row, err := tx.LatestScaChallenge(ctx, t, p.QuoteID, true)
		if errors.Is(err, store.ErrNotFound) || (err == nil && row.Status != challengePending) {
			return apierr.Conflict("Quote " + p.QuoteID + " has no pending SCA challenge to authorize")
		}
		if err != nil {
			return err
		}
		refusal, next, err = s.authorizeTx(ctx, tx, t, p, proof, &row)
		return err
	})
	if err != nil {
		return nil, err
	}
	return next, refusal
}

func (s *Service) authorizeTx(ctx context.Context, tx *store.Tx, t store.Tenant, p Payout, proof Proof, row *store.ScaChallenge) (error, *Challenge, error) {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	c, err := decodeChallenge(*row)
	if err != nil {
		return nil, nil, err
	}
	factorName := proof.factorOf(row.Factor)
	st, err := loadState(ctx, tx.Q, t, p.CustomerID, true)
	if err != nil {
		return nil, nil, err
	}
	f := st.find(factorName, factorActive)
	d := store.ScaDecision{CustomerID: p.CustomerID, Kind: KindAuthorization, Factor: factorName,
		Outcome: OutcomeApproved, Reason: row.Purpose, QuoteID: p.QuoteID, ChallengeID: row.ID}
	var refusal error
	switch {
	case f == nil || !slices.Contains(c.AvailableFactors, factorName):
		refusal = wrongProof("factor", "is not one of the challenge's availableFactors")
	case factorName == FactorSMS && row.CodeHash == "":
		refusal = apierr.Conflict("No SMS code was sent for this challenge; POST /quotes/" + p.QuoteID + "/authorize/resend first")
	default:
		if refusal = checkLocks(&st, f, now); refusal != nil {
			break
		}
		if row.Binding != binding(p, row.Purpose, row.Step) || row.CustomerID != p.CustomerID {
			// Dynamic linking: the challenge authorizes another payment.
			refusal = fail(f, now)
			if refusal == nil {
				refusal = wrongProof("code", "the challenge does not authorize this payee and amount")
			}
			break
		}
		if !now.Before(row.ExpiresAt) {
			refusal = wrongProof("code", "the challenge expired at "+row.ExpiresAt.Format(time.RFC3339))
			break
		}
		if refusal, err = s.checkCode(ctx, tx.Q, t, p.CustomerID, f, row.CodeHash,
			proofOf(proof.Code, proof.PasskeyAssertion, proof.Origin, c.PasskeySession), now); err != nil {
			return nil, nil, err
		}
	}
	if refusal != nil {
		d.Outcome, d.Reason = outcomeOf(refusal), refusal.Error()
		if err := decide(ctx, tx, t, d); err != nil {
			return nil, nil, err
		}
		return refusal, nil, saveState(ctx, tx, t, p.CustomerID, st)
	}
	row.Status, row.Factor, row.UpdatedAt = challengeAuthorized, factorName, now
	if err := tx.UpdateScaChallenge(ctx, *row); err != nil {
		return nil, nil, err
	}
	if err := decide(ctx, tx, t, d); err != nil {
		return nil, nil, err
	}
	if err := saveState(ctx, tx, t, p.CustomerID, st); err != nil {
		return nil, nil, err
	}
	if row.Step >= row.Steps {
		return nil, nil, nil
	}
	p.Steps = row.Steps
	p.Factor = factorName
	next, err := s.Issue(ctx, tx, t, p, row.Step+1)
	return nil, &next, err
}

// Resend sends a new SMS code for the quote's pending challenge (the
// challenge's factor becomes SMS_OTP; its expiresAt is not extended).
func (s *Service) Resend(ctx context.Context, t store.Tenant, customerID, quoteID string) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := s.RequireSession(ctx, tx.Q, t, customerID); err != nil {
			return err
		}
		row, err := tx.LatestScaChallenge(ctx, t, quoteID, true)
		if errors.Is(err, store.ErrNotFound) || (err == nil && row.Status != challengePending) {
			return apierr.Conflict("Quote " + quoteID + " has no pending SCA challenge")
		}
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		if !now.Before(row.ExpiresAt) {
			return apierr.Conflict("The SCA challenge of quote " + quoteID + " expired; its code cannot be re-sent")
		}
		c, err := decodeChallenge(row)
		if err != nil {
			return err
		}
		st, err := loadState(ctx, tx.Q, t, customerID, false)
		if err != nil {
			return err
		}
		sms := st.find(FactorSMS, factorActive)
		if sms == nil || !slices.Contains(c.AvailableFactors, FactorSMS) {
			return apierr.Conflict("The challenge of quote " + quoteID + " cannot be satisfied by SMS_OTP; nothing to re-send")
		}
		if c.SentAt != nil && now.Sub(*c.SentAt) < ResendInterval {
			return apierr.New(apierr.CodeRateLimited, "An SMS code was sent less than 30 seconds ago; retry later")
		}
		code, err := s.sendCode(t, sms.Phone)
		if err != nil {
			return err
		}
		c.Factor, c.SentAt = FactorSMS, &now
		row.Factor, row.CodeHash, row.UpdatedAt = FactorSMS, hashCode(code), now
		if row.Document, err = marshalChallenge(c); err != nil {
			return err
		}
		if err := tx.UpdateScaChallenge(ctx, row); err != nil {
			return err
		}
		return decide(ctx, tx, t, store.ScaDecision{CustomerID: customerID, Kind: KindAuthorization, Factor: FactorSMS,
			Outcome: "RESENT", QuoteID: quoteID, ChallengeID: row.ID})
	})
}

// Expired records that a payout's challenge lapsed unauthorized (called in
// the transaction that fails the payout with SCA_NOT_COMPLETED).
func (s *Service) Expired(ctx context.Context, tx *store.Tx, t store.Tenant, customerID, quoteID string) error {
	row, err := tx.LatestScaChallenge(ctx, t, quoteID, true)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	d := store.ScaDecision{CustomerID: customerID, Kind: KindExpiry, Outcome: OutcomeRejected,
		Reason: "SCA_NOT_COMPLETED", QuoteID: quoteID}
	if err == nil {
		d.ChallengeID, d.Factor = row.ID, row.Factor
		if row.Status == challengePending {
			row.Status, row.UpdatedAt = challengeFailed, tx.Now().UTC()
			if err := tx.UpdateScaChallenge(ctx, row); err != nil {
				return err
			}
		}
	}
	return decide(ctx, tx, t, d)
}

// RecordExemption records that a payout went without a challenge under an
// exemption.
func (s *Service) RecordExemption(ctx context.Context, tx *store.Tx, t store.Tenant, customerID, quoteID, exemption string) error {
	return decide(ctx, tx, t, store.ScaDecision{CustomerID: customerID, Kind: KindExemption, Outcome: OutcomeApproved,
		Reason: exemption, QuoteID: quoteID})
}

// Exemptions.
const (
	ExemptionLowValue           = "LOW_VALUE"
	ExemptionTrustedBeneficiary = "TRUSTED_BENEFICIARY"
)

// Exemption returns the exemption a payout falls under under the tenant's
// settings ("" = none): a trusted beneficiary, or a low value.
func (s *Service) Exemption(ctx context.Context, q store.Q, t store.Tenant, amount int64, cur string, trustedPayee bool) (string, error) {
	settings, err := s.Settings(ctx, q, t)
	if err != nil {
		return "", err
	}
	switch {
	case trustedPayee && settings.TrustedBeneficiaryExemption:
		return ExemptionTrustedBeneficiary, nil
	case settings.LowValueExemption != nil && settings.LowValueExemption.Currency == cur &&
		amount <= settings.LowValueExemption.MaxAmount:
		return ExemptionLowValue, nil
	}
	return "", nil
}
