package store

import (
	"context"
	"database/sql"
	"time"
)

// AgentCardAudit is one row of agent_card_audit: something an agent did
// with a card's data (a reveal URL handed out), with the agent as actor.
type AgentCardAudit struct {
	ID        string
	Tenant    Tenant
	CardID    string
	ActorType string
	ActorID   string
	Action    string
	ExpiresAt *time.Time
	CreatedAt time.Time
}

// InsertAgentCardAudit records an audit entry.
func (q Q) InsertAgentCardAudit(ctx context.Context, a AgentCardAudit) error {
	_, err := q.exec(ctx, `INSERT INTO agent_card_audit (id, platform_id, env, card_id, actor_type, actor_id, action,
		expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.Tenant.PlatformID, a.Tenant.Env, a.CardID,
		a.ActorType, a.ActorID, a.Action, nullMicros(a.ExpiresAt), toMicros(a.CreatedAt))
	return classify(err)
}

// AgentCardAudits lists a card's audit entries of the tenant, oldest first.
func (q Q) AgentCardAudits(ctx context.Context, t Tenant, cardID string) ([]AgentCardAudit, error) {
	rows, err := q.query(ctx, `SELECT id, card_id, actor_type, actor_id, action, expires_at, created_at
		FROM agent_card_audit WHERE platform_id = ? AND env = ? AND card_id = ? ORDER BY id`, t.PlatformID, t.Env, cardID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentCardAudit
	for rows.Next() {
		a := AgentCardAudit{Tenant: t}
		var expires sql.NullInt64
		var created int64
		if err := rows.Scan(&a.ID, &a.CardID, &a.ActorType, &a.ActorID, &a.Action, &expires, &created); err != nil {
			return nil, classify(err)
		}
		a.ExpiresAt, a.CreatedAt = timePtr(expires), fromMicros(created)
		out = append(out, a)
	}
	return out, classify(rows.Err())
}

// HasActiveAgentKey reports whether the agent holds an ACTIVE delegated key
// in the tenant (on any wallet).
func (q Q) HasActiveAgentKey(ctx context.Context, t Tenant, agentID string) (bool, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM delegated_keys WHERE platform_id = ? AND env = ? AND agent_id = ?
		AND status = 'ACTIVE'`, t.PlatformID, t.Env, agentID).Scan(&n)
	return n > 0, classify(err)
}

// CardsOfAgentWallet returns the agent's cards funded by an account, locked
// on PostgreSQL (an agent key on that wallet changed).
func (q Q) CardsOfAgentWallet(ctx context.Context, t Tenant, agentID, accountID string) ([]Card, error) {
	return q.cards(ctx, `SELECT `+cardCols+` FROM cards WHERE platform_id = ? AND env = ? AND agent_id = ?
		AND funding_source = ? ORDER BY id`+q.forUpdate(), t.PlatformID, t.Env, agentID, accountID)
}
