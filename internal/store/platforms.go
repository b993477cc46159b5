package store

import (
	"context"
	"time"
)

// Platform is a tenant: every stored object belongs to one, and to one of its
// two environments.
type Platform struct {
	ID        string
	Name      string
	IsDefault bool
	Regulated bool
	CreatedAt time.Time
}

// InsertPlatform stores a new platform. A second default platform is a
// ErrConflict.
func (q Q) InsertPlatform(ctx context.Context, p Platform) error {
	defer q.changed(settingKey{kind: settingPlatform, tenant: Tenant{PlatformID: p.ID}})
	_, err := q.exec(ctx, `INSERT INTO platforms (id, name, is_default, regulated, created_at) VALUES (?, ?, ?, ?, ?)`,
		p.ID, p.Name, p.IsDefault, p.Regulated, toMicros(p.CreatedAt))
	return err
}

// DefaultPlatform returns the platform created on first start.
func (q Q) DefaultPlatform(ctx context.Context) (Platform, error) {
	return q.scanPlatform(q.queryRow(ctx, `SELECT id, name, is_default, regulated, created_at FROM platforms WHERE is_default`))
}

// GetPlatform returns one platform.
func (q Q) GetPlatform(ctx context.Context, id string) (Platform, error) {
	return q.scanPlatform(q.queryRow(ctx, `SELECT id, name, is_default, regulated, created_at FROM platforms WHERE id = ?`, id))
}

func (q Q) scanPlatform(row interface{ Scan(...any) error }) (Platform, error) {
	var p Platform
	var created int64
	if err := row.Scan(&p.ID, &p.Name, &p.IsDefault, &p.Regulated, &created); err != nil {
		return Platform{}, classify(err)
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

// ListPlatforms returns every platform, oldest first.
func (q Q) ListPlatforms(ctx context.Context) ([]Platform, error) {
	rows, err := q.query(ctx, `SELECT id, name, is_default, regulated, created_at FROM platforms ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Platform
	for rows.Next() {
		p, err := q.scanPlatform(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, classify(rows.Err())
}

// CountPlatforms returns how many platforms the installation serves.
func (q Q) CountPlatforms(ctx context.Context) (int, error) {
	var n int
	err := q.queryRow(ctx, `SELECT COUNT(*) FROM platforms`).Scan(&n)
	return n, classify(err)
}
