// Package accounts holds the internal accounts of the platform and its
// customers: the balances the service keeps for them, each the API face of
// one INTERNAL ledger account (which never goes negative). It provisions
// accounts, creates rule-based accounts, stands in for settled deposits in
// the sandbox, and serves statements. It knows nothing about HTTP.
//
// Provisioning. The platform and every customer have one INTERNAL_FIAT or
// INTERNAL_CRYPTO account per currency the platform supports (its
// configuration's supportedCurrencies). A customer's accounts are created in
// the transaction that creates the customer (ProvisionTx, the customers
// service's OnCreate hook). The platform's accounts, and customers' accounts
// in currencies added to the configuration later, are created when they are
// first needed: before a list of internal accounts is read and before a
// rule-based account picks its default destination (Ensure). Creation is an
// insert under a unique (owner, type, currency) key that does nothing when the
// account exists, so any number of nodes may ensure at once. Accounts in a
// currency later removed from the configuration stay: they may hold money.
package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Service implements the internal account rules.
type Service struct {
	DB     *store.DB
	Ledger *ledger.Service
	Log    *slog.Logger
	// SettlementDelay is how long after a statement window ends its card
	// settlement closes, per environment (see BalanceChanges). Defaults:
	// DefaultSandboxSettlementDelay and DefaultProductionSettlementDelay.
	SandboxSettlementDelay, ProductionSettlementDelay time.Duration
	// NewWalletTx gives a newly provisioned EMBEDDED_WALLET account its
	// signing key inside the creating transaction (package wallets). While
	// it is nil no wallet is provisioned: a wallet without a key could never
	// be used.
	NewWalletTx func(ctx context.Context, tx *store.Tx, account store.InternalAccount) error
	// CardSettlement (package cards) tells whether an account had card
	// activity before end (then the environment's card settlement delay
	// applies to a statement window ending then) and whether authorizations
	// made before end are still open (their settlement can still change
	// it). Without it no account has card activity.
	CardSettlement func(ctx context.Context, q store.Q, t store.Tenant, accountID string, end time.Time) (activity, open bool, err error)
}

// Default settlement delays. Production waits a day, the time card
// clearing takes; the sandbox, whose card settlement is simulated, only as
// long as a database transaction that stamped a balance change before the
// window ended could still be committing.
const (
	DefaultSandboxSettlementDelay    = 5 * time.Second
	DefaultProductionSettlementDelay = 24 * time.Hour
)

// New returns a service over db.
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{DB: db, Ledger: NewLedger(db), Log: log,
		SandboxSettlementDelay: DefaultSandboxSettlementDelay, ProductionSettlementDelay: DefaultProductionSettlementDelay}
}

func accountNotFound(accountID string) error {
	return apierr.NotFound("ACCOUNT_NOT_FOUND", "Internal account "+accountID)
}

// typeFor is the provisioned account type of a currency.
func typeFor(cur string) string {
	if c, ok := currency.Lookup(cur); ok && c.Crypto {
		return TypeCrypto
	}
	return TypeFiat
}

// SupportedCurrencies reads the codes of the tenant's supportedCurrencies
// through q (a transaction's querier keeps the read consistent with it).
// Only the codes are read from the configuration document, which package
// platformconfig owns.
func SupportedCurrencies(ctx context.Context, q store.Q, t store.Tenant) ([]string, error) {
	row, err := q.GetPlatformConfig(ctx, t, false)
	if err != nil {
		return nil, fmt.Errorf("accounts: configuration of %s/%s: %w", t.PlatformID, t.Env, err)
	}
	var doc struct {
		SupportedCurrencies []struct {
			CurrencyCode string `json:"currencyCode"`
		} `json:"supportedCurrencies"`
	}
	if err := json.Unmarshal(row.Document, &doc); err != nil {
		return nil, fmt.Errorf("accounts: configuration document: %w", err)
	}
	var out []string
	for _, c := range doc.SupportedCurrencies {
		if _, ok := currency.Lookup(c.CurrencyCode); ok && !slices.Contains(out, c.CurrencyCode) {
			out = append(out, c.CurrencyCode)
		}
	}
	return out, nil
}

