package store

import (
	"context"
	"database/sql"
	"time"
)

// StablecoinProviderAccount is one row of stablecoin_provider_accounts.
// SealedSecret is opaque here (package stablecoins seals it).
type StablecoinProviderAccount struct {
	ID                  string
	Tenant              Tenant
	Provider            string
	ProviderAccountID   string
	ProviderEnvironment string
	APIClientID         string
	SealedSecret        string
	Status              string
	LastVerifiedAt      *time.Time
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

const stablecoinProviderAccountCols = `id, platform_id, env, provider, provider_account_id, provider_environment,
	api_client_id, sealed_secret, status, last_verified_at, created_at, updated_at`

func scanStablecoinProviderAccount(row interface{ Scan(...any) error }) (StablecoinProviderAccount, error) {
	var a StablecoinProviderAccount
	var verified sql.NullInt64
	var created, updated int64
	if err := row.Scan(&a.ID, &a.Tenant.PlatformID, &a.Tenant.Env, &a.Provider, &a.ProviderAccountID,
		&a.ProviderEnvironment, &a.APIClientID, &a.SealedSecret, &a.Status, &verified, &created, &updated); err != nil {
		return StablecoinProviderAccount{}, classify(err)
	}
	a.LastVerifiedAt, a.CreatedAt, a.UpdatedAt = timePtr(verified), fromMicros(created), fromMicros(updated)
	return a, nil
}

// InsertStablecoinProviderAccount stores a provider account link.
func (q Q) InsertStablecoinProviderAccount(ctx context.Context, a StablecoinProviderAccount) error {
	_, err := q.exec(ctx, `INSERT INTO stablecoin_provider_accounts (`+stablecoinProviderAccountCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tenant.PlatformID, a.Tenant.Env, a.Provider, a.ProviderAccountID, a.ProviderEnvironment, a.APIClientID,
		a.SealedSecret, a.Status, nullMicros(a.LastVerifiedAt), toMicros(a.CreatedAt), toMicros(a.UpdatedAt))
	return classify(err)
}

// GetStablecoinProviderAccount returns a link of the tenant (lock: row lock
// on PostgreSQL).
func (q Q) GetStablecoinProviderAccount(ctx context.Context, t Tenant, id string, lock bool) (StablecoinProviderAccount, error) {
	query := `SELECT ` + stablecoinProviderAccountCols + ` FROM stablecoin_provider_accounts
		WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanStablecoinProviderAccount(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// SetStablecoinProviderAccountStatus changes a link's status.
func (q Q) SetStablecoinProviderAccountStatus(ctx context.Context, t Tenant, id, status string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE stablecoin_provider_accounts SET status = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`, status, toMicros(at), t.PlatformID, t.Env, id)
	return classify(err)
}

// ListStablecoinProviderAccounts returns a page of the tenant's links after
// the id after (oldest first) with the total; empty filters do not filter.
func (q Q) ListStablecoinProviderAccounts(ctx context.Context, t Tenant, provider, status, after string, limit int) ([]StablecoinProviderAccount, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if provider != "" {
		w.add("provider = ?", provider)
	}
	if status != "" {
		w.add("status = ?", status)
	}
	return listRows(ctx, q, "stablecoin_provider_accounts", stablecoinProviderAccountCols, w, after, limit, false,
		scanStablecoinProviderAccount)
}

// listRows counts the rows of w, then returns up to limit of them after the
// id after, in id order (desc: newest first).
func listRows[T any](ctx context.Context, q Q, table, cols string, w where, after string, limit int, desc bool,
	scan func(interface{ Scan(...any) error }) (T, error)) ([]T, int, error) {
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM `+table+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	order := " ORDER BY id"
	if after != "" {
		if desc {
			w.add("id < ?", after)
		} else {
			w.add("id > ?", after)
		}
	}
	if desc {
		order += " DESC"
	}
	rows, err := q.query(ctx, `SELECT `+cols+` FROM `+table+w.sql()+order+` LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		x, err := scan(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, x)
	}
	return out, total, classify(rows.Err())
}

