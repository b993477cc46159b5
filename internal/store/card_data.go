package store

import (
	"context"
	"time"
)

// CardPIN is one row of card_pins: a card's PIN verification value and
// wrong-entry state (package carddata computes and interprets them; the PIN
// itself is never stored). LastUnblockAt is zero when the PIN was never
// unblocked.
type CardPIN struct {
	CardID        string
	Tenant        Tenant
	PVV           string
	PVKI          int
	Status        string
	WrongTries    int
	LastUnblockAt time.Time
	SetAt         time.Time
	UpdatedAt     time.Time
}

const cardPINCols = `card_id, platform_id, env, pvv, pvki, status, wrong_tries, last_unblock_at, set_at, updated_at`

func scanCardPIN(row interface{ Scan(...any) error }) (CardPIN, error) {
	var p CardPIN
	var unblock, set, updated int64
	if err := row.Scan(&p.CardID, &p.Tenant.PlatformID, &p.Tenant.Env, &p.PVV, &p.PVKI, &p.Status, &p.WrongTries,
		&unblock, &set, &updated); err != nil {
		return CardPIN{}, classify(err)
	}
	if unblock != 0 {
		p.LastUnblockAt = fromMicros(unblock)
	}
	p.SetAt, p.UpdatedAt = fromMicros(set), fromMicros(updated)
	return p, nil
}

// GetCardPIN returns the PIN state of a card of the tenant, ErrNotFound when
// the card has no PIN (lock: row lock on PostgreSQL).
func (q Q) GetCardPIN(ctx context.Context, t Tenant, cardID string, lock bool) (CardPIN, error) {
	query := `SELECT ` + cardPINCols + ` FROM card_pins WHERE platform_id = ? AND env = ? AND card_id = ?`
	if lock {
		query += q.forUpdate()
	}
	return scanCardPIN(q.queryRow(ctx, query, t.PlatformID, t.Env, cardID))
}

// PutCardPIN stores a card's PIN state, replacing the row of the card.
func (q Q) PutCardPIN(ctx context.Context, p CardPIN) error {
	var unblock int64
	if !p.LastUnblockAt.IsZero() {
		unblock = toMicros(p.LastUnblockAt)
	}
	_, err := q.exec(ctx, `INSERT INTO card_pins (`+cardPINCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (card_id) DO UPDATE SET pvv = excluded.pvv, pvki = excluded.pvki, status = excluded.status,
		wrong_tries = excluded.wrong_tries, last_unblock_at = excluded.last_unblock_at, set_at = excluded.set_at,
		updated_at = excluded.updated_at
		WHERE card_pins.platform_id = excluded.platform_id AND card_pins.env = excluded.env`,
		p.CardID, p.Tenant.PlatformID, p.Tenant.Env, p.PVV, p.PVKI, p.Status, p.WrongTries, unblock,
		toMicros(p.SetAt), toMicros(p.UpdatedAt))
	return classify(err)
}

// InsertCardPINUnblock records an unblock of a card's PIN.
func (q Q) InsertCardPINUnblock(ctx context.Context, t Tenant, cardID string, at time.Time) error {
	_, err := q.exec(ctx, `INSERT INTO card_pin_unblocks (card_id, platform_id, env, unblocked_at) VALUES (?, ?, ?, ?)`,
		cardID, t.PlatformID, t.Env, toMicros(at))
	return classify(err)
}

// CardPINUnblocksSince returns the times a card's PIN was unblocked at or
// after since, oldest first.
func (q Q) CardPINUnblocksSince(ctx context.Context, t Tenant, cardID string, since time.Time) ([]time.Time, error) {
	rows, err := q.query(ctx, `SELECT unblocked_at FROM card_pin_unblocks
		WHERE platform_id = ? AND env = ? AND card_id = ? AND unblocked_at >= ? ORDER BY unblocked_at`,
		t.PlatformID, t.Env, cardID, toMicros(since))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at int64
		if err := rows.Scan(&at); err != nil {
			return nil, classify(err)
		}
		out = append(out, fromMicros(at))
	}
	return out, classify(rows.Err())
}

// BurnCardURL records the single use of a signed URL or token id (jti). It
// reports false when the id was used before. Ids whose signature expired
// before now are forgotten first: their signature refuses them anyway.
func (q Q) BurnCardURL(ctx context.Context, jti, kind, cardID string, expiresAt, now time.Time) (bool, error) {
	if _, err := q.exec(ctx, `DELETE FROM card_url_uses WHERE expires_at < ?`, toMicros(now)); err != nil {
		return false, classify(err)
	}
	res, err := q.exec(ctx, `INSERT INTO card_url_uses (jti, kind, card_id, expires_at, used_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (jti) DO NOTHING`, jti, kind, cardID, toMicros(expiresAt), toMicros(now))
	if err != nil {
		return false, classify(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
