package rails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Service is the synchronous side of the rails: sandbox incoming deposits,
// their returns, and the platform's approve, reject and cancel.
type Service struct {
	DB     *store.DB
	Ledger *ledger.Service
}

// NewService returns the service over db.
func NewService(db *store.DB) *Service { return &Service{DB: db, Ledger: accounts.NewLedger(db)} }

// IncomingRails are the rails a sandbox incoming bank deposit may use.
var IncomingRails = []string{ACH, ACHSameDay, Wire, RTP, FedNow}

// IncomingRequest is a sandbox incoming bank deposit to an internal
// account's funding instructions.
type IncomingRequest struct {
	AccountID             *string `json:"accountId"`
	Amount                *int64  `json:"amount"`
	PaymentRail           *string `json:"paymentRail"`
	RemittanceInformation *string `json:"remittanceInformation"`
	SenderName            *string `json:"senderName"`
}

// Validate checks the request on its own.
func (r *IncomingRequest) Validate() error {
	var f apierr.Fields
	if r.AccountID == nil || *r.AccountID == "" {
		f.Add("accountId", apierr.Required, "is required: the internal account that receives the deposit")
	}
	switch {
	case r.Amount == nil:
		f.Add("amount", apierr.Required, "is required: the deposit in the account currency's smallest unit")
	case *r.Amount < 1:
		f.Add("amount", apierr.Minimum, "must be at least 1 (the currency's smallest unit)")
	case *r.Amount > ledger.MaxAmount:
		f.Add("amount", apierr.Maximum, "must be at most %d (the largest amount the ledger takes)", ledger.MaxAmount)
	}
	if r.PaymentRail != nil && !slices.Contains(IncomingRails, *r.PaymentRail) {
		f.Add("paymentRail", apierr.Enum, "must be one of %v", IncomingRails)
	}
	if r.RemittanceInformation != nil && len(*r.RemittanceInformation) > 80 {
		f.Add("remittanceInformation", apierr.MaxLength, "must be at most 80 characters")
	}
	if r.SenderName != nil && len(*r.SenderName) > 100 {
		f.Add("senderName", apierr.MaxLength, "must be at most 100 characters")
	}
	return f.Err()
}

func txNotFound(transactionID string) error {
	return apierr.NotFound("TRANSACTION_NOT_FOUND", "Transaction "+transactionID)
}

