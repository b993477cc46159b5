package quotes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/sca"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Strong customer authentication of payouts (package sca; R-SCA-01,
// R-SCA-04..08). A quote whose sending customer needs SCA, and that no
// exemption covers, moves no money until the customer authorizes it:
//
//   - POST /quotes answers 202 with the quote PENDING_AUTHORIZATION and an
//     scaChallenge bound to its payee and amounts (dynamic linking);
//     payment instructions are withheld until authorization.
//   - Executing a PENDING quote of such a customer (one created before the
//     customer needed SCA) moves it to PENDING_AUTHORIZATION with a challenge.
//   - Authorize checks the proof (package sca counts wrong ones and locks);
//     a cross-currency payout takes two challenges (conversion, payout). The
//     last one executes the quote — or, for a realtime-funding quote,
//     releases its payment instructions and returns it to PENDING.
//   - A quote still PENDING_AUTHORIZATION at its expiresAt (the challenge's)
//     fails with SCA_NOT_COMPLETED; no money moved (ExpireDue).
//
// Pulls from the customer's own external account (transfer-in) are not
// payouts and need no SCA.

// scaGate decides, at creation, whether the quote waits on SCA: the
// customer's session is required first (409 SCA_SESSION_REQUIRED), then an
// exemption may apply. It returns whether a challenge is needed and the
// exemption applied.
func (s *Service) scaGate(ctx context.Context, t store.Tenant, r resolved, transfer bool, amount int64) (bool, string, error) {
	if s.SCA == nil || r.plan.Funding == FundPull || r.plan.SenderCustomerID == "" {
		return false, "", nil
	}
	q := s.DB.Read()
	var need bool
	var err error
	if r.sender != nil && r.sender.ID == r.plan.SenderCustomerID {
		need, err = s.SCA.RequireSessionOf(ctx, q, t, *r.sender)
	} else {
		need, err = s.SCA.RequireSession(ctx, q, t, r.plan.SenderCustomerID)
	}
	if err != nil || !need {
		return false, "", err
	}
	exemption, err := s.SCA.Exemption(ctx, q, t, amount, r.plan.SendingCurrency, r.trustedPayee)
	if err != nil || exemption != "" {
		return false, exemption, err
	}
	if transfer {
		return false, "", apierr.Conflict("Customer " + r.plan.SenderCustomerID + " needs strong customer authentication for payouts; " +
			"create the payout with POST /quotes and authorize it with POST /quotes/{quoteId}/authorize")
	}
	return true, "", nil
}

// payoutOf is what a quote's challenges authorize.
func payoutOf(d *document) sca.Payout {
	q := d.Quote
	steps := 1
	if d.Plan.SendingCurrency != d.Plan.ReceivingCurrency {
		steps = 2
	}
	return sca.Payout{CustomerID: d.Plan.SenderCustomerID, QuoteID: q.ID,
		Payee:         q.Destination.DestinationType + ":" + q.Destination.AccountID + q.Destination.UmaAddress,
		SendingAmount: q.TotalSendingAmount, SendingCurrency: d.Plan.SendingCurrency,
		ReceivingAmount: q.TotalReceivingAmount, ReceivingCurrency: d.Plan.ReceivingCurrency,
		Steps: steps, Factor: d.Plan.ScaFactor}
}

// holdForSCA issues the quote's first challenge inside tx and sets the
// quote (in d and row) PENDING_AUTHORIZATION, expiring with the challenge,
// its payment instructions withheld. The caller moves the transaction.
func (s *Service) holdForSCA(ctx context.Context, tx *store.Tx, t store.Tenant, d *document, row *store.Quote) error {
	ch, err := s.SCA.Issue(ctx, tx, t, payoutOf(d), 1)
	if err != nil {
		return err
	}
	if d.Quote.PaymentInstructions != nil {
		d.Plan.WithheldInstructions, d.Quote.PaymentInstructions = d.Quote.PaymentInstructions, nil
	}
	d.Quote.Status, d.Quote.ScaChallenge, d.Quote.ExpiresAt = StatusPendingAuthorization, &ch, ch.ExpiresAt
	row.Status, row.ExpiresAt = StatusPendingAuthorization, ch.ExpiresAt
	return nil
}