// Stablecoin is one row of stablecoins.
type Stablecoin struct {
	ID                      string
	Tenant                  Tenant
	ProviderAccountID       string
	Provider                string
	ProviderEnvironment     string
	ProviderTokenIdentifier string
	Network                 string
	NetworkTokenIdentifier  string
	Name                    string
	Symbol                  string
	BaseCurrency            string
	Decimals                int
	IssuanceStatus          string
	GridOperationsStatus    string
	CreatedAt               time.Time
	UpdatedAt               time.Time
}

const stablecoinCols = `id, platform_id, env, provider_account_id, provider, provider_environment,
	provider_token_identifier, network, network_token_identifier, name, symbol, base_currency, decimals,
	issuance_status, grid_operations_status, created_at, updated_at`

func scanStablecoin(row interface{ Scan(...any) error }) (Stablecoin, error) {
	var s Stablecoin
	var created, updated int64
	if err := row.Scan(&s.ID, &s.Tenant.PlatformID, &s.Tenant.Env, &s.ProviderAccountID, &s.Provider,
		&s.ProviderEnvironment, &s.ProviderTokenIdentifier, &s.Network, &s.NetworkTokenIdentifier, &s.Name, &s.Symbol,
		&s.BaseCurrency, &s.Decimals, &s.IssuanceStatus, &s.GridOperationsStatus, &created, &updated); err != nil {
		return Stablecoin{}, classify(err)
	}
	s.CreatedAt, s.UpdatedAt = fromMicros(created), fromMicros(updated)
	return s, nil
}

// InsertStablecoin stores a stablecoin (ErrConflict on a taken symbol or
// token identifier).
func (q Q) InsertStablecoin(ctx context.Context, s Stablecoin) error {
	_, err := q.exec(ctx, `INSERT INTO stablecoins (`+stablecoinCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.Tenant.PlatformID, s.Tenant.Env, s.ProviderAccountID, s.Provider, s.ProviderEnvironment,
		s.ProviderTokenIdentifier, s.Network, s.NetworkTokenIdentifier, s.Name, s.Symbol, s.BaseCurrency, s.Decimals,
		s.IssuanceStatus, s.GridOperationsStatus, toMicros(s.CreatedAt), toMicros(s.UpdatedAt))
	return classify(err)
}

// GetStablecoin returns a stablecoin of the tenant.
func (q Q) GetStablecoin(ctx context.Context, t Tenant, id string, lock bool) (Stablecoin, error) {
	query := `SELECT ` + stablecoinCols + ` FROM stablecoins WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanStablecoin(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// StablecoinTaken reports whether the tenant has a stablecoin with symbol,
// and one with the token identifier on network.
func (q Q) StablecoinTaken(ctx context.Context, t Tenant, symbol, network, tokenID string) (symbolTaken, tokenTaken bool, err error) {
	var a, b int
	err = q.queryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM stablecoins WHERE platform_id = ? AND env = ? AND symbol = ?),
		(SELECT COUNT(*) FROM stablecoins WHERE platform_id = ? AND env = ? AND network = ? AND network_token_identifier = ?)`,
		t.PlatformID, t.Env, symbol, t.PlatformID, t.Env, network, tokenID).Scan(&a, &b)
	return a > 0, b > 0, classify(err)
}

