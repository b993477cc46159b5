package store

import (
	"context"
	"database/sql"
	"time"
)

// ExternalAccount is one row of external_accounts. Info is the account's
// accountInfo as JSON, owned by package externalaccounts; the columns beside
// it are what queries filter on and the account's state.
type ExternalAccount struct {
	ID     string
	Tenant Tenant
	// CustomerID is empty for the platform's own accounts.
	CustomerID           string
	AccountType          string
	Currency             string
	Fingerprint          string
	PlatformAccountID    string
	OwnershipType        string
	SelfCustody          bool
	Status               string
	BankValidation       string
	BankValidationReason string
	Trusted              bool
	TrustChange          string
	TrustChallengeID     string
	TrustExpiresAt       *time.Time
	DefaultUmaDeposit    bool
	Info                 []byte
	DeletedAt            *time.Time
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

// liveOwner keeps accounts of deleted customers out of reads: they go with
// their customer.
const liveOwner = ` AND (customer_id IS NULL OR EXISTS (SELECT 1 FROM customers c
	WHERE c.id = external_accounts.customer_id AND c.deleted_at IS NULL))`

const externalAccountCols = `id, platform_id, env, customer_id, account_type, currency, fingerprint, platform_account_id,
	ownership_type, self_custody, status, bank_validation, bank_validation_reason, trusted, trust_change,
	trust_challenge_id, trust_expires_at, default_uma_deposit, account_info, deleted_at, created_at, updated_at`

func scanExternalAccount(row interface{ Scan(...any) error }) (ExternalAccount, error) {
	var a ExternalAccount
	var customer sql.NullString
	var info string
	var trustExp, deleted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&a.ID, &a.Tenant.PlatformID, &a.Tenant.Env, &customer, &a.AccountType, &a.Currency,
		&a.Fingerprint, &a.PlatformAccountID, &a.OwnershipType, &a.SelfCustody, &a.Status, &a.BankValidation,
		&a.BankValidationReason, &a.Trusted, &a.TrustChange, &a.TrustChallengeID, &trustExp, &a.DefaultUmaDeposit,
		&info, &deleted, &created, &updated); err != nil {
		return ExternalAccount{}, classify(err)
	}
	a.CustomerID = customer.String
	a.Info = []byte(info)
	a.TrustExpiresAt, a.DeletedAt = timePtr(trustExp), timePtr(deleted)
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, nil
}

func eaNullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// InsertExternalAccount stores a new account. A live account of the same
// owner with the same fingerprint is ErrConflict.
func (q Q) InsertExternalAccount(ctx context.Context, a ExternalAccount) error {
	_, err := q.exec(ctx, `INSERT INTO external_accounts (`+externalAccountCols+`, owner_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tenant.PlatformID, a.Tenant.Env, eaNullString(a.CustomerID), a.AccountType, a.Currency, a.Fingerprint,
		a.PlatformAccountID, a.OwnershipType, a.SelfCustody, a.Status, a.BankValidation, a.BankValidationReason,
		a.Trusted, a.TrustChange, a.TrustChallengeID, nullMicros(a.TrustExpiresAt), a.DefaultUmaDeposit, string(a.Info),
		nullMicros(a.DeletedAt), toMicros(a.CreatedAt), toMicros(a.UpdatedAt), a.CustomerID)
	return err
}

// GetExternalAccount returns a live account of the tenant (whose customer, if
// any, is live too); lock takes a row
// lock (PostgreSQL) for a read-modify-write inside a transaction.
func (q Q) GetExternalAccount(ctx context.Context, t Tenant, id string, lock bool) (ExternalAccount, error) {
	query := `SELECT ` + externalAccountCols + ` FROM external_accounts
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL` + liveOwner
	if lock {
		query += q.forUpdate()
	}
	return scanExternalAccount(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// ExternalAccountByFingerprint returns the live account of an owner
// (customerID, "" for the platform) with fingerprint.
func (q Q) ExternalAccountByFingerprint(ctx context.Context, t Tenant, customerID, fingerprint string) (ExternalAccount, error) {
	return scanExternalAccount(q.queryRow(ctx, `SELECT `+externalAccountCols+` FROM external_accounts
		WHERE platform_id = ? AND env = ? AND owner_key = ? AND fingerprint = ? AND deleted_at IS NULL`,
		t.PlatformID, t.Env, customerID, fingerprint))
}

// UpdateExternalAccount writes the mutable columns of a live account.
// Setting DeletedAt deletes it.
func (q Q) UpdateExternalAccount(ctx context.Context, a ExternalAccount) error {
	res, err := q.exec(ctx, `UPDATE external_accounts SET status = ?, bank_validation = ?, bank_validation_reason = ?,
		trusted = ?, trust_change = ?, trust_challenge_id = ?, trust_expires_at = ?, default_uma_deposit = ?,
		deleted_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`,
		a.Status, a.BankValidation, a.BankValidationReason, a.Trusted, a.TrustChange, a.TrustChallengeID,
		nullMicros(a.TrustExpiresAt), a.DefaultUmaDeposit, nullMicros(a.DeletedAt), toMicros(a.UpdatedAt),
		a.Tenant.PlatformID, a.Tenant.Env, a.ID)
	return affectedOne(res, err)
}

// ClearDefaultUmaDeposit unsets the default UMA deposit flag on every live
// account of a customer except keep.
func (q Q) ClearDefaultUmaDeposit(ctx context.Context, t Tenant, customerID, keep string, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE external_accounts SET default_uma_deposit = FALSE, updated_at = ?
		WHERE platform_id = ? AND env = ? AND customer_id = ? AND id <> ? AND default_uma_deposit AND deleted_at IS NULL`,
		toMicros(now), t.PlatformID, t.Env, customerID, keep)
	return err
}

