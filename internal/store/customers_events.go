package store

import "context"

// EventsForCustomer returns the events about one customer, oldest first.
func (q Q) EventsForCustomer(ctx context.Context, t Tenant, customerID string) ([]Event, error) {
	rows, err := q.query(ctx, `SELECT id, type, resource_id, envelope, created_at FROM events
		WHERE platform_id = ? AND env = ? AND resource_id = ? ORDER BY id`, t.PlatformID, t.Env, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var env string
		var created int64
		if err := rows.Scan(&e.ID, &e.Type, &e.ResourceID, &env, &created); err != nil {
			return nil, classify(err)
		}
		e.Tenant, e.Envelope, e.CreatedAt = t, []byte(env), fromMicros(created)
		out = append(out, e)
	}
	return out, classify(rows.Err())
}

// SetPlatformRegulated marks a platform as a regulated financial institution
// (or not). Regulated platforms skip the sandbox verification paperwork.
func (q Q) SetPlatformRegulated(ctx context.Context, platformID string, regulated bool) error {
	defer q.changed(settingKey{kind: settingPlatform, tenant: Tenant{PlatformID: platformID}})
	res, err := q.exec(ctx, `UPDATE platforms SET regulated = ? WHERE id = ?`, regulated, platformID)
	return affectedOne(res, err)
}