// Receive records a sandbox incoming bank deposit into an internal account:
// money from the outside world (WORLD) and an INCOMING transaction,
// COMPLETED, whose source carries the rail's originator details and
// railDetails (status SETTLED). An amount ending in 907 (MagicApproval)
// instead waits for the platform: the transaction is PENDING with
// pendingReason COMPLIANCE_REVIEW and no money moves until POST
// /transactions/{id}/approve.
func (s *Service) Receive(ctx context.Context, t store.Tenant, req IncomingRequest) (transactions.Transaction, error) {
	if err := req.Validate(); err != nil {
		return transactions.Transaction{}, err
	}
	rail := ACH
	if req.PaymentRail != nil {
		rail = *req.PaymentRail
	}
	remittance, sender := "", "Sandbox Originator"
	if req.RemittanceInformation != nil {
		remittance = *req.RemittanceInformation
	}
	if req.SenderName != nil && *req.SenderName != "" {
		sender = *req.SenderName
	}
	amount := *req.Amount
	var txnID string
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		acct, err := tx.GetInternalAccount(ctx, t, *req.AccountID)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("ACCOUNT_NOT_FOUND", "Internal account "+*req.AccountID)
		}
		if err != nil {
			return err
		}
		if acct.Status != "ACTIVE" {
			return apierr.Conflict(fmt.Sprintf("Internal account %s is %s and cannot receive money", acct.ID, acct.Status))
		}
		if acct.Suspense {
			return apierr.Conflict("Internal account " + acct.ID + " is a suspense account: deposits cannot be made into it")
		}
		cur := acct.Currency
		now := tx.Now().UTC().Truncate(time.Microsecond)
		txnID = id.New(id.Transaction)
		st := JobState{Payout: Payout{Tenant: t, TransactionID: txnID, Rail: rail, RemittanceInformation: remittance},
			SubmittedAt: now, AccountID: acct.ID, Amount: amount, Currency: cur}
		st.Details = For(rail).Details(st)
		pending := amount%1000 == MagicApproval
		status, pendingReason := transactions.StatusCompleted, ""
		var settled *time.Time
		if pending {
			// Held while the platform screens the payment (R-TXN-30).
			status, st.AwaitingApproval = transactions.StatusPending, true
			pendingReason = transactions.PendingComplianceReview
		} else {
			dep, err := s.deposit(ctx, tx, t, acct.LedgerAccountID, cur, amount, txnID, false)
			if err != nil {
				return accounts.ClosedError(err)
			}
			st.DepositTransferID = dep.ID
			st.Details = Advance(st.Details, ActionSettle, now)
			settled = &now
		}
		src := transactions.Source{SourceType: transactions.SideRealtimeFunding, Currency: cur, AccountHolderName: sender,
			AccountIdentifier: "000123456789", BankName: "Sandbox Originating Bank", BankIdentifier: "021000021",
			PaymentRail: rail, RemittanceInformation: remittance, RailDetails: detailsJSON(st.Details)}
		if st.Details != nil {
			src.EndToEndID, src.TraceNumber = st.Details.EndToEndID, st.Details.TraceNumber
		}
		received := amount
		if _, err := transactions.Record(ctx, tx, t, transactions.New{
			ID: txnID, Type: transactions.TypeIncoming, Status: status, Direction: transactions.Credit,
			CustomerID: acct.CustomerID, AccountID: acct.ID, Source: src,
			Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: acct.ID, Currency: cur},
			SentAmount:  amount, SentCurrency: cur, ReceivedAmount: &received, ReceivedCurrency: cur,
			Reference: acct.FundingReference, Description: "Sandbox incoming " + rail + " deposit",
			LedgerTransferID: st.DepositTransferID, SettledAt: settled, PaymentRail: rail, PendingReason: pendingReason,
		}); err != nil {
			return err
		}
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		return tx.InsertRailJob(ctx, store.RailJob{ID: id.New(JobIDPrefix), Tenant: t, TransactionID: txnID,
			Kind: KindIncoming, Rail: rail, State: store.RailJobDone, Data: b, DueAt: now, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		return transactions.Transaction{}, err
	}
	return (&transactions.Service{DB: s.DB}).Get(ctx, t, txnID)
}

// deposit credits an internal account's ledger account from WORLD. If the
// account has closed (its customer was deleted), toSuspense sends the money
// to the platform's suspense account instead; otherwise the ledger refuses
// it (accounts.ClosedError makes that the API's answer).
func (s *Service) deposit(ctx context.Context, tx *store.Tx, t store.Tenant, ledgerID, cur string, amount int64, txnID string, toSuspense bool) (ledger.Transfer, error) {
	world, err := s.Ledger.SystemAccountTx(ctx, tx, t, ledger.CodeWorld, cur)
	if err != nil {
		return ledger.Transfer{}, err
	}
	out, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{{Reference: txnID, ToSuspense: toSuspense,
		Postings: []ledger.PostingSpec{
			{AccountID: world.ID, Currency: cur, Amount: -amount},
			{AccountID: ledgerID, Currency: cur, Amount: amount},
		}}})
	if err != nil {
		return ledger.Transfer{}, err
	}
	return out[0], nil
}

// withJob runs fn on a transaction's rail job, locked, in one database
// transaction, and returns the transaction afterwards. A transaction without
// a rail job gets notJob.
func (s *Service) withJob(ctx context.Context, t store.Tenant, transactionID string, notJob error,
	fn func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error) (transactions.Transaction, error) {
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetTransaction(ctx, t, transactionID)
		if errors.Is(err, store.ErrNotFound) {
			return txNotFound(transactionID)
		}
		if err != nil {
			return err
		}
		j, err := tx.RailJobByTransaction(ctx, t, transactionID, true)
		if errors.Is(err, store.ErrNotFound) {
			return notJob
		}
		if err != nil {
			return err
		}
		var st JobState
		if err := json.Unmarshal(j.Data, &st); err != nil {
			return fmt.Errorf("rails: job %s: %w", j.ID, err)
		}
		return fn(tx, j, &st, row)
	})
	if err != nil {
		return transactions.Transaction{}, err
	}
	return (&transactions.Service{DB: s.DB}).Get(ctx, t, transactionID)
}

func isACH(rail string) bool { return rail == ACH || rail == ACHSameDay }

func notReturnable(format string, args ...any) error {
	return apierr.Conflict(fmt.Sprintf(format, args...))
}

