package stablecoins

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
)

// effect is what the ledger does on a transition.
type effect int

const (
	noEffect     effect = iota
	postFirst           // the funds arrived: mint fiat in / burn tokens back
	postSecond          // the provider finished: mint tokens out / burn fiat out
	reverseFirst        // the provider failed after the funds arrived
)

// edge is one allowed status change.
type edge struct {
	From, To string
	Effect   effect
}

// Transitions is the one table of operation status changes. Anything else
// is refused. Terminal: COMPLETED, FAILED, EXPIRED.
var Transitions = []edge{
	{StatusCreated, StatusPendingFunding, noEffect},
	{StatusPendingFunding, StatusPendingProvider, postFirst},
	{StatusPendingFunding, StatusExpired, noEffect},
	{StatusPendingFunding, StatusFailed, noEffect},
	{StatusPendingProvider, StatusProcessing, noEffect},
	{StatusPendingProvider, StatusFailed, reverseFirst},
	{StatusProcessing, StatusCompleted, postSecond},
	{StatusProcessing, StatusFailed, reverseFirst},
}

// order is the forward path of the statuses.
var order = []string{StatusCreated, StatusPendingFunding, StatusPendingProvider, StatusProcessing, StatusCompleted}

func lookupEdge(from, to string) (edge, bool) {
	for _, e := range Transitions {
		if e.From == from && e.To == to {
			return e, true
		}
	}
	return edge{}, false
}

// Terminal reports whether an operation in status moves no more.
func Terminal(status string) bool {
	return status == StatusCompleted || status == StatusFailed || status == StatusExpired
}

// pathTo lists the statuses an operation passes from its status to target:
// a provider that reports a later state than the next one still walks every
// step (and every ledger effect) in order.
func pathTo(from, target string) []string {
	if _, ok := lookupEdge(from, target); ok {
		return []string{target}
	}
	var path []string
	seen := false
	for _, st := range order {
		if seen {
			path = append(path, st)
			if st == target {
				return path
			}
		}
		seen = seen || st == from
	}
	return nil
}

// statusOf maps the provider's transfer status to the operation's.
func statusOf(providerStatus string) string {
	switch providerStatus {
	case ProviderAwaitingFunds:
		return StatusPendingFunding
	case ProviderPending:
		return StatusPendingProvider
	case ProviderProcessing:
		return StatusProcessing
	case ProviderComplete:
		return StatusCompleted
	case ProviderFailed:
		return StatusFailed
	}
	return ""
}

// transition moves op to status inside tx: its ledger effect, then the
// webhook event STABLECOIN_OPERATION.<STATUS> carrying the operation.
func (s *Service) transition(ctx context.Context, tx *store.Tx, c store.Stablecoin, op *store.StablecoinOperation, to string) error {
	e, ok := lookupEdge(op.Status, to)
	if !ok {
		return fmt.Errorf("stablecoins: operation %s cannot move from %s to %s", op.ID, op.Status, to)
	}
	if err := s.apply(ctx, tx, c, op, e.Effect); err != nil {
		return err
	}
	op.Status, op.UpdatedAt = to, tx.Now().UTC().Truncate(time.Microsecond)
	if Terminal(to) {
		op.DueAt = nil
	}
	_, err := events.Emit(ctx, tx, op.Tenant, events.StablecoinOperation(to), op.ID, operationView(*op, c))
	return err
}

// legs are the ledger postings of an operation: first the funds that
// arrive, then what the provider delivers.
func (s *Service) legs(ctx context.Context, tx *store.Tx, c store.Stablecoin, op store.StablecoinOperation) (fiatIn, tokensOut []ledger.PostingSpec, err error) {
	t := op.Tenant
	acct := func(code, cur string) string {
		if err != nil {
			return ""
		}
		var a ledger.Account
		a, err = s.Ledger.SystemAccountTx(ctx, tx, t, code, cur)
		return a.ID
	}
	world, reserve := acct(ledger.CodeWorld, c.BaseCurrency), acct(CodeReserve+":"+c.ID, c.BaseCurrency)
	tokensWorld, supply := acct(ledger.CodeWorld, c.ID), acct(CodeSupply, c.ID)
	fiatIn = []ledger.PostingSpec{{AccountID: world, Currency: c.BaseCurrency, Amount: -op.FiatAmount},
		{AccountID: reserve, Currency: c.BaseCurrency, Amount: op.FiatAmount}}
	tokensOut = []ledger.PostingSpec{{AccountID: supply, Currency: c.ID, Amount: -op.Amount},
		{AccountID: tokensWorld, Currency: c.ID, Amount: op.Amount}}
	return fiatIn, tokensOut, err
}

func negate(ps []ledger.PostingSpec) []ledger.PostingSpec {
	out := make([]ledger.PostingSpec, len(ps))
	for i, p := range ps {
		p.Amount = -p.Amount
		out[i] = p
	}
	return out
}

// apply writes a transition's ledger effect. A mint takes fiat in (world →
// reserve), then issues tokens (supply → world); a burn takes tokens back
// (world → supply), then pays fiat out (reserve → world).
func (s *Service) apply(ctx context.Context, tx *store.Tx, c store.Stablecoin, op *store.StablecoinOperation, e effect) error {
	if e == noEffect {
		return nil
	}
	fiatIn, tokensOut, err := s.legs(ctx, tx, c, *op)
	if err != nil {
		return err
	}
	first, second := fiatIn, tokensOut
	firstID, secondID := &op.FiatTransferID, &op.TokenTransferID
	if op.OperationType == TypeBurn {
		first, second = negate(tokensOut), negate(fiatIn)
		firstID, secondID = &op.TokenTransferID, &op.FiatTransferID
	}
	var spec ledger.TransferSpec
	target := firstID
	switch e {
	case postFirst:
		spec = ledger.TransferSpec{Postings: first, Reference: op.ID}
	case postSecond:
		spec, target = ledger.TransferSpec{Postings: second, Reference: op.ID}, secondID
	case reverseFirst:
		if *firstID == "" {
			return nil
		}
		spec = ledger.TransferSpec{Kind: ledger.KindReversal, ReversesID: *firstID, Reference: op.ID}
	}
	out, err := s.Ledger.Apply(ctx, tx, op.Tenant, []ledger.TransferSpec{spec})
	if err != nil {
		return err
	}
	if e != reverseFirst {
		*target = out[0].ID
	}
	return nil
}

// Supply is the stablecoin's issued supply from the ledger: −balance of its
// STABLECOIN_SUPPLY account, Σ completed mints − Σ burned.
func (s *Service) Supply(ctx context.Context, t store.Tenant, coinID string) (int64, error) {
	row, err := s.DB.Read().LedgerAccountByCode(ctx, t, CodeSupply, coinID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil // nothing minted yet
	}
	if err != nil {
		return 0, err
	}
	b, err := s.Ledger.Balance(ctx, t, row.ID)
	return -b.Posted, err
}
