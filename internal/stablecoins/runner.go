package stablecoins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// RunnerOptions configure the background work of one node.
type RunnerOptions struct {
	// PollInterval is how often an idle node looks for due operations
	// (default 250ms).
	PollInterval time.Duration
	// Batch is how many due operations one pass takes (default 16).
	Batch int
	Log   *slog.Logger
}

// Run advances due operations until ctx ends. Every node may run it: a
// step locks its operation and re-reads it, so a step another node applied
// first is not applied again, and a crash rolls the step's transaction
// back, to be tried again.
func (s *Service) Run(ctx context.Context, opts RunnerOptions) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.Batch <= 0 {
		opts.Batch = 16
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	for ctx.Err() == nil {
		n, err := s.RunDue(ctx, opts.Batch, opts.Log)
		if err != nil && ctx.Err() == nil {
			opts.Log.Warn("stablecoin operations", "error", err.Error())
		}
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(opts.PollInterval):
		}
	}
}

// RunDue applies one step of up to batch due operations and returns how
// many advanced.
func (s *Service) RunDue(ctx context.Context, batch int, log *slog.Logger) (int, error) {
	due, err := s.DB.Read().DueStablecoinOperations(ctx, s.now(), batch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range due {
		moved, err := s.Step(ctx, d.Tenant, d.ID)
		if err != nil {
			if ctx.Err() != nil {
				return n, nil
			}
			log.Error("stablecoin operation step failed; will retry", "operation_id", d.ID, "error", err.Error())
			var attempts int
			if op, gerr := s.DB.Read().GetStablecoinOperation(ctx, d.Tenant, d.ID, false); gerr == nil {
				attempts = op.Attempts
			}
			backoff := min(time.Duration(1<<min(attempts, 12))*time.Second, 10*time.Minute)
			if derr := s.DB.Write().DelayStablecoinOperation(ctx, d.Tenant, d.ID, err.Error(), s.now().Add(backoff)); derr != nil {
				return n, derr
			}
			continue
		}
		if moved {
			n++
		}
	}
	return n, nil
}

// Drain runs due steps until none is due (tests and tools).
func (s *Service) Drain(ctx context.Context) error {
	for {
		n, err := s.RunDue(ctx, 64, slog.New(slog.DiscardHandler))
		if err != nil || n == 0 {
			return err
		}
	}
}

// Step applies the due step of one operation in one transaction: it asks
// the provider for the transfer's state (what the provider's webhook
// reports), walks the operation to the matching status with the ledger
// effects and events of each transition, or expires it when its funds did
// not come in time. It reports whether the operation was due.
func (s *Service) Step(ctx context.Context, t store.Tenant, opID string) (bool, error) {
	moved := false
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		moved = false
		op, err := tx.GetStablecoinOperation(ctx, t, opID, true)
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		if op.DueAt == nil || op.DueAt.After(now) || Terminal(op.Status) {
			return nil
		}
		moved = true
		c, err := tx.GetStablecoin(ctx, t, op.StablecoinID, false)
		if err != nil {
			return err
		}
		return s.advance(ctx, tx, c, &op, now)
	})
	return moved, err
}

func (s *Service) advance(ctx context.Context, tx *store.Tx, c store.Stablecoin, op *store.StablecoinOperation, now time.Time) error {
	link, err := tx.GetStablecoinProviderAccount(ctx, op.Tenant, op.ProviderAccountID, false)
	if err != nil {
		return err
	}
	creds, err := s.credentials(link)
	if err != nil {
		return err
	}
	next, err := s.Provider(op.Tenant.Env).Refresh(ctx, creds, orderOf(*op, c), transferOf(*op), now)
	if err != nil {
		return err
	}
	if next.Status == ProviderAwaitingFunds && op.ExpiresAt != nil && !now.Before(*op.ExpiresAt) {
		// The funds did not come in time (the provider cancels the order).
		op.ProviderStatus = next.Status
		if err := s.transition(ctx, tx, c, op, StatusExpired); err != nil {
			return err
		}
		return tx.UpdateStablecoinOperation(ctx, *op)
	}
	unchanged := next.Status == op.ProviderStatus
	op.ProviderStatus = next.Status // the events of this step show the provider's new status
	if err := s.follow(ctx, tx, c, op, next); err != nil {
		return err
	}
	if !Terminal(op.Status) {
		due := next.CheckAfter
		if !due.After(now) && unchanged {
			due = now.Add(time.Second) // no news and no date for them: ask again shortly
		} else if !due.After(now) {
			due = now
		}
		if op.Status == StatusPendingFunding && op.ExpiresAt != nil && op.ExpiresAt.Before(due) {
			due = *op.ExpiresAt
		}
		op.DueAt = &due
	}
	return tx.UpdateStablecoinOperation(ctx, *op)
}

// follow walks op to the status the provider reports.
func (s *Service) follow(ctx context.Context, tx *store.Tx, c store.Stablecoin, op *store.StablecoinOperation, next Transfer) error {
	target := statusOf(next.Status)
	if target == "" {
		return fmt.Errorf("stablecoins: provider status %q of operation %s", next.Status, op.ID)
	}
	if target == op.Status {
		return nil
	}
	if target == StatusFailed {
		op.FailureReason = next.FailureReason
		if op.FailureReason == "" {
			op.FailureReason = "PROVIDER_TRANSFER_FAILED"
		}
	}
	path := pathTo(op.Status, target)
	if path == nil {
		return errors.New("stablecoins: provider moved operation " + op.ID + " from " + op.Status + " back to " + target)
	}
	for _, st := range path {
		if err := s.transition(ctx, tx, c, op, st); err != nil {
			return err
		}
	}
	if next.Instructions == nil {
		op.FundingInstructions = []byte{}
	}
	return nil
}

// orderOf rebuilds the provider order of a stored operation.
func orderOf(op store.StablecoinOperation, c store.Stablecoin) Order {
	var dst OperationDestination
	_ = json.Unmarshal(op.Destination, &dst)
	return Order{OperationID: op.ID, Type: op.OperationType, ValueType: c.ProviderTokenIdentifier, Amount: op.Amount,
		FiatAmount: op.FiatAmount, Currency: c.BaseCurrency, Network: c.Network, Rail: dst.Rail}
}

// transferOf is the provider transfer as last reported.
func transferOf(op store.StablecoinOperation) Transfer {
	t := Transfer{ID: op.ProviderTransferID, Status: op.ProviderStatus}
	if op.DueAt != nil {
		t.CheckAfter = *op.DueAt
	}
	return t
}
