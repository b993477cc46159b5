package store

import (
	"context"
	"time"
)

// Verification is one KYC/KYB submission and its outcome. Errors is the JSON
// array of problems found, owned by package customers.
type Verification struct {
	ID         string
	Tenant     Tenant
	CustomerID string
	Status     string
	Errors     []byte
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const verificationCols = `id, platform_id, env, customer_id, verification_status, errors, created_at, updated_at`

func scanVerification(row interface{ Scan(...any) error }) (Verification, error) {
	var v Verification
	var errs string
	var created, updated int64
	if err := row.Scan(&v.ID, &v.Tenant.PlatformID, &v.Tenant.Env, &v.CustomerID, &v.Status, &errs,
		&created, &updated); err != nil {
		return Verification{}, classify(err)
	}
	v.Errors, v.CreatedAt, v.UpdatedAt = []byte(errs), fromMicros(created), fromMicros(updated)
	return v, nil
}

// InsertVerification stores a verification.
func (q Q) InsertVerification(ctx context.Context, v Verification) error {
	_, err := q.exec(ctx, `INSERT INTO verifications (`+verificationCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, v.Tenant.PlatformID, v.Tenant.Env, v.CustomerID, v.Status, string(v.Errors),
		toMicros(v.CreatedAt), toMicros(v.UpdatedAt))
	return err
}

// GetVerification returns a verification of the tenant. Verifications of
// deleted customers stay readable (audit history).
func (q Q) GetVerification(ctx context.Context, t Tenant, id string) (Verification, error) {
	return scanVerification(q.queryRow(ctx, `SELECT `+verificationCols+` FROM verifications
		WHERE platform_id = ? AND env = ? AND id = ?`, t.PlatformID, t.Env, id))
}

// VerificationFilter narrows ListVerifications.
type VerificationFilter struct {
	CustomerID string
	Status     string
}

// ListVerifications returns up to limit verifications after the id `after`
// (keyset, oldest first) and how many match in all.
func (q Q) ListVerifications(ctx context.Context, t Tenant, f VerificationFilter, after string, limit int) ([]Verification, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if f.CustomerID != "" {
		w.add("customer_id = ?", f.CustomerID)
	}
	if f.Status != "" {
		w.add("verification_status = ?", f.Status)
	}
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM verifications`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+verificationCols+` FROM verifications`+w.sql()+` ORDER BY id LIMIT ?`,
		append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Verification
	for rows.Next() {
		v, err := scanVerification(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	return out, total, classify(rows.Err())
}