// scaOnExecute holds a PENDING quote of a customer who needs SCA at
// execution (R-SCA-05): it reports whether it did.
func (s *Service) scaOnExecute(ctx context.Context, tx *store.Tx, t store.Tenant, row *store.Quote, d *document) (bool, error) {
	p := d.Plan
	if s.SCA == nil || p.Funding == FundPull || p.SenderCustomerID == "" || p.ScaExemption != "" || p.ScaAuthorized {
		return false, nil
	}
	need, err := s.SCA.RequireSession(ctx, tx.Q, t, p.SenderCustomerID)
	if err != nil || !need {
		return false, err
	}
	if err := s.holdForSCA(ctx, tx, t, d, row); err != nil {
		return false, err
	}
	if err := s.writeQuote(ctx, tx, row, d); err != nil {
		return false, err
	}
	_, err = transactions.Transition(ctx, tx, t, d.Quote.TransactionID,
		transactions.Change{Status: transactions.StatusPendingAuthorization})
	return true, err
}

func (s *Service) writeQuote(ctx context.Context, tx *store.Tx, row *store.Quote, d *document) error {
	body, err := json.Marshal(d)
	if err != nil {
		return err
	}
	row.Document, row.UpdatedAt = body, tx.Now().UTC().Truncate(time.Microsecond)
	return tx.UpdateQuote(ctx, *row)
}

// Authorize satisfies the SCA challenge of a PENDING_AUTHORIZATION quote
// with proof; walletStamp is the Service-Wallet-Signature header (needed
// for an embedded-wallet source not stamped at execute). Wrong proofs are
// refused with 400 (ACCOUNT_LOCKED 423 once they lock the factor) and move
// no money.
func (s *Service) Authorize(ctx context.Context, t store.Tenant, quoteID string, proof sca.Proof, walletStamp string) (Quote, error) {
	if err := s.expireIfDue(ctx, t, quoteID); err != nil {
		return Quote{}, err
	}
	row, err := s.DB.Read().GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Quote{}, quoteNotFound(quoteID)
	}
	if err != nil {
		return Quote{}, err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return Quote{}, err
	}
	if s.SCA == nil || row.Status != StatusPendingAuthorization {
		return Quote{}, apierr.Conflict(fmt.Sprintf("Quote %s is %s: it has no SCA challenge to authorize", row.ID, row.Status))
	}
	p := payoutOf(&d)
	done, err := s.SCA.Authorized(ctx, s.DB.Read(), t, p)
	if err != nil {
		return Quote{}, err
	}
	var next *sca.Challenge
	if !done {
		if next, err = s.SCA.Authorize(ctx, t, p, proof); err != nil {
			return Quote{}, err
		}
	}
	var out Quote
	ctx = s.declareQuoteLocks(ctx, t, quoteID)
	err = s.DB.InBatchTx(ctx, func(tx *store.Tx) error {
		ctx := context.WithoutCancel(ctx) // the batch's connection is shared
		if out, err = s.authorizedTx(ctx, tx, t, quoteID, next, walletStamp); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	return out, err
}

// authorizedTx moves a quote whose challenge was just authorized: to the
// next challenge, or on (execution; for realtime funding, its payment
// instructions).
func (s *Service) authorizedTx(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string, next *sca.Challenge, walletStamp string) (Quote, error) {
	row, err := tx.GetQuote(ctx, t, quoteID, true)
	if err != nil {
		return Quote{}, err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return Quote{}, err
	}
	if row.Status != StatusPendingAuthorization {
		return Quote{}, apierr.Conflict(fmt.Sprintf("Quote %s is %s: it has no SCA challenge to authorize", row.ID, row.Status))
	}
	if next != nil {
		d.Quote.ScaChallenge, d.Quote.ExpiresAt, row.ExpiresAt = next, next.ExpiresAt, next.ExpiresAt
		return d.Quote, s.writeQuote(ctx, tx, &row, &d)
	}
	if ok, err := s.SCA.Authorized(ctx, tx.Q, t, payoutOf(&d)); err != nil || !ok {
		if err == nil {
			err = apierr.Conflict("Quote " + quoteID + "'s SCA challenge is not authorized")
		}
		return Quote{}, err
	}
	d.Plan.ScaAuthorized, d.Quote.ScaChallenge = true, nil
	if d.Plan.Funding == FundInstructions {
		return s.releaseInstructions(ctx, tx, t, &row, &d)
	}
	if d.Plan.WalletPayload != "" && !d.Plan.WalletStamped {
		if s.WalletStamp == nil {
			return Quote{}, apierr.InvalidInput("Quote " + row.ID + " is from an embedded wallet, which this server cannot verify signatures for")
		}
		if err := s.WalletStamp(ctx, tx, t, d.Plan.SourceInternalID, walletStamp, d.Plan.WalletPayload); err != nil {
			return Quote{}, err
		}
	}
	return s.executeTx(ctx, tx, t, &row, &d, nil)
}

// releaseInstructions gives an authorized realtime-funding quote its
// payment instructions: it waits (PENDING) for the funds, for the usual
// quote lifetime from now.
func (s *Service) releaseInstructions(ctx context.Context, tx *store.Tx, t store.Tenant, row *store.Quote, d *document) (Quote, error) {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	d.Quote.PaymentInstructions, d.Plan.WithheldInstructions = d.Plan.WithheldInstructions, nil
	d.Quote.Status, d.Quote.ExpiresAt = StatusPending, now.Add(s.expiry())
	row.Status, row.ExpiresAt = StatusPending, d.Quote.ExpiresAt
	if err := s.writeQuote(ctx, tx, row, d); err != nil {
		return Quote{}, err
	}
	_, err := transactions.Transition(ctx, tx, t, d.Quote.TransactionID, transactions.Change{
		Status: transactions.StatusPending, PaymentInstructions: d.Quote.PaymentInstructions})
	return d.Quote, err
}

// Resend re-sends the SMS code of a PENDING_AUTHORIZATION quote's challenge.
func (s *Service) Resend(ctx context.Context, t store.Tenant, quoteID string) error {
	row, err := s.DB.Read().GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return quoteNotFound(quoteID)
	}
	if err != nil {
		return err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return err
	}
	if s.SCA == nil || row.Status != StatusPendingAuthorization {
		return apierr.Conflict(fmt.Sprintf("Quote %s is %s: it has no SCA challenge", row.ID, row.Status))
	}
	return s.SCA.Resend(ctx, t, d.Plan.SenderCustomerID, quoteID)
}