// Return simulates an ACH return (sandbox). On a completed ACH payout it
// reverses the settlement and the transaction becomes FAILED with
// PAYOUT_RETURNED and a refund (R-TXN-33). On a completed incoming ACH
// deposit it takes the money back out and the transaction becomes FAILED
// with INCOMING_PAYMENT.FAILED and source railDetails RETURNED (R-TXN-34) —
// unless the funds were already used (the account's available balance no
// longer covers it): then the rail reports RETURNED but the transaction
// stays COMPLETED.
func (s *Service) Return(ctx context.Context, t store.Tenant, transactionID string) (transactions.Transaction, error) {
	notJob := notReturnable("Transaction %s is not an ACH transfer of the sandbox rails and cannot be returned", transactionID)
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if !isACH(j.Rail) || st.Details == nil || st.Details.Status != RailSettled {
			return notReturnable("Transaction %s is not a settled ACH transfer and cannot be returned", transactionID)
		}
		if st.Refund != nil && st.Refund.Status != transactions.RefundFailed {
			// The money is on its way back (or back) to the sender already.
			return notReturnable("Transaction %s has a %s refund to its sender and cannot be returned", transactionID, st.Refund.Status)
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		if j.Kind == KindPayout {
			if err := applyPayoutStep(ctx, tx, s.Ledger, st, j.Rail, Step{Action: ActionReturn}); err != nil {
				return err
			}
			j.State = store.RailJobDone // a magic return still pending is superseded
			return saveJob(ctx, tx, j, *st, "")
		}
		st.Details = Advance(st.Details, ActionReturn, now)
		out, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{
			{Kind: ledger.KindReversal, ReversesID: st.DepositTransferID, Reference: transactionID}})
		switch {
		case errors.Is(err, ledger.ErrInsufficientFunds):
			// A later irreversible step already used the funds: the
			// transaction stays COMPLETED (Part A); the rail reports the return.
			if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
				SourceRailDetails: detailsJSON(st.Details)}); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			st.ReturnIDs = []string{out[0].ID}
			if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
				Status: transactions.StatusFailed, SourceRailDetails: detailsJSON(st.Details)}); err != nil {
				return err
			}
		}
		return saveJob(ctx, tx, j, *st, "")
	})
}

// Dishonor simulates the originator dishonoring the return of an incoming
// ACH deposit (sandbox): the money comes back in and the transaction moves
// from FAILED back to COMPLETED with railDetails RETURN_DISHONORED
// (R-TXN-35).
func (s *Service) Dishonor(ctx context.Context, t store.Tenant, transactionID string) (transactions.Transaction, error) {
	notJob := notReturnable("Transaction %s is not a returned incoming ACH deposit", transactionID)
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if j.Kind != KindIncoming || st.Details == nil || st.Details.Status != RailReturned || len(st.ReturnIDs) == 0 {
			return notJob
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		// A customer deleted since the return gets the money in suspense.
		out, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{
			{Kind: ledger.KindReversal, ReversesID: st.ReturnIDs[0], Reference: transactionID, ToSuspense: true}})
		if err != nil {
			return err
		}
		if err := recordSuspense(ctx, tx, t, out, "dishonored return", transactionID); err != nil {
			return err
		}
		st.Details = Advance(st.Details, ActionDishonor, now)
		if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
			Status: transactions.StatusCompleted, SourceRailDetails: detailsJSON(st.Details)}); err != nil {
			return err
		}
		return saveJob(ctx, tx, j, *st, "")
	})
}

// Contest simulates the receiving bank contesting a dishonored return
// (sandbox): railDetails RETURN_CONTESTED with contestedAt; the transaction
// stays COMPLETED and no money moves while the contest is open.
func (s *Service) Contest(ctx context.Context, t store.Tenant, transactionID string) (transactions.Transaction, error) {
	notJob := notReturnable("Transaction %s is not an incoming ACH deposit whose return was dishonored", transactionID)
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if j.Kind != KindIncoming || st.Details == nil || st.Details.Status != RailReturnDishonored {
			return notJob
		}
		st.Details = Advance(st.Details, ActionContest, tx.Now())
		if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
			SourceRailDetails: detailsJSON(st.Details)}); err != nil {
			return err
		}
		return saveJob(ctx, tx, j, *st, "")
	})
}

