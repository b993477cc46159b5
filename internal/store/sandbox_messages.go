package store

import (
	"context"
	"time"
)

// SandboxMessage is an email or SMS the sandbox recorded instead of sending.
type SandboxMessage struct {
	ID        string
	Tenant    Tenant
	Channel   string
	Recipient string
	Subject   string
	Body      string
	CreatedAt time.Time
}

// InsertSandboxMessage records a message.
func (q Q) InsertSandboxMessage(ctx context.Context, m SandboxMessage) error {
	_, err := q.exec(ctx, `INSERT INTO sandbox_messages (id, platform_id, env, channel, recipient, subject, body, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, m.ID, m.Tenant.PlatformID, m.Tenant.Env, m.Channel, m.Recipient, m.Subject, m.Body,
		toMicros(m.CreatedAt))
	return classify(err)
}

// SandboxMessages lists the messages recorded for a recipient, oldest first.
func (q Q) SandboxMessages(ctx context.Context, t Tenant, recipient string) ([]SandboxMessage, error) {
	rows, err := q.query(ctx, `SELECT id, channel, recipient, subject, body, created_at FROM sandbox_messages
		WHERE platform_id = ? AND env = ? AND recipient = ? ORDER BY created_at, id`, t.PlatformID, t.Env, recipient)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []SandboxMessage
	for rows.Next() {
		m := SandboxMessage{Tenant: t}
		var at int64
		if err := rows.Scan(&m.ID, &m.Channel, &m.Recipient, &m.Subject, &m.Body, &at); err != nil {
			return nil, err
		}
		m.CreatedAt = fromMicros(at)
		out = append(out, m)
	}
	return out, rows.Err()
}
