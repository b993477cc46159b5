package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Statuses of a card network message.
const (
	CardMessagePending = "PENDING"
	CardMessageApplied = "APPLIED"
	CardMessageFailed  = "FAILED"
)

// CardMessage is one row of card_network_messages: a sandbox card network
// message waiting for, or done by, the card runner.
type CardMessage struct {
	ID     string
	Tenant Tenant
	CardID string
	// Seq orders a card's messages: they apply in this order.
	Seq  int64
	Kind string
	Body []byte
	// TransactionID is the card transaction the message creates (Creates)
	// or acts on.
	TransactionID  string
	Creates        bool
	Token          string
	Status         string
	FailureCode    string
	FailureMessage string
	Attempts       int
	LeaseUntil     *time.Time
	CreatedAt      time.Time
	AppliedAt      *time.Time
}

const cardMessageCols = `id, platform_id, env, card_id, seq, kind, body, transaction_id, creates, token, status,
	failure_code, failure_message, attempts, lease_until, created_at, applied_at`

func scanCardMessage(row interface{ Scan(...any) error }) (CardMessage, error) {
	var m CardMessage
	var body string
	var creates int
	var lease, applied sql.NullInt64
	var created int64
	err := row.Scan(&m.ID, &m.Tenant.PlatformID, &m.Tenant.Env, &m.CardID, &m.Seq, &m.Kind, &body, &m.TransactionID,
		&creates, &m.Token, &m.Status, &m.FailureCode, &m.FailureMessage, &m.Attempts, &lease, &created, &applied)
	if err != nil {
		return m, classify(err)
	}
	m.Body, m.Creates, m.CreatedAt = []byte(body), creates == 1, fromMicros(created)
	m.LeaseUntil, m.AppliedAt = timePtr(lease), timePtr(applied)
	return m, nil
}

// InsertCardMessage records a message at the end of its card's queue (Seq
// is set here). Call it with the card row locked, so a card's messages
// take their places in the order their transactions commit.
func (q Q) InsertCardMessage(ctx context.Context, m *CardMessage) error {
	if err := q.queryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM card_network_messages WHERE card_id = ?`,
		m.CardID).Scan(&m.Seq); err != nil {
		return classify(err)
	}
	creates := 0
	if m.Creates {
		creates = 1
	}
	_, err := q.exec(ctx, `INSERT INTO card_network_messages (`+cardMessageCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, m.Tenant.PlatformID, m.Tenant.Env, m.CardID,
		m.Seq, m.Kind, string(m.Body), m.TransactionID, creates, m.Token, m.Status, m.FailureCode, m.FailureMessage,
		m.Attempts, nullMicros(m.LeaseUntil), toMicros(m.CreatedAt), nullMicros(m.AppliedAt))
	return classify(err)
}

// GetCardMessage reads a message of the tenant's card; lock takes the row.
func (q Q) GetCardMessage(ctx context.Context, t Tenant, cardID, id string, lock bool) (CardMessage, error) {
	query := `SELECT ` + cardMessageCols + ` FROM card_network_messages WHERE id = ? AND platform_id = ? AND env = ? AND card_id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanCardMessage(q.queryRow(ctx, query, id, t.PlatformID, t.Env, cardID))
}

// FinishCardMessage writes a message's outcome: APPLIED, or FAILED with its
// code and message; the lease is dropped.
func (q Q) FinishCardMessage(ctx context.Context, m CardMessage) error {
	_, err := q.exec(ctx, `UPDATE card_network_messages SET status = ?, failure_code = ?, failure_message = ?,
		lease_until = NULL, applied_at = ? WHERE id = ?`, m.Status, m.FailureCode, m.FailureMessage,
		nullMicros(m.AppliedAt), m.ID)
	return classify(err)
}

// CardPendingMessages counts the card's messages not yet applied.
func (q Q) CardPendingMessages(ctx context.Context, t Tenant, cardID string) (int, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM card_network_messages WHERE platform_id = ? AND env = ? AND card_id = ?
		AND status = 'PENDING'`, t.PlatformID, t.Env, cardID).Scan(&n)
	return n, classify(err)
}

// CardMessageCreating returns the message of the card that creates the card
// transaction txID, if any.
func (q Q) CardMessageCreating(ctx context.Context, t Tenant, cardID, txID string) (CardMessage, error) {
	return scanCardMessage(q.queryRow(ctx, `SELECT `+cardMessageCols+` FROM card_network_messages
		WHERE platform_id = ? AND env = ? AND transaction_id = ? AND card_id = ? AND creates = 1`,
		t.PlatformID, t.Env, txID, cardID))
}

// ClaimDueCardMessages leases up to limit messages that may be applied now:
// the first PENDING message of each card (a card's later messages wait for
// it), not leased by another worker. Each claim takes a new lease (its
// LeaseUntil is the claim's token) and counts an attempt. A cheap read
// first keeps idle polls from taking the writer.
func (db *DB) ClaimDueCardMessages(ctx context.Context, lease time.Duration, limit int) ([]CardMessage, error) {
	var one int
	err := db.Read().queryRow(ctx, `SELECT 1 FROM card_network_messages WHERE status = 'PENDING'
		AND (lease_until IS NULL OR lease_until <= ?) LIMIT 1`, toMicros(db.now())).Scan(&one)
	if errors.Is(classify(err), ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err)
	}
	var out []CardMessage
	err = db.InTx(ctx, func(tx *Tx) error {
		out = nil
		now := tx.Now()
		query := `SELECT ` + cardMessageCols + ` FROM card_network_messages m WHERE status = 'PENDING'
			AND (lease_until IS NULL OR lease_until <= ?)
			AND NOT EXISTS (SELECT 1 FROM card_network_messages p WHERE p.card_id = m.card_id
				AND p.status = 'PENDING' AND p.seq < m.seq)
			ORDER BY created_at, id LIMIT ?`
		if tx.engine == Postgres {
			query += ` FOR UPDATE SKIP LOCKED`
		}
		due, err := tx.cardMessages(ctx, query, toMicros(now), limit)
		if err != nil {
			return err
		}
		until := now.Add(lease).UTC().Truncate(time.Microsecond)
		for _, m := range due {
			m.Attempts++
			m.LeaseUntil = &until
			if _, err := tx.exec(ctx, `UPDATE card_network_messages SET lease_until = ?, attempts = ? WHERE id = ?`,
				toMicros(until), m.Attempts, m.ID); err != nil {
				return classify(err)
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

func (q Q) cardMessages(ctx context.Context, query string, args ...any) ([]CardMessage, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []CardMessage
	for rows.Next() {
		m, err := scanCardMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, classify(rows.Err())
}

// PendingCardMessages counts the tenant's messages not yet applied.
func (q Q) PendingCardMessages(ctx context.Context, t Tenant) (int, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM card_network_messages WHERE platform_id = ? AND env = ?
		AND status = 'PENDING'`, t.PlatformID, t.Env).Scan(&n)
	return n, classify(err)
}