// newRow builds a new account of owner (a customer id, "" for the platform).
func newRow(t store.Tenant, owner, typ, cur, destination string, now time.Time) (store.InternalAccount, error) {
	accountID := id.New(id.InternalAccount)
	ref := FundingReference(accountID)
	instructions := []PaymentInstructions{}
	if t.Env == store.EnvSandbox {
		instructions = sandboxInstructions(accountID, cur, ref, owner == "")
	}
	b, err := json.Marshal(instructions)
	if err != nil {
		return store.InternalAccount{}, err
	}
	return store.InternalAccount{ID: accountID, Tenant: t, CustomerID: owner, Type: typ, Currency: cur,
		Status: StatusActive, LedgerAccountID: accountID, FundingReference: ref, Instructions: b,
		RuleDestinationID: destination, CreatedAt: now, UpdatedAt: now}, nil
}

// createTx stores an account and its ledger account, and reports whether it
// did: a provisioned account that already exists is left alone.
func (s *Service) createTx(ctx context.Context, tx *store.Tx, row store.InternalAccount) (bool, error) {
	inserted, err := tx.InsertInternalAccount(ctx, row)
	if err != nil || !inserted {
		return false, err
	}
	owner := row.CustomerID
	if owner == "" {
		owner = "platform"
	}
	_, err = s.Ledger.CreateAccountTx(ctx, tx, row.Tenant, ledger.AccountSpec{ID: row.LedgerAccountID,
		Currency: row.Currency, Kind: ledger.Internal, Name: row.Type + " " + row.Currency + " of " + owner})
	return err == nil, err
}