// failUnauthorizedTx fails a PENDING_AUTHORIZATION quote whose time passed,
// no money moved: SCA_NOT_COMPLETED (R-SCA-08), or QUOTE_EXECUTION_FAILED
// when the customer did authorize it but its execution failed (say,
// INSUFFICIENT_FUNDS) and was not retried.
func (s *Service) failUnauthorizedTx(ctx context.Context, tx *store.Tx, t store.Tenant, row store.Quote) error {
	d, err := decodeDoc(row)
	if err != nil {
		return err
	}
	reason := FailureScaNotCompleted
	if s.SCA != nil {
		authorized, err := s.SCA.Authorized(ctx, tx.Q, t, payoutOf(&d))
		if err != nil {
			return err
		}
		if authorized {
			reason = FailureExecutionFailed
		}
	}
	d.Quote.Status, d.Quote.ScaChallenge, row.Status = StatusFailed, nil, StatusFailed
	if err := s.writeQuote(ctx, tx, &row, &d); err != nil {
		return err
	}
	if _, err := transactions.Transition(ctx, tx, t, row.TransactionID, transactions.Change{
		Status: transactions.StatusFailed, FailureReason: reason}); err != nil {
		return err
	}
	if s.SCA == nil || reason != FailureScaNotCompleted {
		return nil
	}
	return s.SCA.Expired(ctx, tx, t, d.Plan.SenderCustomerID, row.ID)
}

// Failure reasons of a quote that never left PENDING_AUTHORIZATION.
const (
	FailureScaNotCompleted = "SCA_NOT_COMPLETED"
	FailureExecutionFailed = "QUOTE_EXECUTION_FAILED"
)