func notPendingApproval(transactionID string) error {
	return apierr.New("TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL",
		"Transaction "+transactionID+" is not pending platform approval")
}

// Approve approves an incoming payment waiting for the platform: the money
// arrives and the transaction is COMPLETED. Anything else gets 409
// TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL (R-TXN-05).
func (s *Service) Approve(ctx context.Context, t store.Tenant, transactionID string) (transactions.Transaction, error) {
	notJob := notPendingApproval(transactionID)
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if j.Kind != KindIncoming || !st.AwaitingApproval || row.Status != transactions.StatusPending {
			return notJob
		}
		// The payment has arrived: if the account has closed since (its
		// customer was deleted), the money goes to suspense. An internal
		// account's ledger account has its id (accounts.newRow).
		dep, err := s.deposit(ctx, tx, t, st.AccountID, st.Currency, st.Amount, transactionID, true)
		if err != nil {
			return err
		}
		st.DepositTransferID = dep.ID
		if err := recordSuspense(ctx, tx, t, []ledger.Transfer{dep}, "incoming payment approved", transactionID); err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		st.AwaitingApproval = false
		st.Details = Advance(st.Details, ActionSettle, now)
		if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
			Status: transactions.StatusCompleted, SettledAt: &now, SourceRailDetails: detailsJSON(st.Details)}); err != nil {
			return err
		}
		return saveJob(ctx, tx, j, *st, "")
	})
}

// Reject rejects an incoming payment waiting for the platform: no money
// moves and the transaction is FAILED (R-TXN-05's 409 otherwise).
func (s *Service) Reject(ctx context.Context, t store.Tenant, transactionID, reason string) (transactions.Transaction, error) {
	notJob := notPendingApproval(transactionID)
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if j.Kind != KindIncoming || !st.AwaitingApproval || row.Status != transactions.StatusPending {
			return notJob
		}
		st.AwaitingApproval = false
		st.Details = Advance(st.Details, ActionFail, tx.Now())
		if _, err := transactions.Transition(ctx, tx, t, transactionID, transactions.Change{
			Status: transactions.StatusFailed, SourceRailDetails: detailsJSON(st.Details)}); err != nil {
			return err
		}
		return saveJob(ctx, tx, j, *st, "")
	})
}

// CancellableRails are the bank rails whose transfers can be cancelled
// before they settle (the reference's cancel: ACH and wire).
var CancellableRails = []string{ACH, ACHSameDay, Wire}

// Cancel cancels an outgoing ACH or wire payout that has not settled yet:
// the hold is voided and the transaction is FAILED (QUOTE_EXECUTION_FAILED,
// refund reason CANCELLED) with its refund. Any other transaction — settled,
// failed, on another rail, or not a payout — gets 409
// TRANSACTION_NOT_CANCELLABLE.
func (s *Service) Cancel(ctx context.Context, t store.Tenant, transactionID string) (transactions.Transaction, error) {
	notJob := apierr.New("TRANSACTION_NOT_CANCELLABLE", "Transaction "+transactionID+" cannot be cancelled")
	return s.withJob(ctx, t, transactionID, notJob, func(tx *store.Tx, j store.RailJob, st *JobState, row store.Transaction) error {
		if j.Kind != KindPayout || j.State != store.RailJobPending || j.Step != 0 || st.PostID != "" ||
			!slices.Contains(CancellableRails, j.Rail) || row.Status != transactions.StatusProcessing {
			return apierr.New("TRANSACTION_NOT_CANCELLABLE",
				"Transaction "+transactionID+" has settled, failed or is not a pending ACH or wire transfer: it cannot be cancelled")
		}
		p := st.Payout
		if _, err := s.Ledger.Apply(ctx, tx, t, []ledger.TransferSpec{
			{Kind: ledger.KindVoid, HoldID: p.HoldID, Reference: transactionID}}); err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		st.Details = Advance(st.Details, ActionFail, now)
		if err := failWithRefund(ctx, tx, t, transactionID, ReasonQuoteExecutionFailed, "CANCELLED",
			transactions.Change{PaymentRail: j.Rail, DestinationRailDetails: detailsJSON(st.Details)}, now); err != nil {
			return err
		}
		j.State = store.RailJobCancelled
		if err := saveJob(ctx, tx, j, *st, ""); err != nil {
			return err
		}
		return releaseVolume(ctx, tx, p)
	})
}