// ExternalAccountFilter narrows ListExternalAccounts. Empty fields do not
// filter.
type ExternalAccountFilter struct {
	// Platform lists the platform's own accounts; otherwise customers'.
	Platform    bool
	CustomerID  string
	Currency    string
	AccountType string
	Status      string
}

// ListExternalAccounts returns up to limit live accounts after the id
// `after` (keyset, oldest first) and how many match the filter in all.
func (q Q) ListExternalAccounts(ctx context.Context, t Tenant, f ExternalAccountFilter, after string, limit int) ([]ExternalAccount, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("deleted_at IS NULL" + liveOwner)
	if f.Platform {
		w.add("customer_id IS NULL")
	} else {
		w.add("customer_id IS NOT NULL")
	}
	if f.CustomerID != "" {
		w.add("customer_id = ?", f.CustomerID)
	}
	if f.Currency != "" {
		w.add("currency = ?", f.Currency)
	}
	if f.AccountType != "" {
		w.add("account_type = ?", f.AccountType)
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM external_accounts`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+externalAccountCols+` FROM external_accounts`+w.sql()+` ORDER BY id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []ExternalAccount
	for rows.Next() {
		a, err := scanExternalAccount(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, classify(rows.Err())
}

// OwnershipChallenge is one row of external_account_challenges.
type OwnershipChallenge struct {
	ID         string
	AccountID  string
	Tenant     Tenant
	Method     string
	Message    string
	TokenHash  string
	State      string
	Outcome    string
	ApplyAfter *time.Time
	ExpiresAt  time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const challengeCols = `id, account_id, platform_id, env, method, message, token_hash, state, outcome, apply_after,
	expires_at, created_at, updated_at`

func scanChallenge(row interface{ Scan(...any) error }) (OwnershipChallenge, error) {
	var c OwnershipChallenge
	var token sql.NullString
	var apply sql.NullInt64
	var expires, created, updated int64
	if err := row.Scan(&c.ID, &c.AccountID, &c.Tenant.PlatformID, &c.Tenant.Env, &c.Method, &c.Message, &token,
		&c.State, &c.Outcome, &apply, &expires, &created, &updated); err != nil {
		return OwnershipChallenge{}, classify(err)
	}
	c.TokenHash, c.ApplyAfter = token.String, timePtr(apply)
	c.ExpiresAt, c.CreatedAt, c.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	return c, nil
}

// InsertOwnershipChallenge stores a new challenge.
func (q Q) InsertOwnershipChallenge(ctx context.Context, c OwnershipChallenge) error {
	_, err := q.exec(ctx, `INSERT INTO external_account_challenges (`+challengeCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.AccountID, c.Tenant.PlatformID, c.Tenant.Env, c.Method, c.Message, eaNullString(c.TokenHash), c.State,
		c.Outcome, nullMicros(c.ApplyAfter), toMicros(c.ExpiresAt), toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
	return err
}

// CurrentOwnershipChallenge returns an account's current challenge: the one
// OPEN, or RECORDED with an outcome waiting. ErrNotFound when none is.
func (q Q) CurrentOwnershipChallenge(ctx context.Context, t Tenant, accountID string, lock bool) (OwnershipChallenge, error) {
	query := `SELECT ` + challengeCols + ` FROM external_account_challenges
		WHERE platform_id = ? AND env = ? AND account_id = ? AND state IN ('OPEN', 'RECORDED')
		ORDER BY created_at DESC, id DESC LIMIT 1`
	if lock {
		query += q.forUpdate()
	}
	return scanChallenge(q.queryRow(ctx, query, t.PlatformID, t.Env, accountID))
}

// AbandonOwnershipChallenges moves an account's current challenges to
// ABANDONED.
func (q Q) AbandonOwnershipChallenges(ctx context.Context, t Tenant, accountID string, now time.Time) error {
	_, err := q.exec(ctx, `UPDATE external_account_challenges SET state = 'ABANDONED', updated_at = ?
		WHERE platform_id = ? AND env = ? AND account_id = ? AND state IN ('OPEN', 'RECORDED')`,
		toMicros(now), t.PlatformID, t.Env, accountID)
	return err
}

// UpdateOwnershipChallenge moves a challenge from state `from` to c's state,
// outcome and apply_after. ErrNotFound when it is no longer in `from` (another
// request or node got there first).
func (q Q) UpdateOwnershipChallenge(ctx context.Context, c OwnershipChallenge, from string) error {
	res, err := q.exec(ctx, `UPDATE external_account_challenges SET state = ?, outcome = ?, apply_after = ?, updated_at = ?
		WHERE id = ? AND state = ?`,
		c.State, c.Outcome, nullMicros(c.ApplyAfter), toMicros(c.UpdatedAt), c.ID, from)
	return affectedOne(res, err)
}

// OwnershipChallengeByToken finds a liveness challenge by the SHA-256 of its
// link token, in any tenant (the link is the credential).
func (q Q) OwnershipChallengeByToken(ctx context.Context, tokenHash string) (OwnershipChallenge, error) {
	return scanChallenge(q.queryRow(ctx, `SELECT `+challengeCols+` FROM external_account_challenges WHERE token_hash = ?`, tokenHash))
}

// GetOwnershipChallenge returns a challenge by id, in any tenant.
func (q Q) GetOwnershipChallenge(ctx context.Context, id string, lock bool) (OwnershipChallenge, error) {
	query := `SELECT ` + challengeCols + ` FROM external_account_challenges WHERE id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanChallenge(q.queryRow(ctx, query, id))
}

// DueLivenessOutcomes lists up to limit RECORDED challenges whose outcome is
// due at now, in every tenant, oldest first.
func (q Q) DueLivenessOutcomes(ctx context.Context, now time.Time, limit int) ([]OwnershipChallenge, error) {
	rows, err := q.query(ctx, `SELECT `+challengeCols+` FROM external_account_challenges
		WHERE state = 'RECORDED' AND apply_after <= ? ORDER BY apply_after, id LIMIT ?`, toMicros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OwnershipChallenge
	for rows.Next() {
		c, err := scanChallenge(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// ExternalAccountRowCounts counts the rows of the external-accounts tables,
// deleted rows included, across all tenants: tests use it to prove a refused
// request left nothing behind.
func (q Q) ExternalAccountRowCounts(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, table := range []string{"external_accounts", "external_account_challenges"} {
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			return nil, classify(err)
		}
		out[table] = n
	}
	return out, nil
}
