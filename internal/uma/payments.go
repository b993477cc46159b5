package uma

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Payment is an executed payment to a UMA address, handed to settlement in
// the execution's transaction (after its ledger HOLD).
type Payment struct {
	Tenant                store.Tenant
	TransactionID, HoldID string
	QuoteID               string
	Invoice, Receiver     string
	ReceivingCurrency     string
	ReceivingAmount       int64
}

// Submit enqueues the payment; the runner pays it (RunPayments).
func (s *Service) Submit(ctx context.Context, tx *store.Tx, p Payment) error {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	return tx.InsertUmaPayment(ctx, store.UmaPayment{TransactionID: p.TransactionID, Tenant: p.Tenant, HoldID: p.HoldID,
		Invoice: p.Invoice, Receiver: p.Receiver, Currency: p.ReceivingCurrency, ReceivingAmount: p.ReceivingAmount,
		Status: "PENDING", DueAt: now, CreatedAt: now, UpdatedAt: now})
}

// ReasonLnurlpFailed is the failureReason of a UMA payment the receiving
// institution's node did not settle (R-TXN-27).
const ReasonLnurlpFailed = "LNURLP_FAILED"

// maxAttempts bounds retries of a payment whose counterparty is
// unreachable; its invoice expiring ends them sooner.
const maxAttempts = 8

// RunPayments pays due UMA payments until ctx ends. Payments survive a
// restart (they are rows); paying one twice is harmless, since the
// receiving node settles an invoice once and answers the same preimage.
func (s *Service) RunPayments(ctx context.Context, log *slog.Logger) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		due, err := s.DB.Read().DueUmaPayments(ctx, s.DB.Now(), 20)
		if err != nil {
			if ctx.Err() == nil && log != nil {
				log.Error("uma payments", "err", err)
			}
			continue
		}
		for _, p := range due {
			if err := s.PayOne(ctx, p); err != nil && ctx.Err() == nil && log != nil {
				log.Error("uma payment", "transaction", p.TransactionID, "err", err)
			}
		}
	}
}

// PayOne pays one payment's invoice and records the outcome.
func (s *Service) PayOne(ctx context.Context, p store.UmaPayment) error {
	hash, err := s.PayInvoice(ctx, p.Tenant.Env, p.Invoice)
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		cur, lerr := tx.GetUmaPayment(ctx, p.TransactionID, true)
		if lerr != nil || cur.Status != "PENDING" {
			return lerr
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		cur.Attempts++
		cur.UpdatedAt = now
		switch {
		case err == nil:
			return s.settled(ctx, tx, cur, hash, now)
		case isRetryable(err) && cur.Attempts < maxAttempts:
			cur.DueAt = now.Add(time.Duration(cur.Attempts) * time.Second)
			cur.Failure = err.Error()
			return tx.UpdateUmaPayment(ctx, cur)
		}
		return s.failed(ctx, tx, cur, err, now)
	})
}

func isRetryable(err error) bool {
	e, ok := apierr.From(err)
	return ok && e.Details["retryable"] == true
}

// settled posts the hold, moves the receiving amount out of clearing to the
// world (it left over the settlement network) and completes the
// transaction with the payment hash as the settlement leg's transactionHash.
func (s *Service) settled(ctx context.Context, tx *store.Tx, p store.UmaPayment, hash string, now time.Time) error {
	t := p.Tenant
	clearing, err := s.Ledger.SystemAccountTx(ctx, tx, t, CodeClearing, p.Currency)
	if err != nil {
		return err
	}
	world, err := s.Ledger.SystemAccountTx(ctx, tx, t, ledger.CodeWorld, p.Currency)
	if err != nil {
		return err
	}
	if _, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{
		{Kind: ledger.KindPost, HoldID: p.HoldID, Reference: p.TransactionID},
		{Kind: ledger.KindTransfer, Reference: p.TransactionID, Postings: []ledger.PostingSpec{
			{AccountID: clearing.ID, Currency: p.Currency, Amount: -p.ReceivingAmount},
			{AccountID: world.ID, Currency: p.Currency, Amount: p.ReceivingAmount},
		}},
	}); err != nil {
		return err
	}
	details, _ := json.Marshal(map[string]string{"paymentRail": "LIGHTNING", "transactionHash": hash, "umaAddress": p.Receiver})
	if _, err := transactions.Transition(ctx, tx, t, p.TransactionID, transactions.Change{
		Status: transactions.StatusCompleted, SettledAt: &now, DestinationRailDetails: details}); err != nil {
		return err
	}
	p.Status, p.TransactionHash, p.Failure = "SETTLED", hash, ""
	return tx.UpdateUmaPayment(ctx, p)
}

// failed voids the hold (the source gets everything back) and fails the
// transaction with LNURLP_FAILED and a completed refund.
func (s *Service) failed(ctx context.Context, tx *store.Tx, p store.UmaPayment, cause error, now time.Time) error {
	t := p.Tenant
	if _, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{{Kind: ledger.KindVoid, HoldID: p.HoldID, Reference: p.TransactionID}}); err != nil {
		return err
	}
	refund := transactions.Refund{Reference: "Refund-" + p.TransactionID, InitiatedAt: now, Status: transactions.RefundPending, Reason: ReasonLnurlpFailed}
	if _, err := transactions.Transition(ctx, tx, t, p.TransactionID, transactions.Change{Status: transactions.StatusFailed,
		FailureReason: ReasonLnurlpFailed, Refund: &refund}); err != nil {
		return err
	}
	done := refund
	done.Status, done.SettledAt = transactions.RefundCompleted, &now
	if _, err := transactions.Transition(ctx, tx, t, p.TransactionID, transactions.Change{Refund: &done}); err != nil {
		return err
	}
	p.Status, p.Failure = "FAILED", errors.Join(cause).Error()
	return tx.UpdateUmaPayment(ctx, p)
}
