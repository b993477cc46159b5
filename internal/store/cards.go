package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Card is one row of cards. The card number is not here: InsertCard seals it
// and only CardPAN opens it.
type Card struct {
	ID               string
	Tenant           Tenant
	CustomerID       string
	PlatformCardID   string
	Status           string
	StatusReason     string
	Form             string
	Brand            string
	Currency         string
	FundingSource    string
	FundingBindingID string
	Last4            string
	ExpMonth         int
	ExpYear          int
	// Limits: nil is no limit.
	MaxSpendPerTransaction *int64
	MaxSpendPerDay         *int64
	MaxTransactionsPerDay  *int64
	AllowedMCCs            []string
	BlockedMCCs            []string
	ProcessorRef           string
	IssuerRef              string
	// ProvisionDueAt: while PROCESSING, when the issuer is next asked.
	ProvisionDueAt    *time.Time
	ProvisionAttempts int
	// AgentID is the agent that issued the card ('' for the platform's);
	// AgentKind its purchase kind (SINGLE_USE, MERCHANT_LOCKED) and
	// LockedMerchant the merchant a MERCHANT_LOCKED card keeps to.
	AgentID        string
	AgentKind      string
	LockedMerchant string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

const cardCols = `id, platform_id, env, customer_id, platform_card_id, status, status_reason, form, brand, currency,
	funding_source, funding_binding_id, last4, exp_month, exp_year, max_spend_per_transaction, max_spend_per_day,
	max_transactions_per_day, allowed_mccs, blocked_mccs, processor_ref, issuer_ref, provision_due_at,
	provision_attempts, agent_id, agent_kind, locked_merchant, created_at, updated_at`

func nullInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

func intPtr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func joinList(l []string) string { return strings.Join(l, ",") }

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

func scanCard(row interface{ Scan(...any) error }) (Card, error) {
	var c Card
	var perTxn, perDay, perDayCount, due sql.NullInt64
	var allowed, blocked string
	var created, updated int64
	if err := row.Scan(&c.ID, &c.Tenant.PlatformID, &c.Tenant.Env, &c.CustomerID, &c.PlatformCardID, &c.Status,
		&c.StatusReason, &c.Form, &c.Brand, &c.Currency, &c.FundingSource, &c.FundingBindingID, &c.Last4, &c.ExpMonth,
		&c.ExpYear, &perTxn, &perDay, &perDayCount, &allowed, &blocked, &c.ProcessorRef, &c.IssuerRef, &due,
		&c.ProvisionAttempts, &c.AgentID, &c.AgentKind, &c.LockedMerchant, &created, &updated); err != nil {
		return Card{}, classify(err)
	}
	c.MaxSpendPerTransaction, c.MaxSpendPerDay, c.MaxTransactionsPerDay = intPtr(perTxn), intPtr(perDay), intPtr(perDayCount)
	c.AllowedMCCs, c.BlockedMCCs = splitList(allowed), splitList(blocked)
	c.ProvisionDueAt = timePtr(due)
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

// InsertCard stores a new card with its card number, sealed under the key
// ring (associated data: the table and the card id). pan is never stored or
// returned in clear.
func (q Q) InsertCard(ctx context.Context, c Card, pan string) error {
	sealed, err := q.seal("cards", c.ID, pan)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, `INSERT INTO cards (`+cardCols+`, sealed_pan) VALUES
		(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Tenant.PlatformID, c.Tenant.Env, c.CustomerID, c.PlatformCardID, c.Status, c.StatusReason, c.Form,
		c.Brand, c.Currency, c.FundingSource, c.FundingBindingID, c.Last4, c.ExpMonth, c.ExpYear,
		nullInt(c.MaxSpendPerTransaction), nullInt(c.MaxSpendPerDay), nullInt(c.MaxTransactionsPerDay),
		joinList(c.AllowedMCCs), joinList(c.BlockedMCCs), c.ProcessorRef, c.IssuerRef, nullMicros(c.ProvisionDueAt),
		c.ProvisionAttempts, c.AgentID, c.AgentKind, c.LockedMerchant, toMicros(c.CreatedAt), toMicros(c.UpdatedAt), sealed)
	return classify(err)
}

// GetCard returns a card of the tenant (lock: row lock on PostgreSQL).
func (q Q) GetCard(ctx context.Context, t Tenant, id string, lock bool) (Card, error) {
	query := `SELECT ` + cardCols + ` FROM cards WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanCard(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// CardPAN opens the sealed card number of a card of the tenant.
func (q Q) CardPAN(ctx context.Context, t Tenant, id string) (string, error) {
	var sealed string
	if err := q.queryRow(ctx, `SELECT sealed_pan FROM cards WHERE platform_id = ? AND env = ? AND id = ?`,
		t.PlatformID, t.Env, id).Scan(&sealed); err != nil {
		return "", classify(err)
	}
	return q.open("cards", id, sealed)
}

// UpdateCard writes a card's mutable columns (everything but its identity,
// number and creation time).
func (q Q) UpdateCard(ctx context.Context, c Card) error {
	return affectedOne(q.exec(ctx, `UPDATE cards SET status = ?, status_reason = ?, funding_source = ?,
		funding_binding_id = ?, max_spend_per_transaction = ?, max_spend_per_day = ?, max_transactions_per_day = ?,
		allowed_mccs = ?, blocked_mccs = ?, processor_ref = ?, issuer_ref = ?, provision_due_at = ?,
		provision_attempts = ?, locked_merchant = ?, updated_at = ? WHERE platform_id = ? AND env = ? AND id = ?`,
		c.Status, c.StatusReason, c.FundingSource, c.FundingBindingID, nullInt(c.MaxSpendPerTransaction),
		nullInt(c.MaxSpendPerDay), nullInt(c.MaxTransactionsPerDay), joinList(c.AllowedMCCs), joinList(c.BlockedMCCs),
		c.ProcessorRef, c.IssuerRef, nullMicros(c.ProvisionDueAt), c.ProvisionAttempts, c.LockedMerchant, toMicros(c.UpdatedAt),
		c.Tenant.PlatformID, c.Tenant.Env, c.ID))
}

// CountLiveCards counts the tenant's cards that are not CLOSED.
func (q Q) CountLiveCards(ctx context.Context, t Tenant) (int, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM cards WHERE platform_id = ? AND env = ? AND status <> 'CLOSED'`,
		t.PlatformID, t.Env).Scan(&n)
	return n, classify(err)
}

// CardFilter filters ListCards; empty fields do not filter.
type CardFilter struct {
	CustomerID     string
	AccountID      string
	Status         string
	PlatformCardID string
	AgentID        string
}

// ListCards returns a page of the tenant's cards after the cursor id, oldest
// first, and the total over the filter.
func (q Q) ListCards(ctx context.Context, t Tenant, f CardFilter, after string, limit int) ([]Card, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	for col, v := range map[string]string{"customer_id": f.CustomerID, "funding_source": f.AccountID,
		"status": f.Status, "platform_card_id": f.PlatformCardID, "agent_id": f.AgentID} {
		if v != "" {
			w.add(col+" = ?", v)
		}
	}
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM cards`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	cards, err := q.cards(ctx, `SELECT `+cardCols+` FROM cards`+w.sql()+` ORDER BY id LIMIT ?`, append(w.args, limit)...)
	return cards, total, err
}

// CardsOfBinding returns the tenant's cards funded through a funding
// binding (locked on PostgreSQL).
func (q Q) CardsOfBinding(ctx context.Context, t Tenant, bindingID string) ([]Card, error) {
	return q.cards(ctx, `SELECT `+cardCols+` FROM cards WHERE platform_id = ? AND env = ? AND funding_binding_id = ?
		ORDER BY id`+q.forUpdate(), t.PlatformID, t.Env, bindingID)
}

// ClaimDueCardProvisioning claims up to limit PROCESSING cards whose issuer
// call is due, across tenants, by pushing their due time a lease ahead: the
// returned cards carry the new due time, which the worker presents when it
// applies the issuer's answer (a card claimed again after its lease has
// another). A cheap read first keeps idle polls from taking the writer.
func (db *DB) ClaimDueCardProvisioning(ctx context.Context, lease time.Duration, limit int) ([]Card, error) {
	var one int
	err := db.Read().queryRow(ctx, `SELECT 1 FROM cards WHERE status = 'PROCESSING' AND provision_due_at <= ? LIMIT 1`,
		toMicros(db.now())).Scan(&one)
	if errors.Is(classify(err), ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	var out []Card
	err = db.InTx(ctx, func(tx *Tx) error {
		out = nil
		now := tx.Now()
		query := `SELECT ` + cardCols + ` FROM cards WHERE status = 'PROCESSING' AND provision_due_at <= ?
			ORDER BY provision_due_at, id LIMIT ?`
		if tx.engine == Postgres {
			query += ` FOR UPDATE SKIP LOCKED`
		}
		due, err := tx.cards(ctx, query, toMicros(now), limit)
		if err != nil {
			return err
		}
		next := now.Add(lease).UTC().Truncate(time.Microsecond)
		for _, c := range due {
			c.ProvisionAttempts++
			c.ProvisionDueAt = &next
			if _, err := tx.exec(ctx, `UPDATE cards SET provision_due_at = ?, provision_attempts = ? WHERE id = ?`,
				toMicros(next), c.ProvisionAttempts, c.ID); err != nil {
				return classify(err)
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

func (q Q) cards(ctx context.Context, query string, args ...any) ([]Card, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Card{}
	for rows.Next() {
		c, err := scanCard(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, classify(rows.Err())
}

// OpenCardAuthorization is an authorization whose ledger hold is pending.
type OpenCardAuthorization struct {
	TransactionID string
	Tenant        Tenant
	CardID        string
	AccountID     string
	ExpiresAt     time.Time
	CreatedAt     time.Time
}

// InsertOpenCardAuthorization records an open authorization.
func (q Q) InsertOpenCardAuthorization(ctx context.Context, a OpenCardAuthorization) error {
	_, err := q.exec(ctx, `INSERT INTO card_open_authorizations (transaction_id, platform_id, env, card_id, account_id,
		expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, a.TransactionID, a.Tenant.PlatformID, a.Tenant.Env,
		a.CardID, a.AccountID, toMicros(a.ExpiresAt), toMicros(a.CreatedAt))
	return classify(err)
}

// DeleteOpenCardAuthorization forgets an authorization whose hold is
// resolved.
func (q Q) DeleteOpenCardAuthorization(ctx context.Context, t Tenant, transactionID string) error {
	_, err := q.exec(ctx, `DELETE FROM card_open_authorizations WHERE platform_id = ? AND env = ? AND transaction_id = ?`,
		t.PlatformID, t.Env, transactionID)
	return classify(err)
}

func (q Q) openAuths(ctx context.Context, query string, args ...any) ([]OpenCardAuthorization, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []OpenCardAuthorization
	for rows.Next() {
		var a OpenCardAuthorization
		var exp, created int64
		if err := rows.Scan(&a.TransactionID, &a.Tenant.PlatformID, &a.Tenant.Env, &a.CardID, &a.AccountID, &exp, &created); err != nil {
			return nil, classify(err)
		}
		a.ExpiresAt, a.CreatedAt = fromMicros(exp), fromMicros(created)
		out = append(out, a)
	}
	return out, classify(rows.Err())
}

const openAuthCols = `transaction_id, platform_id, env, card_id, account_id, expires_at, created_at`

// OpenCardAuthorizationsOfCard lists a card's open authorizations.
func (q Q) OpenCardAuthorizationsOfCard(ctx context.Context, t Tenant, cardID string) ([]OpenCardAuthorization, error) {
	return q.openAuths(ctx, `SELECT `+openAuthCols+` FROM card_open_authorizations
		WHERE platform_id = ? AND env = ? AND card_id = ? ORDER BY transaction_id`, t.PlatformID, t.Env, cardID)
}

// DueCardAuthorizations lists up to limit open authorizations, across
// tenants, that expired at or before now.
func (q Q) DueCardAuthorizations(ctx context.Context, now time.Time, limit int) ([]OpenCardAuthorization, error) {
	return q.openAuths(ctx, `SELECT `+openAuthCols+` FROM card_open_authorizations WHERE expires_at <= ?
		ORDER BY expires_at, transaction_id LIMIT ?`, toMicros(now), limit)
}

// HasOpenCardAuthorizations reports whether the account has an open card
// authorization created before the instant (its settlement can still
// change a statement window ending then).
func (q Q) HasOpenCardAuthorizations(ctx context.Context, t Tenant, accountID string, before time.Time) (bool, error) {
	var one int
	err := q.queryRow(ctx, `SELECT 1 FROM card_open_authorizations WHERE platform_id = ? AND env = ? AND account_id = ?
		AND created_at < ? LIMIT 1`, t.PlatformID, t.Env, accountID, toMicros(before)).Scan(&one)
	if errors.Is(classify(err), ErrNotFound) {
		return false, nil
	}
	return err == nil, classify(err)
}

// CardSpend is one row of card_spend.
type CardSpend struct {
	ID        string
	Tenant    Tenant
	CardID    string
	Day       string // YYYY-MM-DD, UTC
	Amount    int64
	Counted   bool
	CreatedAt time.Time
}

// InsertCardSpend records spend against a card's daily limits.
func (q Q) InsertCardSpend(ctx context.Context, s CardSpend) error {
	counted := 0
	if s.Counted {
		counted = 1
	}
	_, err := q.exec(ctx, `INSERT INTO card_spend (id, platform_id, env, card_id, day, amount, counted, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, s.Tenant.PlatformID, s.Tenant.Env, s.CardID, s.Day, s.Amount, counted,
		toMicros(s.CreatedAt))
	return classify(err)
}

// CardDaySpend sums a card's spend and counts its authorizations on a day.
func (q Q) CardDaySpend(ctx context.Context, t Tenant, cardID, day string) (amount, count int64, err error) {
	err = q.queryRow(ctx, `SELECT COALESCE(SUM(amount), 0), COALESCE(SUM(counted), 0) FROM card_spend
		WHERE platform_id = ? AND env = ? AND card_id = ? AND day = ?`, t.PlatformID, t.Env, cardID, day).Scan(&amount, &count)
	return amount, count, classify(err)
}

// HadCardActivity reports whether the account had a card transaction that
// moved or held money (not DECLINED) created before the instant.
func (q Q) HadCardActivity(ctx context.Context, t Tenant, accountID string, before time.Time) (bool, error) {
	var one int
	err := q.queryRow(ctx, `SELECT 1 FROM transactions WHERE platform_id = ? AND env = ? AND account_id = ?
		AND transaction_type = 'CARD' AND status <> 'DECLINED' AND created_at < ? LIMIT 1`,
		t.PlatformID, t.Env, accountID, toMicros(before)).Scan(&one)
	if errors.Is(classify(err), ErrNotFound) {
		return false, nil
	}
	return err == nil, classify(err)
}
