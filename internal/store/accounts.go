package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// InternalAccount is one row of internal_accounts. Instructions is the
// account's fundingPaymentInstructions as JSON, owned by package accounts.
// Balances live in the ledger, never here.
type InternalAccount struct {
	ID     string
	Tenant Tenant
	// CustomerID is empty for the platform's own accounts.
	CustomerID       string
	Type             string
	Currency         string
	Status           string
	LedgerAccountID  string
	FundingReference string
	Instructions     []byte
	// RuleDestinationID is the account a RULE_BASED account sweeps to.
	RuleDestinationID string
	// Suspense marks one of the platform's suspense accounts (CustomerID
	// is empty): stored under the owner key SuspenseOwner, so it is neither
	// the platform's provisioned account of its currency nor counted among
	// the platform's own accounts by InternalAccountsOfOwner.
	Suspense bool
	// PrivateEnabled is an EMBEDDED_WALLET's privacy setting.
	PrivateEnabled bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// PlatformCustomerID is the owner's platformCustomerId, read by
	// GetInternalAccounts only ("" for the platform's accounts and from
	// other reads).
	PlatformCustomerID string
}

// SuspenseOwner is the owner_key of the platform's suspense accounts (a
// customer's owner_key is its id, the platform's own accounts have ”).
const SuspenseOwner = "SUSPENSE"

const internalAccountCols = `id, platform_id, env, customer_id, account_type, currency, status, ledger_account_id,
	funding_reference, funding_instructions, rule_destination_account_id, private_enabled, created_at, updated_at`

// internalAccountSelect is what scanInternalAccount reads.
const internalAccountSelect = internalAccountCols + `, owner_key`

// liveAccountOwner keeps the accounts of deleted customers out of reads: they
// go with their customer.
const liveAccountOwner = ` AND (customer_id IS NULL OR EXISTS (SELECT 1 FROM customers c
	WHERE c.id = internal_accounts.customer_id AND c.deleted_at IS NULL))`

func scanInternalAccount(row interface{ Scan(...any) error }) (InternalAccount, error) {
	a, ok, err := scanInternalAccountOrNone(row)
	if err == nil && !ok {
		err = errors.New("store: an internal account row without an id")
	}
	return a, err
}

// scanInternalAccountOrNone is scanInternalAccount for the columns of an
// outer join's side: ok is false when the row holds no account (its id is
// NULL).
func scanInternalAccountOrNone(row interface{ Scan(...any) error }) (a InternalAccount, ok bool, err error) {
	var id, platformID, env, customer, typ, currency, status, ledgerID, ref, info, dest, owner sql.NullString
	var private sql.NullBool
	var created, updated sql.NullInt64
	if err := row.Scan(&id, &platformID, &env, &customer, &typ, &currency, &status,
		&ledgerID, &ref, &info, &dest, &private, &created, &updated, &owner); err != nil {
		return InternalAccount{}, false, classify(err)
	}
	if !id.Valid {
		return InternalAccount{}, false, nil
	}
	a = InternalAccount{ID: id.String, Tenant: Tenant{PlatformID: platformID.String, Env: env.String},
		CustomerID: customer.String, Type: typ.String, Currency: currency.String, Status: status.String,
		LedgerAccountID: ledgerID.String, FundingReference: ref.String, Instructions: []byte(info.String),
		RuleDestinationID: dest.String, PrivateEnabled: private.Bool}
	a.Suspense = customer.String == "" && owner.String == SuspenseOwner
	a.CreatedAt, a.UpdatedAt = fromMicros(created.Int64), fromMicros(updated.Int64)
	return a, true, nil
}

func iaNullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// InsertInternalAccount stores an account. For INTERNAL_FIAT and
// INTERNAL_CRYPTO accounts an existing account of the same owner, type and
// currency (or a taken funding reference) makes it do nothing: it reports
// whether it inserted, and never fails on that conflict, so it is safe inside
// a PostgreSQL transaction that must go on.
func (q Q) InsertInternalAccount(ctx context.Context, a InternalAccount) (bool, error) {
	owner := a.CustomerID
	if a.Suspense {
		owner = SuspenseOwner
	}
	res, err := q.exec(ctx, `INSERT INTO internal_accounts (`+internalAccountCols+`, owner_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		a.ID, a.Tenant.PlatformID, a.Tenant.Env, iaNullString(a.CustomerID), a.Type, a.Currency, a.Status,
		a.LedgerAccountID, a.FundingReference, string(a.Instructions), iaNullString(a.RuleDestinationID),
		a.PrivateEnabled, toMicros(a.CreatedAt), toMicros(a.UpdatedAt), owner)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// GetInternalAccount returns an account of the tenant whose owner is live.
func (q Q) GetInternalAccount(ctx context.Context, t Tenant, id string) (InternalAccount, error) {
	return scanInternalAccount(q.queryRow(ctx, `SELECT `+internalAccountSelect+` FROM internal_accounts
		WHERE platform_id = ? AND env = ? AND id = ?`+liveAccountOwner, t.PlatformID, t.Env, id))
}

// GetInternalAccounts returns those of ids that are internal accounts of
// the tenant with a live owner (GetInternalAccount for several, one query).
// Each answer carries its owner's platformCustomerId.
func (q Q) GetInternalAccounts(ctx context.Context, t Tenant, ids ...string) (map[string]InternalAccount, error) {
	return collectByID(ctx, q, ledgerDedupe(ids), func(in string) (string, []any) {
		return `SELECT ` + internalAccountSelect + `, COALESCE((SELECT c.platform_customer_id FROM customers c
			WHERE c.id = internal_accounts.customer_id), '') FROM internal_accounts
			WHERE platform_id = ? AND env = ? AND id IN (` + in + `)` + liveAccountOwner, []any{t.PlatformID, t.Env}
	}, scanOwnedInternalAccount, func(a InternalAccount) string { return a.ID })
}

// AccountOwner is a live customer who owns an internal account, with the
// agreements it accepted (as LiveCustomerWithAgreements reads them).
type AccountOwner struct {
	Customer Customer
	Agreed   []AgreedTerms
}

// InternalAccountsWithOwners is GetInternalAccounts, and the live customers
// who own the accounts it found with their agreements, keyed by customer
// id, in one query: a quote reads its accounts and its sender together.
func (q Q) InternalAccountsWithOwners(ctx context.Context, t Tenant, ids ...string) (map[string]InternalAccount, map[string]AccountOwner, error) {
	ids = ledgerDedupe(ids)
	if r, ok := q.readAheadFor(ctx, t, ids); ok {
		return r.accounts, r.owners, nil
	}
	got := newOwnedAccounts()
	err := q.eachInChunks(ctx, ids, func(in string) (string, []any) {
		return `SELECT ` + ownedAccountCols + ` FROM internal_accounts ia ` + ownedAccountJoins + `
			WHERE ia.platform_id = ? AND ia.env = ? AND ia.id IN (` + in + `) AND ` + liveOwnedAccount,
			[]any{t.PlatformID, t.Env}
	}, func(r *sql.Rows) error { return got.add(r) })
	if err != nil {
		return nil, nil, err
	}
	return got.accounts, got.owners, nil
}

// The parts of InternalAccountsWithOwners' statement that the credential's
// read-ahead (read_ahead.go) shares: the columns ownedAccounts.add reads,
// the owner's and its agreements' joins to internal_accounts ia, and the
// condition that keeps the accounts of deleted customers out.
var ownedAccountCols = internalAccountColsIA + `, ` + customerColsC + `, a.agreement_type, a.terms_version`

const (
	ownedAccountJoins = `LEFT JOIN customers c ON c.id = ia.customer_id AND c.platform_id = ia.platform_id AND c.env = ia.env
				AND c.deleted_at IS NULL
			LEFT JOIN customer_agreements a ON a.customer_id = c.id AND a.platform_id = c.platform_id AND a.env = c.env`
	liveOwnedAccount = `(ia.customer_id IS NULL OR c.id IS NOT NULL)`
)

// ownedAccounts collects InternalAccountsWithOwners' answer from its rows:
// one per account and agreement of its owner, in any order (addAgreed keeps
// each owner's agreements in type order).
type ownedAccounts struct {
	accounts map[string]InternalAccount
	owners   map[string]AccountOwner
}

func newOwnedAccounts() *ownedAccounts {
	return &ownedAccounts{accounts: map[string]InternalAccount{}, owners: map[string]AccountOwner{}}
}

// add reads ownedAccountCols from a row; a row without an account (an
// outer join's NULLs) adds nothing.
func (o *ownedAccounts) add(row interface{ Scan(...any) error }) error {
	var c Customer
	var owned bool
	var typ, version sql.NullString
	a, found, err := scanInternalAccountOrNone(withCustomerOrNone{row, &c, &owned, []any{&typ, &version}})
	if err != nil || !found {
		return err
	}
	if owned {
		a.PlatformCustomerID = c.PlatformCustomerID
		owner, seen := o.owners[c.ID]
		if !seen {
			owner = AccountOwner{Customer: c, Agreed: []AgreedTerms{}}
		}
		owner.Agreed = addAgreed(owner.Agreed, typ, version)
		o.owners[c.ID] = owner
	}
	o.accounts[a.ID] = a
	return nil
}

// internalAccountColsIA is internalAccountSelect qualified by the alias ia.
var internalAccountColsIA = qualifiedCols("ia", internalAccountSelect)

// withCustomerOrNone scans a row's leading columns into the caller's
// destinations, then customerCols (an outer join's: ok reports whether it
// found a customer), then extra.
type withCustomerOrNone struct {
	row   interface{ Scan(...any) error }
	c     *Customer
	ok    *bool
	extra []any
}

func (w withCustomerOrNone) Scan(dest ...any) error {
	var err error
	*w.c, *w.ok, err = scanCustomerOrNone(tailScan{row: w.row, head: dest, tail: w.extra})
	return err
}

// tailScan is a row whose Scan fills head, then its caller's
// destinations, then tail: a scan function reads its columns from the
// middle of a row that carries more.
type tailScan struct {
	row        interface{ Scan(...any) error }
	head, tail []any
}

func (s tailScan) Scan(dest ...any) error {
	all := make([]any, 0, len(s.head)+len(dest)+len(s.tail))
	return s.row.Scan(append(append(append(all, s.head...), dest...), s.tail...)...)
}

// scanOwnedInternalAccount reads internalAccountSelect and the owner's
// platformCustomerId.
func scanOwnedInternalAccount(row interface{ Scan(...any) error }) (InternalAccount, error) {
	var owner string
	a, err := scanInternalAccount(tailScan{row: row, tail: []any{&owner}})
	a.PlatformCustomerID = owner
	return a, err
}

// SuspenseAccount returns the tenant's suspense account in a currency.
func (q Q) SuspenseAccount(ctx context.Context, t Tenant, cur string) (InternalAccount, error) {
	return scanInternalAccount(q.queryRow(ctx, `SELECT `+internalAccountSelect+` FROM internal_accounts
		WHERE platform_id = ? AND env = ? AND owner_key = ? AND currency = ? AND customer_id IS NULL`,
		t.PlatformID, t.Env, SuspenseOwner, cur))
}

// SetOwnerAccountsStatus sets the status of every internal account of a
// customer (the delete closes them).
func (q Q) SetOwnerAccountsStatus(ctx context.Context, t Tenant, customerID, status string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE internal_accounts SET status = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND owner_key = ? AND customer_id IS NOT NULL`,
		status, toMicros(at), t.PlatformID, t.Env, customerID)
	return err
}

