package store

import (
	"context"
	"database/sql"
	"time"
)

// Quote is one row of quotes (migration 0010). Document is package quotes'
// JSON; the other columns are what the service filters and locks on.
type Quote struct {
	ID            string
	Tenant        Tenant
	Status        string
	TransactionID string
	CustomerID    string
	Document      []byte
	USDEquivalent int64
	ExpiresAt     time.Time
	ExecutedAt    *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

const quoteCols = `id, platform_id, env, status, transaction_id, customer_id, document, usd_equivalent, expires_at,
	executed_at, created_at, updated_at`

func scanQuote(row interface{ Scan(...any) error }) (Quote, error) {
	var x Quote
	var doc string
	var executed sql.NullInt64
	var expires, created, updated int64
	if err := row.Scan(&x.ID, &x.Tenant.PlatformID, &x.Tenant.Env, &x.Status, &x.TransactionID, &x.CustomerID, &doc,
		&x.USDEquivalent, &expires, &executed, &created, &updated); err != nil {
		return Quote{}, classify(err)
	}
	x.Document = []byte(doc)
	x.ExpiresAt, x.CreatedAt, x.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	x.ExecutedAt = timePtr(executed)
	return x, nil
}

// InsertQuote stores a new quote.
func (q Q) InsertQuote(ctx context.Context, x Quote) error {
	st := quoteInsert(x)
	_, err := q.exec(ctx, st.sql, st.args...)
	return err
}

// InsertQuoteAtCommit is InsertQuote made with the transaction's last
// statement (outbox.go); quote reads through the transaction make it first.
func (q Q) InsertQuoteAtCommit(x Quote) error { return q.queueWrite(quoteInsert(x)) }

func quoteInsert(x Quote) statement {
	return statement{sql: `INSERT INTO quotes (` + quoteCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args: []any{
		x.ID, x.Tenant.PlatformID, x.Tenant.Env, x.Status, x.TransactionID, x.CustomerID, string(x.Document),
		x.USDEquivalent, toMicros(x.ExpiresAt), nullMicros(x.ExecutedAt), toMicros(x.CreatedAt), toMicros(x.UpdatedAt)}}
}

// GetQuote returns one quote of the tenant; lock takes a row lock on
// PostgreSQL until the end of the transaction.
func (q Q) GetQuote(ctx context.Context, t Tenant, id string, lock bool) (Quote, error) {
	query := `SELECT ` + quoteCols + ` FROM quotes WHERE platform_id = ? AND env = ? AND id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanQuote(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// UpdateQuote writes a quote's status, document, execution time and
// expiry (an SCA challenge moves it).
func (q Q) UpdateQuote(ctx context.Context, x Quote) error {
	res, err := q.exec(ctx, `UPDATE quotes SET status = ?, document = ?, executed_at = ?, expires_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ?`, x.Status, string(x.Document), nullMicros(x.ExecutedAt),
		toMicros(x.ExpiresAt), toMicros(x.UpdatedAt), x.Tenant.PlatformID, x.Tenant.Env, x.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// SetQuoteStatusByTransaction sets the status of the quote (if any) whose
// transaction is transactionID.
func (q Q) SetQuoteStatusByTransaction(ctx context.Context, t Tenant, transactionID, status string, at time.Time) error {
	_, err := q.exec(ctx, `UPDATE quotes SET status = ?, updated_at = ? WHERE platform_id = ? AND env = ?
		AND transaction_id = ?`, status, toMicros(at), t.PlatformID, t.Env, transactionID)
	return err
}

// DueQuotes returns up to limit PENDING or PENDING_AUTHORIZATION quotes (any
// tenant) whose expiresAt is not after now, oldest expiry first.
func (q Q) DueQuotes(ctx context.Context, now time.Time, limit int) ([]Quote, error) {
	// One branch per status, each served by its partial index (0010, 0044).
	rows, err := q.query(ctx, `SELECT * FROM (
		SELECT `+quoteCols+` FROM quotes WHERE status = 'PENDING' AND expires_at <= ?
		UNION ALL
		SELECT `+quoteCols+` FROM quotes WHERE status = 'PENDING_AUTHORIZATION' AND expires_at <= ?
		) due ORDER BY expires_at LIMIT ?`, toMicros(now), toMicros(now), limit)
	if err != nil {
		return nil, err
	}
	var out []Quote
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		x, err := scanQuote(r)
		out = append(out, x)
		return err
	})
	return out, err
}

// CountQuotes counts the tenant's quotes (tests prove refusals create none).
func (q Q) CountQuotes(ctx context.Context, t Tenant) (int, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM quotes WHERE platform_id = ? AND env = ?`, t.PlatformID, t.Env).Scan(&n)
	return n, classify(err)
}
