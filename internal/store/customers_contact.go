package store

import (
	"context"
	"time"
)

// ContactCode is the outstanding one-time code of one contact channel (EMAIL
// or PHONE) of a customer. Only a keyed hash of the code is stored.
type ContactCode struct {
	CustomerID  string
	Channel     string
	Tenant      Tenant
	Destination string // the address or number the code was sent to
	Salt        string
	CodeHash    string
	Attempts    int
	ExpiresAt   time.Time
	Sends       int       // codes sent since WindowStart
	WindowStart time.Time // start of the send-rate window
	CreatedAt   time.Time
}

const contactCodeCols = `customer_id, channel, platform_id, env, destination, salt, code_hash, attempts, expires_at, sends, window_start, created_at`

// GetContactCode returns the outstanding code of a channel; lock takes a row
// lock (PostgreSQL) so concurrent confirmations count every attempt.
func (q Q) GetContactCode(ctx context.Context, t Tenant, customerID, channel string, lock bool) (ContactCode, error) {
	query := `SELECT ` + contactCodeCols + ` FROM customer_contact_codes
		WHERE platform_id = ? AND env = ? AND customer_id = ? AND channel = ?`
	if lock {
		query += q.forUpdate()
	}
	var c ContactCode
	var expires, window, created int64
	err := q.queryRow(ctx, query, t.PlatformID, t.Env, customerID, channel).Scan(&c.CustomerID, &c.Channel,
		&c.Tenant.PlatformID, &c.Tenant.Env, &c.Destination, &c.Salt, &c.CodeHash, &c.Attempts, &expires,
		&c.Sends, &window, &created)
	if err != nil {
		return ContactCode{}, classify(err)
	}
	c.ExpiresAt, c.WindowStart, c.CreatedAt = fromMicros(expires), fromMicros(window), fromMicros(created)
	return c, nil
}

// PutContactCode stores a channel's new code, replacing the previous one.
func (q Q) PutContactCode(ctx context.Context, c ContactCode) error {
	_, err := q.exec(ctx, `INSERT INTO customer_contact_codes (`+contactCodeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (customer_id, channel) DO UPDATE SET destination = excluded.destination, salt = excluded.salt,
		code_hash = excluded.code_hash, attempts = excluded.attempts, expires_at = excluded.expires_at,
		sends = excluded.sends, window_start = excluded.window_start, created_at = excluded.created_at`,
		c.CustomerID, c.Channel, c.Tenant.PlatformID, c.Tenant.Env, c.Destination, c.Salt, c.CodeHash, c.Attempts,
		toMicros(c.ExpiresAt), c.Sends, toMicros(c.WindowStart), toMicros(c.CreatedAt))
	return err
}

// SetContactCodeAttempts records how many wrong codes were tried.
func (q Q) SetContactCodeAttempts(ctx context.Context, t Tenant, customerID, channel string, attempts int) error {
	res, err := q.exec(ctx, `UPDATE customer_contact_codes SET attempts = ?
		WHERE platform_id = ? AND env = ? AND customer_id = ? AND channel = ?`,
		attempts, t.PlatformID, t.Env, customerID, channel)
	return affectedOne(res, err)
}

// DeleteContactCodes removes a customer's outstanding codes (all channels
// when channel is "").
func (q Q) DeleteContactCodes(ctx context.Context, t Tenant, customerID, channel string) error {
	query := `DELETE FROM customer_contact_codes WHERE platform_id = ? AND env = ? AND customer_id = ?`
	args := []any{t.PlatformID, t.Env, customerID}
	if channel != "" {
		query += ` AND channel = ?`
		args = append(args, channel)
	}
	_, err := q.exec(ctx, query, args...)
	return err
}