// InternalAccountFilter narrows ListInternalAccounts. Empty fields do not
// filter.
type InternalAccountFilter struct {
	// Platform lists the platform's own accounts; otherwise customers'.
	Platform   bool
	CustomerID string
	Currency   string
	Type       string
}

// ListInternalAccounts returns up to limit accounts of live owners after
// the id `after` (keyset, oldest first) and how many match in all.
func (q Q) ListInternalAccounts(ctx context.Context, t Tenant, f InternalAccountFilter, after string, limit int) ([]InternalAccount, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if f.Platform {
		w.add("customer_id IS NULL")
	} else {
		w.add("customer_id IS NOT NULL" + liveAccountOwner)
	}
	if f.CustomerID != "" {
		w.add("owner_key = ?", f.CustomerID)
	}
	if f.Currency != "" {
		w.add("currency = ?", f.Currency)
	}
	if f.Type != "" {
		w.add("account_type = ?", f.Type)
	}
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM internal_accounts`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+internalAccountSelect+` FROM internal_accounts`+w.sql()+` ORDER BY id LIMIT ?`,
		append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []InternalAccount
	for rows.Next() {
		a, err := scanInternalAccount(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, classify(rows.Err())
}

// InternalAccountsOfOwner returns every account of an owner (customerID, ""
// for the platform), live or not, oldest first.
func (q Q) InternalAccountsOfOwner(ctx context.Context, t Tenant, customerID string) ([]InternalAccount, error) {
	rows, err := q.query(ctx, `SELECT `+internalAccountSelect+` FROM internal_accounts
		WHERE platform_id = ? AND env = ? AND owner_key = ? ORDER BY id`, t.PlatformID, t.Env, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []InternalAccount
	for rows.Next() {
		a, err := scanInternalAccount(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, classify(rows.Err())
}

// MissingProvisioned is an owner (CustomerID, "" for the platform) that lacks
// its provisioned account of a currency.
type MissingProvisioned struct {
	CustomerID string
	Currency   string
}

// MissingProvisionedAccounts finds up to limit (owner, currency) pairs whose
// INTERNAL_FIAT or INTERNAL_CRYPTO account does not exist yet, among the
// given currencies (each with its account type) and owners: the platform
// when platform is set, else the live customers of the tenant (only
// customerID when it is not empty).
func (q Q) MissingProvisionedAccounts(ctx context.Context, t Tenant, typeOf map[string]string, platform bool, customerID string, limit int) ([]MissingProvisioned, error) {
	var out []MissingProvisioned
	for cur, typ := range typeOf {
		if len(out) >= limit {
			break
		}
		var rows *sql.Rows
		var err error
		if platform {
			rows, err = q.query(ctx, `SELECT '' WHERE NOT EXISTS (SELECT 1 FROM internal_accounts a
				WHERE a.platform_id = ? AND a.env = ? AND a.owner_key = '' AND a.account_type = ? AND a.currency = ?)`,
				t.PlatformID, t.Env, typ, cur)
		} else {
			w := where{}
			w.add("c.platform_id = ?", t.PlatformID)
			w.add("c.env = ?", t.Env)
			w.add("c.deleted_at IS NULL")
			if customerID != "" {
				w.add("c.id = ?", customerID)
			}
			w.add(`NOT EXISTS (SELECT 1 FROM internal_accounts a WHERE a.platform_id = c.platform_id AND a.env = c.env
				AND a.owner_key = c.id AND a.account_type = ? AND a.currency = ?)`, typ, cur)
			rows, err = q.query(ctx, `SELECT c.id FROM customers c`+w.sql()+` ORDER BY c.id LIMIT ?`,
				append(w.args, limit-len(out))...)
		}
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var owner string
			if err := rows.Scan(&owner); err != nil {
				rows.Close()
				return nil, classify(err)
			}
			out = append(out, MissingProvisioned{CustomerID: owner, Currency: cur})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, classify(err)
		}
	}
	return out, nil
}

// StatementReceipt is one row of statement_receipts.
type StatementReceipt struct {
	AccountID   string
	Tenant      Tenant
	Month       string
	FetchedAt   *time.Time
	ConfirmedAt *time.Time
}

// GetStatementReceipt returns the receipt row of an account and month.
func (q Q) GetStatementReceipt(ctx context.Context, t Tenant, accountID, month string) (StatementReceipt, error) {
	r := StatementReceipt{AccountID: accountID, Tenant: t, Month: month}
	var fetched, confirmed sql.NullInt64
	err := q.queryRow(ctx, `SELECT fetched_at, confirmed_at FROM statement_receipts
		WHERE platform_id = ? AND env = ? AND account_id = ? AND month = ?`, t.PlatformID, t.Env, accountID, month).
		Scan(&fetched, &confirmed)
	if err != nil {
		return StatementReceipt{}, classify(err)
	}
	r.FetchedAt, r.ConfirmedAt = timePtr(fetched), timePtr(confirmed)
	return r, nil
}

// MarkStatementFetched records the first fetch of an account's month; later
// calls keep the first time.
func (q Q) MarkStatementFetched(ctx context.Context, t Tenant, accountID, month string, at time.Time) error {
	return q.markStatement(ctx, t, accountID, month, "fetched_at", at)
}

// MarkStatementConfirmed records the first confirmation of an account's
// month; later calls keep the first time.
func (q Q) MarkStatementConfirmed(ctx context.Context, t Tenant, accountID, month string, at time.Time) error {
	return q.markStatement(ctx, t, accountID, month, "confirmed_at", at)
}

func (q Q) markStatement(ctx context.Context, t Tenant, accountID, month, col string, at time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO statement_receipts (account_id, platform_id, env, month, `+col+`)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (account_id, month) DO UPDATE
		SET `+col+` = COALESCE(statement_receipts.`+col+`, excluded.`+col+`)`,
		accountID, t.PlatformID, t.Env, month, toMicros(at))
	return err
}

// InternalAccountBalances reads the ledger balance rows of accounts of the
// tenant (internal accounts are never hot, so each has one). Accounts without
// a row are absent from the result.
func (q Q) InternalAccountBalances(ctx context.Context, t Tenant, accountIDs []string) (map[string]LedgerBalance, error) {
	return collectByID(ctx, q, ledgerDedupe(accountIDs), func(in string) (string, []any) {
		return `SELECT ` + ledgerBalanceCols + ` FROM ledger_balances WHERE platform_id = ? AND env = ?
			AND account_id IN (` + in + `)`, []any{t.PlatformID, t.Env}
	}, scanLedgerBalance, func(b LedgerBalance) string { return b.AccountID })
}
