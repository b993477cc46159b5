package store

import (
	"context"
	"database/sql"
	"time"
)

// Invitation is a stored UMA invitation.
type Invitation struct {
	Code              string
	Tenant            Tenant
	InviterUma        string
	InviterCustomerID string
	InviteeUma        string
	FirstName         string
	AmountToSend      int64
	AmountCurrency    string
	URL               string
	Status            string
	ExpiresAt         time.Time
	ClaimedAt         *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

const invitationCols = `code, platform_id, env, inviter_uma, inviter_customer_id, invitee_uma, first_name, amount_to_send,
	amount_currency, url, status, expires_at, claimed_at, created_at, updated_at`

// InsertInvitation stores a new invitation; ErrConflict on a code in use.
func (q Q) InsertInvitation(ctx context.Context, i Invitation) error {
	_, err := q.exec(ctx, `INSERT INTO invitations (`+invitationCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.Code, i.Tenant.PlatformID, i.Tenant.Env, i.InviterUma, i.InviterCustomerID, i.InviteeUma, i.FirstName,
		i.AmountToSend, i.AmountCurrency, i.URL, i.Status, toMicros(i.ExpiresAt), nullMicros(i.ClaimedAt),
		toMicros(i.CreatedAt), toMicros(i.UpdatedAt))
	return classify(err)
}

// GetInvitation returns the invitation with code in env (any platform);
// lock takes a row lock (PostgreSQL) for a state change.
func (q Q) GetInvitation(ctx context.Context, env, code string, lock bool) (Invitation, error) {
	query := `SELECT ` + invitationCols + ` FROM invitations WHERE code = ? AND env = ?`
	if lock {
		query += q.forUpdate()
	}
	var i Invitation
	var expires, created, updated int64
	var claimed sql.NullInt64
	err := q.queryRow(ctx, query, code, env).Scan(&i.Code, &i.Tenant.PlatformID, &i.Tenant.Env, &i.InviterUma,
		&i.InviterCustomerID, &i.InviteeUma, &i.FirstName, &i.AmountToSend, &i.AmountCurrency, &i.URL, &i.Status,
		&expires, &claimed, &created, &updated)
	if err != nil {
		return Invitation{}, classify(err)
	}
	i.ExpiresAt, i.CreatedAt, i.UpdatedAt = fromMicros(expires), fromMicros(created), fromMicros(updated)
	if claimed.Valid {
		c := fromMicros(claimed.Int64)
		i.ClaimedAt = &c
	}
	return i, nil
}

// UpdateInvitation writes an invitation's state.
func (q Q) UpdateInvitation(ctx context.Context, i Invitation) error {
	res, err := q.exec(ctx, `UPDATE invitations SET invitee_uma = ?, status = ?, claimed_at = ?, updated_at = ? WHERE code = ?`,
		i.InviteeUma, i.Status, nullMicros(i.ClaimedAt), toMicros(i.UpdatedAt), i.Code)
	return affectedOne(res, err)
}
