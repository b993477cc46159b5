// Package ledger is the only code that moves money: a double-entry ledger of
// accounts, transfers and postings over the store.
//
// Rules (see also docs in the migration 0002_ledger.sql):
//
//   - A transfer has two or more postings, at most one per account, whose
//     amounts (int64, the currency's smallest unit, never zero) sum to zero per
//     currency. Each posting's currency is its account's.
//   - Transfers and postings are append-only. A correction is a REVERSAL: a new
//     transfer with the negated postings of a TRANSFER, POST or REVERSAL; a
//     transfer is reversed at most once.
//   - A HOLD is a transfer whose postings are pending: it moves nothing yet but
//     reserves the debits (available = posted - pending debits). It is resolved
//     exactly once, by a POST (the full amounts, or smaller amounts of the same
//     sign on the same accounts; the rest is released) or by a VOID (releases
//     everything).
//   - INTERNAL accounts (customer and platform balances) never have a negative
//     available balance: a transfer, hold or reversal that would make one
//     negative is refused, atomically under any concurrency. SYSTEM accounts
//     (world, clearing, fees, FX, card holds) may go negative.
//   - A closed account (its balance row closed: its owner was deleted) takes
//     no credits: a transfer crediting one is refused (ErrAccountClosed),
//     unless it is ToSuspense, which sends the credit to the tenant's
//     suspense account of that currency (Service.Suspense).
//   - Hot SYSTEM accounts keep no balance row: their balance is the sum of their
//     postings, so the transfers that touch them never queue on one row.
//   - A batch is applied in order, each transfer seeing the effects of the ones
//     before it, in one database transaction: if one transfer fails, nothing of
//     the batch is written.
package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Id prefixes of ledger objects.
const (
	AccountIDPrefix  = "LedgerAccount"
	TransferIDPrefix = "LedgerTransfer"
	PostingIDPrefix  = "Posting"
)

// MaxAmount bounds every posting, in the currency's smallest unit (10^15:
// USD 10 trillion in cents). Every API amount that reaches the ledger is
// checked against it first (400 INVALID_INPUT), and Apply refuses a larger
// posting (ErrAmountTooLarge), so no single amount nears int64's limit and
// a sum of fewer than 9,000 of them cannot pass it; sums over many postings
// (a hot account's balance, the audit) are computed without overflow.
const MaxAmount int64 = 1_000_000_000_000_000

// AccountKind says whether an account may go negative.
type AccountKind string

const (
	// Internal accounts hold customer and platform money: their available
	// balance never goes negative.
	Internal AccountKind = "INTERNAL"
	// System accounts stand for the outside world, money in flight, fees,
	// FX positions and card holds: they may go negative.
	System AccountKind = "SYSTEM"
)

// Codes of the system accounts every tenant has per currency. Rails may use
// their own clearing codes (e.g. "CLEARING_ACH").
const (
	CodeWorld        = "WORLD"
	CodeClearing     = "CLEARING"
	CodeServiceFees  = "SERVICE_FEES"
	CodePlatformFees = "PLATFORM_FEES"
	CodeFX           = "FX_POSITION"
	CodeCardHolds    = "CARD_HOLDS"
)

// IsTokenCurrency reports whether cur is a stablecoin's own token unit: a
// platform-issued stablecoin is not in the currency table, so its ledger
// accounts (issued supply, tokens held outside) take its id as their
// currency ("Stablecoin:<uuid>"), amounts in the token's smallest unit.
func IsTokenCurrency(cur string) bool {
	typ, _, ok := strings.Cut(cur, ":")
	return ok && typ == id.Stablecoin && id.Valid(id.Stablecoin, cur)
}

// HotByDefault reports whether SystemAccount makes the account with code hot:
// world, clearing, fee and FX accounts are touched by most transfers.
func HotByDefault(code string) bool {
	switch code {
	case CodeWorld, CodeServiceFees, CodePlatformFees, CodeFX:
		return true
	}
	return len(code) >= len(CodeClearing) && code[:len(CodeClearing)] == CodeClearing
}

// Kind is what a transfer does.
type Kind string