// SendRequest is POST /sandbox/send: pay a quote's payment instructions.
type SendRequest struct {
	QuoteID        *string `json:"quoteId"`
	CurrencyCode   *string `json:"currencyCode"`
	CurrencyAmount *int64  `json:"currencyAmount"`
}

// Validate checks the request on its own.
func (r *SendRequest) Validate() error {
	var f apierr.Fields
	if r.QuoteID == nil || *r.QuoteID == "" {
		f.Add("quoteId", apierr.Required, "is required: the quote whose payment instructions are paid")
	}
	if r.CurrencyCode == nil || *r.CurrencyCode == "" {
		f.Add("currencyCode", apierr.Required, "is required: the currency sent")
	}
	if r.CurrencyAmount != nil && *r.CurrencyAmount < 1 {
		f.Add("currencyAmount", apierr.Minimum, "must be at least 1 (the currency's smallest unit)")
	} else if r.CurrencyAmount != nil && *r.CurrencyAmount > ledger.MaxAmount {
		f.Add("currencyAmount", apierr.Maximum, "must be at most %d (the largest amount the ledger takes)", ledger.MaxAmount)
	}
	return f.Err()
}

// FundedQuotes is what Send needs from the quote service: where a
// payment-instruction-funded quote's money arrives, and its execution once
// it has (inside the deposit's transaction), returning its transaction id.
type FundedQuotes struct {
	FundingAccount func(ctx context.Context, q store.Q, t store.Tenant, quoteID string) (accountID string, amount int64, cur string, err error)
	ExecuteFunded  func(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string) (transactionID string, err error)
}

// Send simulates the payer sending a quote's payment instructions from a
// real-time funding source (R-QUOTE-31): the deposit arrives in the quote's
// funding account (an INCOMING transaction, COMPLETED) and, in the same
// database transaction, the PENDING quote moves to PROCESSING without an
// execute call. It returns the quote's transaction.
func (s *Service) Send(ctx context.Context, t store.Tenant, req SendRequest, q FundedQuotes) (transactions.Transaction, error) {
	if err := req.Validate(); err != nil {
		return transactions.Transaction{}, err
	}
	accountID, due, cur, err := q.FundingAccount(ctx, s.DB.Read(), t, *req.QuoteID)
	if err != nil {
		return transactions.Transaction{}, err
	}
	var f apierr.Fields
	if *req.CurrencyCode != cur {
		f.Add("currencyCode", apierr.Enum, "must be the quote's sending currency, %s", cur)
	}
	if req.CurrencyAmount != nil && *req.CurrencyAmount != due {
		f.Add("currencyAmount", apierr.Enum, "must be the quote's total sending amount, %d", due)
	}
	if err := f.Err(); err != nil {
		return transactions.Transaction{}, err
	}
	var txnID string
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		acct, err := tx.GetInternalAccount(ctx, t, accountID)
		if err != nil {
			return err
		}
		depositID := id.New(id.Transaction)
		dep, err := s.deposit(ctx, tx, t, acct.LedgerAccountID, cur, due, depositID, false)
		if err != nil {
			return accounts.ClosedError(err)
		}
		transferID := dep.ID
		now := tx.Now().UTC().Truncate(time.Microsecond)
		received := due
		if _, err := transactions.Record(ctx, tx, t, transactions.New{
			ID: depositID, Type: transactions.TypeIncoming, Status: transactions.StatusCompleted,
			Direction: transactions.Credit, CustomerID: acct.CustomerID, AccountID: acct.ID,
			Source: transactions.Source{SourceType: transactions.SideRealtimeFunding, Currency: cur,
				AccountHolderName: "Sandbox payer", BankName: "Sandbox", PaymentRail: RTP,
				RemittanceInformation: *req.QuoteID},
			Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: acct.ID, Currency: cur},
			SentAmount:  due, SentCurrency: cur, ReceivedAmount: &received, ReceivedCurrency: cur,
			Reference: *req.QuoteID, Description: "Sandbox payment of quote " + *req.QuoteID,
			LedgerTransferID: transferID, SettledAt: &now, PaymentRail: RTP,
		}); err != nil {
			return err
		}
		txnID, err = q.ExecuteFunded(ctx, tx, t, *req.QuoteID)
		return err
	})
	if err != nil {
		return transactions.Transaction{}, err
	}
	return (&transactions.Service{DB: s.DB}).Get(ctx, t, txnID)
}