// SetStablecoinGridStatus changes a stablecoin's gridOperationsStatus.
func (q Q) SetStablecoinGridStatus(ctx context.Context, t Tenant, id, status string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE stablecoins SET grid_operations_status = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`, status, toMicros(at), t.PlatformID, t.Env, id)
	return classify(err)
}

// StablecoinFilter narrows ListStablecoins; empty fields do not filter.
type StablecoinFilter struct{ IssuanceStatus, GridOperationsStatus, Provider string }

// ListStablecoins returns a page of the tenant's stablecoins, oldest first.
func (q Q) ListStablecoins(ctx context.Context, t Tenant, f StablecoinFilter, after string, limit int) ([]Stablecoin, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if f.IssuanceStatus != "" {
		w.add("issuance_status = ?", f.IssuanceStatus)
	}
	if f.GridOperationsStatus != "" {
		w.add("grid_operations_status = ?", f.GridOperationsStatus)
	}
	if f.Provider != "" {
		w.add("provider = ?", f.Provider)
	}
	return listRows(ctx, q, "stablecoins", stablecoinCols, w, after, limit, false, scanStablecoin)
}

// StablecoinLink is one row of stablecoin_links.
type StablecoinLink struct {
	ProviderAccountID string
	ExternalAccountID string
	Tenant            Tenant
	ProviderAddressID string
	CreatedAt         time.Time
}

// InsertStablecoinLink records an external account's link with a provider
// account.
func (q Q) InsertStablecoinLink(ctx context.Context, l StablecoinLink) error {
	_, err := q.exec(ctx, `INSERT INTO stablecoin_links (provider_account_id, external_account_id, platform_id, env,
		provider_address_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`, l.ProviderAccountID, l.ExternalAccountID,
		l.Tenant.PlatformID, l.Tenant.Env, l.ProviderAddressID, toMicros(l.CreatedAt))
	return classify(err)
}

// StablecoinLinksOf returns the links of an external account, oldest first.
func (q Q) StablecoinLinksOf(ctx context.Context, t Tenant, externalAccountID string) ([]StablecoinLink, error) {
	rows, err := q.query(ctx, `SELECT provider_account_id, external_account_id, platform_id, env, provider_address_id,
		created_at FROM stablecoin_links WHERE platform_id = ? AND env = ? AND external_account_id = ? ORDER BY created_at`,
		t.PlatformID, t.Env, externalAccountID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StablecoinLink
	for rows.Next() {
		var l StablecoinLink
		var created int64
		if err := rows.Scan(&l.ProviderAccountID, &l.ExternalAccountID, &l.Tenant.PlatformID, &l.Tenant.Env,
			&l.ProviderAddressID, &created); err != nil {
			return nil, classify(err)
		}
		l.CreatedAt = fromMicros(created)
		out = append(out, l)
	}
	return out, classify(rows.Err())
}

// StablecoinOperation is one row of stablecoin_operations. Source,
// Destination and FundingInstructions are JSON (FundingInstructions empty
// when there are none).
type StablecoinOperation struct {
	ID                  string
	Tenant              Tenant
	StablecoinID        string
	OperationType       string
	Status              string
	Amount              int64
	FiatAmount          int64
	ProviderAccountID   string
	ProviderTransferID  string
	ProviderStatus      string
	Source              []byte
	Destination         []byte
	FundingInstructions []byte
	Description         string
	FailureReason       string
	ExpiresAt           *time.Time
	DueAt               *time.Time
	Attempts            int
	LastError           string
	FiatTransferID      string
	TokenTransferID     string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

const stablecoinOperationCols = `id, platform_id, env, stablecoin_id, operation_type, status, amount, fiat_amount,
	provider_account_id, provider_transfer_id, provider_status, source, destination, funding_instructions,
	description, failure_reason, expires_at, due_at, attempts, last_error, fiat_transfer_id, token_transfer_id,
	created_at, updated_at`

func scanStablecoinOperation(row interface{ Scan(...any) error }) (StablecoinOperation, error) {
	var o StablecoinOperation
	var src, dst, fi string
	var expires, due sql.NullInt64
	var created, updated int64
	if err := row.Scan(&o.ID, &o.Tenant.PlatformID, &o.Tenant.Env, &o.StablecoinID, &o.OperationType, &o.Status,
		&o.Amount, &o.FiatAmount, &o.ProviderAccountID, &o.ProviderTransferID, &o.ProviderStatus, &src, &dst, &fi,
		&o.Description, &o.FailureReason, &expires, &due, &o.Attempts, &o.LastError, &o.FiatTransferID,
		&o.TokenTransferID, &created, &updated); err != nil {
		return StablecoinOperation{}, classify(err)
	}
	o.Source, o.Destination, o.FundingInstructions = []byte(src), []byte(dst), []byte(fi)
	o.ExpiresAt, o.DueAt = timePtr(expires), timePtr(due)
	o.CreatedAt, o.UpdatedAt = fromMicros(created), fromMicros(updated)
	return o, nil
}

// InsertStablecoinOperation stores an operation.
func (q Q) InsertStablecoinOperation(ctx context.Context, o StablecoinOperation) error {
	_, err := q.exec(ctx, `INSERT INTO stablecoin_operations (`+stablecoinOperationCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Tenant.PlatformID, o.Tenant.Env, o.StablecoinID, o.OperationType, o.Status, o.Amount, o.FiatAmount,
		o.ProviderAccountID, o.ProviderTransferID, o.ProviderStatus, string(o.Source), string(o.Destination),
		string(o.FundingInstructions), o.Description, o.FailureReason, nullMicros(o.ExpiresAt), nullMicros(o.DueAt),
		o.Attempts, o.LastError, o.FiatTransferID, o.TokenTransferID, toMicros(o.CreatedAt), toMicros(o.UpdatedAt))
	return classify(err)
}

// UpdateStablecoinOperation writes an operation's mutable fields.
func (q Q) UpdateStablecoinOperation(ctx context.Context, o StablecoinOperation) error {
	_, err := q.exec(ctx, `UPDATE stablecoin_operations SET status = ?, provider_transfer_id = ?, provider_status = ?,
		funding_instructions = ?, failure_reason = ?, expires_at = ?, due_at = ?, attempts = ?, last_error = ?,
		fiat_transfer_id = ?, token_transfer_id = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`,
		o.Status, o.ProviderTransferID, o.ProviderStatus, string(o.FundingInstructions), o.FailureReason,
		nullMicros(o.ExpiresAt), nullMicros(o.DueAt), o.Attempts, o.LastError, o.FiatTransferID, o.TokenTransferID,
		toMicros(o.UpdatedAt), o.Tenant.PlatformID, o.Tenant.Env, o.ID)
	return classify(err)
}

// DelayStablecoinOperation records a failed step and when to try again.
func (q Q) DelayStablecoinOperation(ctx context.Context, t Tenant, id, lastError string, due time.Time) error {
	_, err := q.exec(ctx, `UPDATE stablecoin_operations SET attempts = attempts + 1, last_error = ?, due_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND due_at IS NOT NULL`,
		lastError, toMicros(due), t.PlatformID, t.Env, id)
	return classify(err)
}

// GetStablecoinOperation returns an operation of the tenant.
func (q Q) GetStablecoinOperation(ctx context.Context, t Tenant, id string, lock bool) (StablecoinOperation, error) {
	query := `SELECT ` + stablecoinOperationCols + ` FROM stablecoin_operations WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanStablecoinOperation(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// ListStablecoinOperations returns a page of a stablecoin's operations,
// newest first (operationType empty: both).
func (q Q) ListStablecoinOperations(ctx context.Context, t Tenant, stablecoinID, operationType, after string, limit int) ([]StablecoinOperation, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("stablecoin_id = ?", stablecoinID)
	if operationType != "" {
		w.add("operation_type = ?", operationType)
	}
	return listRows(ctx, q, "stablecoin_operations", stablecoinOperationCols, w, after, limit, true, scanStablecoinOperation)
}

// DueStablecoinOperation names an operation whose next step is due.
type DueStablecoinOperation struct {
	Tenant Tenant
	ID     string
}

// DueStablecoinOperations lists up to limit operations of any tenant whose
// next step is due at now, earliest first.
func (q Q) DueStablecoinOperations(ctx context.Context, now time.Time, limit int) ([]DueStablecoinOperation, error) {
	rows, err := q.query(ctx, `SELECT platform_id, env, id FROM stablecoin_operations
		WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, id LIMIT ?`, toMicros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DueStablecoinOperation
	for rows.Next() {
		var d DueStablecoinOperation
		if err := rows.Scan(&d.Tenant.PlatformID, &d.Tenant.Env, &d.ID); err != nil {
			return nil, classify(err)
		}
		out = append(out, d)
	}
	return out, classify(rows.Err())
}