const (
	KindTransfer Kind = "TRANSFER" // moves money now
	KindHold     Kind = "HOLD"     // reserves money: pending postings
	KindPost     Kind = "POST"     // completes a hold
	KindVoid     Kind = "VOID"     // releases a hold; has no postings
	KindReversal Kind = "REVERSAL" // undoes a TRANSFER, POST or REVERSAL
)

// Errors. They are plain Go errors; callers map them to API errors. A batch
// failure is a *BatchError wrapping one of these; errors.Is and errors.As see
// through it.
var (
	ErrInvalidAccount    = errors.New("ledger: invalid account")
	ErrAccountExists     = errors.New("ledger: account id or code already exists")
	ErrAccountNotFound   = errors.New("ledger: account not found")
	ErrInvalidTransfer   = errors.New("ledger: invalid transfer")
	ErrTooFewPostings    = errors.New("ledger: a transfer needs at least two postings")
	ErrInvalidAmount     = errors.New("ledger: invalid amount")
	ErrAmountOverflow    = errors.New("ledger: amount overflows int64")
	ErrAmountTooLarge    = errors.New("ledger: amount above ledger.MaxAmount")
	ErrDuplicateAccount  = errors.New("ledger: an account appears twice in one transfer")
	ErrUnbalanced        = errors.New("ledger: postings do not sum to zero per currency")
	ErrCurrencyMismatch  = errors.New("ledger: posting currency differs from the account's")
	ErrInsufficientFunds = errors.New("ledger: insufficient available funds")
	ErrTransferNotFound  = errors.New("ledger: transfer not found")
	ErrDuplicateTransfer = errors.New("ledger: transfer id already used")
	ErrNotAHold          = errors.New("ledger: transfer is not a hold")
	ErrHoldNotPending    = errors.New("ledger: hold already posted or voided")
	ErrPostExceedsHold   = errors.New("ledger: posted amounts must be within the hold's")
	ErrNotReversible     = errors.New("ledger: transfer cannot be reversed")
	ErrAlreadyReversed   = errors.New("ledger: transfer already reversed")
	ErrBalanceRace       = errors.New("ledger: balance row changed while locked")
	ErrAccountClosed     = errors.New("ledger: account is closed and takes no credits")
	ErrInvariant         = errors.New("ledger: invariant violated")
)

