// Package rails carries payouts over payment rails: a Rail adapter per rail
// family (sandbox simulators today; production adapters later), and the
// durable runner that walks each payout through its rail's steps and settles
// it in the ledger.
//
// Entry point: the quote service calls Submit inside the database
// transaction in which it executed a quote and placed the ledger HOLD
// (source −S pending, fees +F, FX legs, SYSTEM clearing +R in the receiving
// currency). Submit plans the payout on its rail and enqueues a rail job in
// that same transaction, so the payout exists exactly when the execution
// commits. The Runner (Run) then applies each step of the plan when it is
// due, each in one database transaction that also advances the job, so a
// crash at any moment neither loses nor repeats a step:
//
//   - success: POST the hold, move clearing −R → world +R, and transition
//     the transaction to COMPLETED with settledAt, paymentRail and the
//     destination railDetails (SETTLED);
//   - failure: VOID the hold (the automatic refund: the debit never
//     happens) and transition to FAILED with the failureReason and a
//     refund object (COMPLETED);
//   - ACH return after completion: REVERSE the settlement transfers (money
//     back to the source, fees included) and transition to FAILED with
//     PAYOUT_RETURNED, railDetails RETURNED with returnedAt, and a refund.
//
// Sandbox outcomes are chosen by magic amounts (see Magic and
// docs/sandbox.md); production has no rail partner configured yet, so a
// production payout fails with QUOTE_EXECUTION_FAILED and is refunded rather
// than pretending to move money.
package rails

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Payout is what the quote service hands to the rails when it executes a
// quote that pays out to an external account.
type Payout struct {
	Tenant                             store.Tenant
	TransactionID, QuoteID, Rail       string
	HoldID                             string
	SourceAccountID, ExternalAccountID string // internal source, external destination
	SendingAmount, ReceivingAmount     int64
	SendingCurrency, ReceivingCurrency string
	RemittanceInformation              string
	StatementDescriptor                string
}

// JobIDPrefix prefixes rail job ids.
const JobIDPrefix = "RailJob"

// Job kinds.
const (
	KindPayout   = "PAYOUT"   // an outgoing payment carried by the runner
	KindIncoming = "INCOMING" // a (sandbox) incoming bank deposit, for returns
)

// Submit plans a payout on its rail and enqueues its durable job inside the
// caller's transaction. The first step is due after the rail's (scaled)
// typical time from now.
func Submit(ctx context.Context, tx *store.Tx, p Payout) error {
	if p.TransactionID == "" || p.HoldID == "" {
		return errors.New("rails: a payout needs its transaction id and hold id")
	}
	p.Rail = strings.ToUpper(strings.TrimSpace(p.Rail))
	network := ""
	if p.ExternalAccountID != "" {
		if ea, err := tx.GetExternalAccount(ctx, p.Tenant, p.ExternalAccountID, false); err == nil {
			network = networkOf(ea.AccountType, p.ReceivingCurrency)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	st := JobState{Payout: p, Network: network, SubmittedAt: now}
	plan := PlanFor(st)
	st.Details = plan.Initial
	payload, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// The destination shows the rail's railDetails (status PENDING) while
	// the payout is in flight, when the transaction is already recorded.
	if plan.Initial != nil {
		if _, err := tx.GetTransaction(ctx, p.Tenant, p.TransactionID); err == nil {
			if _, err := transactions.Transition(ctx, tx, p.Tenant, p.TransactionID, transactions.Change{
				DestinationRailDetails: detailsJSON(plan.Initial)}); err != nil {
				return err
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	due := now
	if len(plan.Steps) > 0 {
		due = now.Add(Scale(plan.Steps[0].After, clockFactor()))
	}
	return tx.InsertRailJob(ctx, store.RailJob{ID: id.New(JobIDPrefix), Tenant: p.Tenant, TransactionID: p.TransactionID,
		Kind: KindPayout, Rail: plan.Rail, State: store.RailJobPending, Data: payload, DueAt: due,
		CreatedAt: now, UpdatedAt: now})
}

// JobState is what a rail job remembers between steps (stored as JSON).
type JobState struct {
	Payout      Payout    `json:"payout"`
	Network     string    `json:"network,omitempty"`
	SubmittedAt time.Time `json:"submittedAt"`
	// Details is the railDetails as last reported (nil on rails without a
	// railDetails variant).
	Details *Details `json:"details,omitempty"`
	// Ledger transfers written by the steps, so that a later step (an ACH
	// return) can reverse them.
	PostID       string   `json:"postId,omitempty"`
	SettlementID string   `json:"settlementId,omitempty"`
	ReturnIDs    []string `json:"returnIds,omitempty"`
	// Incoming deposits (KindIncoming).
	AccountID         string `json:"accountId,omitempty"`
	DepositTransferID string `json:"depositTransferId,omitempty"`
	AwaitingApproval  bool   `json:"awaitingApproval,omitempty"`
	Amount            int64  `json:"amount,omitempty"`
	Currency          string `json:"currency,omitempty"`
	// Refund is the refund of an incoming payment back to its sender, once
	// requested (RefundIncoming).
	Refund *IncomingRefund `json:"refund,omitempty"`
}

// networkOf names the chain of a crypto external account type.
func networkOf(accountType, cur string) string {
	if n, ok := strings.CutSuffix(accountType, "_WALLET"); ok {
		return n
	}
	if accountType == "LIGHTNING" {
		return "LIGHTNING"
	}
	if cur == "BTC" {
		return "BITCOIN"
	}
	return ""
}
