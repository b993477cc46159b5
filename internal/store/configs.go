package store

import (
	"context"
	"time"
)

// PlatformConfig is a tenant's configuration, kept as one JSON document that
// the platformconfig service owns.
type PlatformConfig struct {
	ID        string
	Tenant    Tenant
	Document  []byte
	CreatedAt time.Time
	UpdatedAt time.Time
}

// GetPlatformConfig returns the tenant's configuration; lock takes a row lock
// (PostgreSQL) for a read-modify-write inside a transaction.
func (q Q) GetPlatformConfig(ctx context.Context, t Tenant, lock bool) (PlatformConfig, error) {
	query := `SELECT id, document, created_at, updated_at FROM platform_configs WHERE platform_id = ? AND env = ?`
	if lock {
		query += q.forUpdate()
	}
	var c PlatformConfig
	var doc string
	var created, updated int64
	if err := q.queryRow(ctx, query, t.PlatformID, t.Env).Scan(&c.ID, &doc, &created, &updated); err != nil {
		return PlatformConfig{}, classify(err)
	}
	c.Tenant, c.Document = t, []byte(doc)
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return c, nil
}

// InsertPlatformConfig stores a tenant's first configuration.
func (q Q) InsertPlatformConfig(ctx context.Context, c PlatformConfig) error {
	defer q.changed(settingKey{kind: settingConfig, tenant: c.Tenant})
	_, err := q.exec(ctx, `INSERT INTO platform_configs (platform_id, env, id, document, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`, c.Tenant.PlatformID, c.Tenant.Env, c.ID, string(c.Document),
		toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
	return err
}

// UpdatePlatformConfig replaces the tenant's configuration document.
func (q Q) UpdatePlatformConfig(ctx context.Context, c PlatformConfig) error {
	defer q.changed(settingKey{kind: settingConfig, tenant: c.Tenant})
	res, err := q.exec(ctx, `UPDATE platform_configs SET document = ?, updated_at = ? WHERE platform_id = ? AND env = ?`,
		string(c.Document), toMicros(c.UpdatedAt), c.Tenant.PlatformID, c.Tenant.Env)
	return affectedOne(res, err)
}