// BatchError tells which transfer of a batch failed; the whole batch was
// refused.
type BatchError struct {
	Index      int
	TransferID string
	Err        error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("ledger: batch transfer %d (%s): %v", e.Index, e.TransferID, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// AccountError names the account an error is about.
type AccountError struct {
	AccountID string
	Err       error
}

func (e *AccountError) Error() string { return fmt.Sprintf("%v: %s", e.Err, e.AccountID) }

func (e *AccountError) Unwrap() error { return e.Err }

// InsufficientFundsError is ErrInsufficientFunds for one account.
type InsufficientFundsError struct {
	AccountID string
	Available int64 // before the refused transfer
	Debit     int64 // what the transfer would have taken from the available balance
}

func (e *InsufficientFundsError) Error() string {
	return fmt.Sprintf("%v: account %s has %d available, needs %d", ErrInsufficientFunds, e.AccountID, e.Available, e.Debit)
}

func (e *InsufficientFundsError) Is(target error) bool { return target == ErrInsufficientFunds }

// Account is a ledger account.
type Account struct {
	ID        string
	Tenant    store.Tenant
	Currency  string
	Kind      AccountKind
	Hot       bool
	Code      string
	Name      string
	CreatedAt time.Time
}

// AccountSpec describes an account to create.
type AccountSpec struct {
	ID       string // optional; e.g. the InternalAccount id it backs. Default: a new LedgerAccount id.
	Currency string
	Kind     AccountKind
	Hot      bool   // SYSTEM only: no balance row, balance derived from postings
	Code     string // optional; unique per tenant and currency
	Name     string
}

// PostingSpec is one leg of a transfer: a signed amount on an account
// (negative debits, positive credits).
type PostingSpec struct {
	AccountID string
	Currency  string
	Amount    int64
}

// TransferSpec describes one transfer of a batch.
type TransferSpec struct {
	ID   string // optional; default a new LedgerTransfer id
	Kind Kind   // default KindTransfer
	// Postings of a TRANSFER or HOLD. For a POST, optional: amounts to post
	// (same accounts and signs as the hold, each no larger); empty posts the
	// whole hold. None for VOID and REVERSAL.
	Postings   []PostingSpec
	HoldID     string // POST, VOID: the hold, stored or earlier in the batch
	ReversesID string // REVERSAL: the transfer to reverse, stored or earlier in the batch
	Reference  string
	Metadata   json.RawMessage // optional JSON
	// ToSuspense sends what this transfer would credit to a closed account
	// (its owner is gone) to the tenant's suspense account in that
	// currency instead (Service.Suspense). Without it such a credit is
	// refused with ErrAccountClosed. It is for money that must still
	// arrive: returns, refunds, late incoming payments.
	ToSuspense bool
}

// Redirect is a credit ToSuspense moved from a closed account to suspense.
type Redirect struct {
	ClosedAccountID   string
	SuspenseAccountID string
	Currency          string
	Amount            int64 // credited to suspense; posted, or pending for a HOLD
}

// Transfer is a stored transfer.
type Transfer struct {
	ID         string
	Tenant     store.Tenant
	Kind       Kind
	HoldID     string
	ReversesID string
	Reference  string
	Metadata   json.RawMessage
	Postings   []Posting
	CreatedAt  time.Time

	// Filled by GetTransfer: the POST or VOID that resolved this hold, and
	// the REVERSAL of this transfer.
	ResolvedBy string
	ReversedBy string

	// Filled by Apply: the credits it sent to suspense (ToSuspense).
	Redirects []Redirect
}

// Posting is a stored posting.
type Posting struct {
	ID         string
	TransferID string
	AccountID  string
	Currency   string
	Amount     int64
	Pending    bool
	CreatedAt  time.Time
}

// Balance is an account's balance.
type Balance struct {
	AccountID      string
	Currency       string
	Posted         int64 // total: the sum of posted postings
	PendingDebits  int64 // reserved by unresolved holds (a positive magnitude)
	PendingCredits int64 // to arrive when unresolved holds post
	Pending        int64 // PendingCredits - PendingDebits
	Available      int64 // Posted - PendingDebits
}

// Service is the ledger.
type Service struct {
	db *store.DB
	// Suspense returns the ledger account id of the tenant's suspense
	// account in a currency, creating it in tx if need be (package accounts
	// provides it: the account is a platform internal account the platform
	// sees and resolves). Nil: credits to closed accounts are always
	// refused.
	Suspense func(ctx context.Context, tx *store.Tx, t store.Tenant, cur string) (string, error)
}

// New returns the ledger over db.
func New(db *store.DB) *Service { return &Service{db: db} }

// CreateAccount creates an account in its own transaction.
func (s *Service) CreateAccount(ctx context.Context, t store.Tenant, spec AccountSpec) (Account, error) {
	var a Account
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		a, err = s.CreateAccountTx(ctx, tx, t, spec)
		return err
	})
	return a, err
}

// CreateAccountTx creates an account inside the caller's transaction.
func (s *Service) CreateAccountTx(ctx context.Context, tx *store.Tx, t store.Tenant, spec AccountSpec) (Account, error) {
	a, err := newAccount(tx.Now(), t, spec)
	if err != nil {
		return Account{}, err
	}
	// ON CONFLICT DO NOTHING rather than a failed insert, which would abort
	// the caller's PostgreSQL transaction.
	inserted, err := tx.InsertLedgerAccountIfAbsent(ctx, newRow(a))
	if err != nil {
		return Account{}, err
	}
	if !inserted {
		return Account{}, fmt.Errorf("%w: id %s or code %q in %s", ErrAccountExists, a.ID, a.Code, a.Currency)
	}
	return a, nil
}

// SystemAccountTx returns the tenant's system account with code in a
// currency, creating it (hot when HotByDefault) if it does not exist yet.
func (s *Service) SystemAccountTx(ctx context.Context, tx *store.Tx, t store.Tenant, code, cur string) (Account, error) {
	row, err := tx.LedgerAccountByCode(ctx, t, code, cur)
	if errors.Is(err, store.ErrNotFound) {
		a, verr := newAccount(tx.Now(), t, AccountSpec{Currency: cur, Kind: System, Hot: HotByDefault(code), Code: code})
		if verr != nil {
			return Account{}, verr
		}
		if _, err := tx.InsertLedgerAccountIfAbsent(ctx, newRow(a)); err != nil {
			return Account{}, err
		}
		row, err = tx.LedgerAccountByCode(ctx, t, code, cur)
	}
	if err != nil {
		return Account{}, err
	}
	return fromRow(row), nil
}