// ProvisionTx creates a new customer's accounts, one per supported
// currency, inside the transaction that creates the customer.
func (s *Service) ProvisionTx(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string) error {
	curs, err := SupportedCurrencies(ctx, tx.Q, t)
	if err != nil {
		return err
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	for _, cur := range curs {
		row, err := newRow(t, customerID, typeFor(cur), cur, "", now)
		if err != nil {
			return err
		}
		if _, err := s.createTx(ctx, tx, row); err != nil {
			return err
		}
	}
	return s.provisionWalletTx(ctx, tx, t, customerID)
}

// ensureBatch bounds the accounts one ensuring transaction creates.
const ensureBatch = 200

// Ensure creates the provisioned accounts that are missing: the platform's
// when platform is set, else those of the tenant's live customers (only
// customerID's when it is not empty).
func (s *Service) Ensure(ctx context.Context, t store.Tenant, platform bool, customerID string) error {
	if !platform {
		if err := s.ensureWallets(ctx, t, customerID); err != nil {
			return err
		}
	}
	curs, err := SupportedCurrencies(ctx, s.DB.Read(), t)
	if err != nil {
		return err
	}
	typeOf := make(map[string]string, len(curs))
	for _, c := range curs {
		typeOf[c] = typeFor(c)
	}
	for {
		missing, err := s.DB.Read().MissingProvisionedAccounts(ctx, t, typeOf, platform, customerID, ensureBatch)
		if err != nil || len(missing) == 0 {
			return err
		}
		created := 0
		err = s.DB.InTx(ctx, func(tx *store.Tx) error {
			created = 0
			now := tx.Now().UTC().Truncate(time.Microsecond)
			for _, m := range missing {
				row, err := newRow(t, m.CustomerID, typeOf[m.Currency], m.Currency, "", now)
				if err != nil {
					return err
				}
				ok, err := s.createTx(ctx, tx, row)
				if err != nil {
					return err
				}
				if ok {
					created++
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if created == 0 {
			return nil // others created them meanwhile
		}
	}
}

// balances reads the ledger balances of rows.
func balances(ctx context.Context, q store.Q, t store.Tenant, rows []store.InternalAccount) (map[string]store.LedgerBalance, error) {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.LedgerAccountID
	}
	return q.InternalAccountBalances(ctx, t, ids)
}

// render builds the API account from its row and ledger balance.
func render(row store.InternalAccount, b store.LedgerBalance) (InternalAccount, error) {
	out := InternalAccount{
		ID: row.ID, CustomerID: row.CustomerID, Type: row.Type, Status: row.Status,
		Balance:      transactions.Amount(b.Posted-b.PendingDebits, row.Currency),
		TotalBalance: transactions.Amount(b.Posted+b.PendingCredits, row.Currency),
		Suspense:     row.Suspense, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	if err := json.Unmarshal(row.Instructions, &out.FundingPaymentInstructions); err != nil {
		return InternalAccount{}, fmt.Errorf("accounts: stored instructions of %s: %w", row.ID, err)
	}
	if out.FundingPaymentInstructions == nil {
		out.FundingPaymentInstructions = []PaymentInstructions{}
	}
	if row.Type == TypeRuleBased {
		out.RoutingRule = &RoutingRule{DestinationAccountID: row.RuleDestinationID}
	}
	if row.Type == TypeEmbeddedWallet {
		private := row.PrivateEnabled
		out.PrivateEnabled = &private
	}
	if CardPrograms != nil && row.CustomerID != "" {
		if c, ok := CardPrograms(row.Type, row.Currency); ok {
			out.CardCapabilities = c
		}
	}
	return out, nil
}

func renderAll(ctx context.Context, q store.Q, t store.Tenant, rows []store.InternalAccount) ([]InternalAccount, error) {
	bals, err := balances(ctx, q, t, rows)
	if err != nil {
		return nil, err
	}
	return page.Render(rows, func(r store.InternalAccount) (InternalAccount, error) {
		return render(r, bals[r.LedgerAccountID])
	})
}

// renderOne renders one account reading its balance through q.
func renderOne(ctx context.Context, q store.Q, t store.Tenant, row store.InternalAccount) (InternalAccount, error) {
	out, err := renderAll(ctx, q, t, []store.InternalAccount{row})
	if err != nil {
		return InternalAccount{}, err
	}
	return out[0], nil
}

// List returns one page of accounts, oldest first, after ensuring the
// provisioned accounts of the owners listed (R-IACCT-16).
func (s *Service) List(ctx context.Context, t store.Tenant, f store.InternalAccountFilter, after string, limit int) ([]InternalAccount, int, error) {
	if err := s.Ensure(ctx, t, f.Platform, f.CustomerID); err != nil {
		return nil, 0, err
	}
	q := s.DB.Read()
	rows, total, err := q.ListInternalAccounts(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out, err := renderAll(ctx, q, t, rows)
	return out, total, err
}

// Get returns an account of the tenant (accounts of deleted customers are
// gone with them).
func (s *Service) Get(ctx context.Context, t store.Tenant, accountID string) (InternalAccount, error) {
	q := s.DB.Read()
	row, err := q.GetInternalAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return InternalAccount{}, accountNotFound(accountID)
	}
	if err != nil {
		return InternalAccount{}, err
	}
	return renderOne(ctx, q, t, row)
}

// notReceiving refuses a deposit into an account that is not ACTIVE or is
// a suspense account (only money for deleted customers arrives there).
func notReceiving(a store.InternalAccount) error {
	if a.Suspense {
		return apierr.Conflict("Internal account " + a.ID + " is a suspense account: deposits cannot be made into it")
	}
	return apierr.Conflict(fmt.Sprintf("Internal account %s is %s and cannot receive money", a.ID, a.Status))
}

// destinationError is a field error on the routing rule's destination.
func destinationError(format string, args ...any) error {
	var f apierr.Fields
	f.Add("routingRule.destinationAccountId", apierr.Enum, format, args...)
	return f.Err()
}

// CreateRuleBased creates a RULE_BASED account for a customer or the
// platform (R-IACCT-03..07). Its routing rule sweeps every deposit, as it
// settles, to the destination: an ACTIVE USD account of the same owner that
// is not itself rule-based, by default the owner's USD INTERNAL_FIAT account.
// The same owner, so that receipts through a rule-based account appear on
// the owner's statement (R-STMT-12); USD to USD, so the sweep needs no quote.
func (s *Service) CreateRuleBased(ctx context.Context, t store.Tenant, req CreateRequest) (InternalAccount, error) {
	if err := req.Validate(); err != nil {
		return InternalAccount{}, err
	}
	owner := ""
	if req.CustomerID != nil {
		owner = *req.CustomerID
	}
	var out InternalAccount
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		if owner != "" {
			// Locked: a concurrent delete (which locks the row too, then
			// closes the customer's accounts) runs wholly before or after.
			if _, err := tx.GetCustomer(ctx, t, owner, true); errors.Is(err, store.ErrNotFound) {
				return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+owner)
			} else if err != nil {
				return err
			}
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		dest, err := s.destination(ctx, tx, t, owner, req.RoutingRule, now)
		if err != nil {
			return err
		}
		row, err := newRow(t, owner, TypeRuleBased, RuleBasedCurrency, dest.ID, now)
		if err != nil {
			return err
		}
		if ok, err := s.createTx(ctx, tx, row); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("accounts: funding reference %s of %s is taken", row.FundingReference, row.ID)
		}
		if out, err = render(row, store.LedgerBalance{}); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		return InternalAccount{}, err
	}
	return out, nil
}

// destination resolves a rule-based account's destination.
func (s *Service) destination(ctx context.Context, tx *store.Tx, t store.Tenant, owner string, in *RoutingRuleInput, now time.Time) (store.InternalAccount, error) {
	ownerName := "the platform"
	if owner != "" {
		ownerName = "customer " + owner
	}
	if in != nil && in.DestinationAccountID != nil {
		dest, err := tx.GetInternalAccount(ctx, t, *in.DestinationAccountID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return dest, destinationError("is not an internal account of this environment")
		case err != nil:
			return dest, err
		case dest.CustomerID != owner:
			return dest, destinationError("must belong to %s, the owner of the rule-based account", ownerName)
		case dest.Type == TypeRuleBased:
			return dest, destinationError("must not be a rule-based account")
		case dest.Suspense:
			return dest, destinationError("must not be a suspense account")
		case dest.Currency != RuleBasedCurrency:
			return dest, destinationError("must be a USD account (it holds %s)", dest.Currency)
		case dest.Status != StatusActive:
			return dest, destinationError("must be ACTIVE (it is %s)", dest.Status)
		}
		return dest, nil
	}
	// The owner's USD account, provisioned now if USD is supported and it
	// does not exist yet.
	curs, err := SupportedCurrencies(ctx, tx.Q, t)
	if err != nil {
		return store.InternalAccount{}, err
	}
	if slices.Contains(curs, RuleBasedCurrency) {
		row, err := newRow(t, owner, TypeFiat, RuleBasedCurrency, "", now)
		if err != nil {
			return store.InternalAccount{}, err
		}
		if _, err := s.createTx(ctx, tx, row); err != nil {
			return store.InternalAccount{}, err
		}
	}
	rows, err := tx.InternalAccountsOfOwner(ctx, t, owner)
	if err != nil {
		return store.InternalAccount{}, err
	}
	for _, r := range rows {
		if r.Type == TypeFiat && r.Currency == RuleBasedCurrency && r.Status == StatusActive {
			return r, nil
		}
	}
	var f apierr.Fields
	f.Add("routingRule.destinationAccountId", apierr.Required,
		"is required: %s has no active USD account to sweep to (USD is not among the platform's supported currencies)", ownerName)
	return store.InternalAccount{}, f.Err()
}

// Fund stands in for a deposit that settled into an account (sandbox only;
// R-SBX-01, R-SBX-02): money comes from the outside world (the ledger's
// WORLD account) and an INCOMING transaction, COMPLETED and settled, reports
// it with an INCOMING_PAYMENT.COMPLETED event. Into a RULE_BASED account, the
// routing rule then sweeps the deposit to its destination in the same
// database transaction: a second ledger transfer and a second INCOMING
// transaction, into the destination, carrying ruleBasedAccountId
// (R-IACCT-07). It returns the funded account as it is afterwards.
func (s *Service) Fund(ctx context.Context, t store.Tenant, accountID string, req FundRequest) (InternalAccount, error) {
	if err := req.Validate(); err != nil {
		return InternalAccount{}, err
	}
	amount := *req.Amount
	var out InternalAccount
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		acct, err := tx.GetInternalAccount(ctx, t, accountID)
		if errors.Is(err, store.ErrNotFound) {
			return accountNotFound(accountID)
		}
		if err != nil {
			return err
		}
		if req.Currency != nil && *req.Currency != acct.Currency {
			var f apierr.Fields
			f.Add("currency", apierr.Enum, "must be the account's currency, %s", acct.Currency)
			return f.Err()
		}
		if acct.Status != StatusActive || acct.Suspense {
			return notReceiving(acct)
		}
		cur := acct.Currency
		reference := acct.FundingReference
		if req.Reference != nil {
			reference = *req.Reference
		}
		world, err := s.Ledger.SystemAccountTx(ctx, tx, t, ledger.CodeWorld, cur)
		if err != nil {
			return err
		}
		depositID := id.New(id.Transaction)
		batch := []ledger.TransferSpec{{Reference: depositID, Postings: []ledger.PostingSpec{
			{AccountID: world.ID, Currency: cur, Amount: -amount},
			{AccountID: acct.LedgerAccountID, Currency: cur, Amount: amount},
		}}}
		var dest store.InternalAccount
		var sweepID string
		if acct.Type == TypeRuleBased {
			if dest, err = tx.GetInternalAccount(ctx, t, acct.RuleDestinationID); err != nil {
				return fmt.Errorf("accounts: destination %s of rule-based account %s: %w", acct.RuleDestinationID, acct.ID, err)
			}
			if dest.Status != StatusActive {
				return apierr.Conflict(fmt.Sprintf("The destination %s of rule-based account %s is %s and cannot receive money",
					dest.ID, acct.ID, dest.Status))
			}
			sweepID = id.New(id.Transaction)
			batch = append(batch, ledger.TransferSpec{Reference: sweepID, Postings: []ledger.PostingSpec{
				{AccountID: acct.LedgerAccountID, Currency: cur, Amount: -amount},
				{AccountID: dest.LedgerAccountID, Currency: cur, Amount: amount},
			}})
		}
		transfers, err := s.Ledger.Apply(ctx, tx, t, batch)
		if err != nil {
			return ClosedError(err)
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		received := amount
		if _, err := transactions.Record(ctx, tx, t, transactions.New{
			ID: depositID, Type: transactions.TypeIncoming, Status: transactions.StatusCompleted,
			Direction: transactions.Credit, CustomerID: acct.CustomerID, AccountID: acct.ID,
			Source: transactions.Source{SourceType: transactions.SideRealtimeFunding, Currency: cur,
				CustomerID: acct.CustomerID, AccountHolderName: "Sandbox depositor", BankName: "Sandbox",
				RemittanceInformation: reference},
			Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: acct.ID, Currency: cur},
			SentAmount:  amount, SentCurrency: cur, ReceivedAmount: &received, ReceivedCurrency: cur,
			Reference: reference, Description: "Sandbox deposit", LedgerTransferID: transfers[0].ID, SettledAt: &now,
		}); err != nil {
			return err
		}
		if sweepID != "" {
			if _, err := transactions.Record(ctx, tx, t, transactions.New{
				ID: sweepID, Type: transactions.TypeIncoming, Status: transactions.StatusCompleted,
				Direction: transactions.Credit, CustomerID: dest.CustomerID, AccountID: dest.ID,
				Source:      transactions.Source{SourceType: transactions.SideAccount, AccountID: acct.ID, Currency: cur},
				Destination: transactions.Destination{DestinationType: transactions.SideAccount, AccountID: dest.ID, Currency: cur},
				SentAmount:  amount, SentCurrency: cur, ReceivedAmount: &received, ReceivedCurrency: cur,
				RuleBasedAccountID: acct.ID, Reference: reference, Description: "Rule-based account sweep",
				LedgerTransferID: transfers[1].ID, SettledAt: &now,
			}); err != nil {
				return err
			}
		}
		if out, err = renderOne(ctx, tx.Q, t, acct); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		return InternalAccount{}, err
	}
	return out, nil
}