// SystemAccount is SystemAccountTx in its own transaction.
func (s *Service) SystemAccount(ctx context.Context, t store.Tenant, code, cur string) (Account, error) {
	var a Account
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		a, err = s.SystemAccountTx(ctx, tx, t, code, cur)
		return err
	})
	return a, err
}

// GetAccount returns an account of the tenant.
func (s *Service) GetAccount(ctx context.Context, t store.Tenant, accountID string) (Account, error) {
	row, err := s.db.Read().GetLedgerAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return Account{}, &AccountError{AccountID: accountID, Err: ErrAccountNotFound}
	}
	if err != nil {
		return Account{}, err
	}
	return fromRow(row), nil
}

func newAccount(now time.Time, t store.Tenant, spec AccountSpec) (Account, error) {
	if _, ok := currency.Lookup(spec.Currency); !ok && !IsTokenCurrency(spec.Currency) {
		return Account{}, fmt.Errorf("%w: unknown currency %q", ErrInvalidAccount, spec.Currency)
	}
	switch spec.Kind {
	case Internal:
		if spec.Hot {
			return Account{}, fmt.Errorf("%w: an INTERNAL account cannot be hot (its overdraft check needs a balance row)", ErrInvalidAccount)
		}
	case System:
	default:
		return Account{}, fmt.Errorf("%w: kind %q (want INTERNAL or SYSTEM)", ErrInvalidAccount, spec.Kind)
	}
	a := Account{ID: spec.ID, Tenant: t, Currency: spec.Currency, Kind: spec.Kind, Hot: spec.Hot, Code: spec.Code,
		Name: spec.Name, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if a.ID == "" {
		a.ID = id.New(AccountIDPrefix)
	}
	if a.Name == "" {
		a.Name = a.Code
		if a.Name == "" {
			a.Name = string(a.Kind)
		}
	}
	return a, nil
}

func newRow(a Account) store.NewLedgerAccount {
	return store.NewLedgerAccount{
		LedgerAccount: store.LedgerAccount{ID: a.ID, Tenant: a.Tenant, Currency: a.Currency, Kind: string(a.Kind),
			Hot: a.Hot, Code: a.Code, Name: a.Name, CreatedAt: a.CreatedAt},
		BalanceRow: !a.Hot,
		FloorZero:  a.Kind == Internal,
	}
}

func fromRow(r store.LedgerAccount) Account {
	return Account{ID: r.ID, Tenant: r.Tenant, Currency: r.Currency, Kind: AccountKind(r.Kind), Hot: r.Hot,
		Code: r.Code, Name: r.Name, CreatedAt: r.CreatedAt}
}

// Commit applies a batch in its own transaction (retried from the start on a
// PostgreSQL serialization failure or deadlock).
func (s *Service) Commit(ctx context.Context, t store.Tenant, batch []TransferSpec) ([]Transfer, error) {
	var out []Transfer
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		out, err = s.Apply(ctx, tx, t, batch)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Service) one(ctx context.Context, t store.Tenant, spec TransferSpec) (Transfer, error) {
	out, err := s.Commit(ctx, t, []TransferSpec{spec})
	if err != nil {
		var be *BatchError
		if errors.As(err, &be) {
			return Transfer{}, be.Err
		}
		return Transfer{}, err
	}
	return out[0], nil
}

// Transfer moves money now: one TRANSFER in its own transaction.
func (s *Service) Transfer(ctx context.Context, t store.Tenant, postings []PostingSpec, reference string) (Transfer, error) {
	return s.one(ctx, t, TransferSpec{Kind: KindTransfer, Postings: postings, Reference: reference})
}

// Hold reserves money: one HOLD in its own transaction.
func (s *Service) Hold(ctx context.Context, t store.Tenant, postings []PostingSpec, reference string) (Transfer, error) {
	return s.one(ctx, t, TransferSpec{Kind: KindHold, Postings: postings, Reference: reference})
}

// Post completes a hold: with no postings the whole hold, else the given
// amounts (each within the hold's), releasing the rest.
func (s *Service) Post(ctx context.Context, t store.Tenant, holdID string, postings []PostingSpec) (Transfer, error) {
	return s.one(ctx, t, TransferSpec{Kind: KindPost, HoldID: holdID, Postings: postings})
}

// Void releases a hold.
func (s *Service) Void(ctx context.Context, t store.Tenant, holdID string) (Transfer, error) {
	return s.one(ctx, t, TransferSpec{Kind: KindVoid, HoldID: holdID})
}

// Reverse undoes a transfer with a new one of negated postings; a transfer
// is reversed at most once.
func (s *Service) Reverse(ctx context.Context, t store.Tenant, transferID string) (Transfer, error) {
	return s.one(ctx, t, TransferSpec{Kind: KindReversal, ReversesID: transferID})
}

// GetTransfer returns a transfer with its postings.
func (s *Service) GetTransfer(ctx context.Context, t store.Tenant, transferID string) (Transfer, error) {
	q := s.db.Read()
	trs, err := q.LedgerTransfersByID(ctx, t, []string{transferID})
	if err != nil {
		return Transfer{}, err
	}
	tr, ok := trs[transferID]
	if !ok {
		return Transfer{}, fmt.Errorf("%w: %s", ErrTransferNotFound, transferID)
	}
	ps, err := q.LedgerPostingsOf(ctx, t, []string{transferID})
	if err != nil {
		return Transfer{}, err
	}
	out := transferFromRow(tr, ps[transferID])
	out.ResolvedBy, out.ReversedBy = tr.ResolvedBy, tr.ReversedBy
	return out, nil
}

func transferFromRow(tr store.LedgerTransfer, ps []store.LedgerPosting) Transfer {
	out := Transfer{ID: tr.ID, Tenant: tr.Tenant, Kind: Kind(tr.Kind), HoldID: tr.HoldID, ReversesID: tr.ReversesID,
		Reference: tr.Reference, CreatedAt: tr.CreatedAt}
	if tr.Metadata != nil {
		out.Metadata = json.RawMessage(tr.Metadata)
	}
	for _, p := range ps {
		out.Postings = append(out.Postings, Posting{ID: p.ID, TransferID: p.TransferID, AccountID: p.AccountID,
			Currency: p.Currency, Amount: p.Amount, Pending: p.Pending, CreatedAt: p.CreatedAt})
	}
	return out
}

// Balance reads an account's balance: its balance row, or for a hot account
// the sum of its postings.
func (s *Service) Balance(ctx context.Context, t store.Tenant, accountID string) (Balance, error) {
	return balance(ctx, s.db.Read(), t, accountID)
}

// BalanceTx reads an account's balance inside the caller's transaction.
func (s *Service) BalanceTx(ctx context.Context, tx *store.Tx, t store.Tenant, accountID string) (Balance, error) {
	return balance(ctx, tx.Q, t, accountID)
}

func balance(ctx context.Context, q store.Q, t store.Tenant, accountID string) (Balance, error) {
	a, err := q.GetLedgerAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return Balance{}, &AccountError{AccountID: accountID, Err: ErrAccountNotFound}
	}
	if err != nil {
		return Balance{}, err
	}
	var b store.LedgerBalance
	if a.Hot {
		b, err = q.DerivedLedgerBalance(ctx, t, accountID)
		if errors.Is(err, store.ErrSumOutOfRange) {
			return Balance{}, &AccountError{AccountID: accountID, Err: ErrAmountOverflow}
		}
	} else {
		b, err = q.GetLedgerBalance(ctx, t, accountID)
	}
	if err != nil {
		return Balance{}, err
	}
	return Balance{AccountID: accountID, Currency: a.Currency, Posted: b.Posted, PendingDebits: b.PendingDebits,
		PendingCredits: b.PendingCredits, Pending: b.PendingCredits - b.PendingDebits, Available: b.Posted - b.PendingDebits}, nil
}
