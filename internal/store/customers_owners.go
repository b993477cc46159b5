package store

import (
	"context"
	"database/sql"
	"time"
)

// BeneficialOwner is a person behind a business customer. PersonalInfo is
// JSON owned by package customers.
type BeneficialOwner struct {
	ID                   string
	Tenant               Tenant
	CustomerID           string
	Roles                []string
	OwnershipPercentage  int
	PersonalInfo         []byte
	KycStatus            string
	ReviewVerificationID *string
	DeletedAt            *time.Time
	CreatedAt            time.Time
	UpdatedAt            time.Time
}

const ownerCols = `o.id, o.platform_id, o.env, o.customer_id, o.roles, o.ownership_percentage, o.personal_info, o.kyc_status,
	o.review_verification_id, o.deleted_at, o.created_at, o.updated_at`

func scanOwner(row interface{ Scan(...any) error }) (BeneficialOwner, error) {
	var o BeneficialOwner
	var roles, info string
	var review sql.NullString
	var deleted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&o.ID, &o.Tenant.PlatformID, &o.Tenant.Env, &o.CustomerID, &roles, &o.OwnershipPercentage,
		&info, &o.KycStatus, &review, &deleted, &created, &updated); err != nil {
		return BeneficialOwner{}, classify(err)
	}
	o.Roles, o.PersonalInfo, o.ReviewVerificationID = custSplitList(roles), []byte(info), custStrPtr(review)
	o.DeletedAt, o.CreatedAt, o.UpdatedAt = timePtr(deleted), fromMicros(created), fromMicros(updated)
	return o, nil
}

// InsertBeneficialOwner stores a new owner.
func (q Q) InsertBeneficialOwner(ctx context.Context, o BeneficialOwner) error {
	_, err := q.exec(ctx, `INSERT INTO beneficial_owners (id, platform_id, env, customer_id, roles, ownership_percentage,
		personal_info, kyc_status, review_verification_id, deleted_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Tenant.PlatformID, o.Tenant.Env, o.CustomerID, custJoinList(o.Roles), o.OwnershipPercentage,
		string(o.PersonalInfo), o.KycStatus, custNullStr(o.ReviewVerificationID), nullMicros(o.DeletedAt),
		toMicros(o.CreatedAt), toMicros(o.UpdatedAt))
	return err
}

// GetBeneficialOwner returns a live owner of a live customer of the tenant.
func (q Q) GetBeneficialOwner(ctx context.Context, t Tenant, id string, lock bool) (BeneficialOwner, error) {
	query := `SELECT ` + ownerCols + ` FROM beneficial_owners o JOIN customers c ON c.id = o.customer_id
		WHERE o.platform_id = ? AND o.env = ? AND o.id = ? AND o.deleted_at IS NULL AND c.deleted_at IS NULL`
	if lock && q.engine == Postgres {
		query += ` FOR UPDATE OF o`
	}
	return scanOwner(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// UpdateBeneficialOwner writes every mutable column of a live owner; setting
// DeletedAt deletes it.
func (q Q) UpdateBeneficialOwner(ctx context.Context, o BeneficialOwner) error {
	res, err := q.exec(ctx, `UPDATE beneficial_owners SET roles = ?, ownership_percentage = ?, personal_info = ?,
		kyc_status = ?, review_verification_id = ?, deleted_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`,
		custJoinList(o.Roles), o.OwnershipPercentage, string(o.PersonalInfo), o.KycStatus,
		custNullStr(o.ReviewVerificationID), nullMicros(o.DeletedAt), toMicros(o.UpdatedAt),
		o.Tenant.PlatformID, o.Tenant.Env, o.ID)
	return affectedOne(res, err)
}

// ListBeneficialOwners returns up to limit live owners of live customers
// after the id `after` (keyset, oldest first), only customerID's when it is
// set, and how many match in all.
func (q Q) ListBeneficialOwners(ctx context.Context, t Tenant, customerID, after string, limit int) ([]BeneficialOwner, int, error) {
	w := where{}
	w.add("o.platform_id = ?", t.PlatformID)
	w.add("o.env = ?", t.Env)
	w.add("o.deleted_at IS NULL")
	w.add("c.deleted_at IS NULL")
	if customerID != "" {
		w.add("o.customer_id = ?", customerID)
	}
	from := ` FROM beneficial_owners o JOIN customers c ON c.id = o.customer_id`
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*)`+from+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("o.id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+ownerCols+from+w.sql()+` ORDER BY o.id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []BeneficialOwner
	for rows.Next() {
		o, err := scanOwner(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, o)
	}
	return out, total, classify(rows.Err())
}

// BeneficialOwnersOf returns every live owner of a customer, oldest first.
func (q Q) BeneficialOwnersOf(ctx context.Context, t Tenant, customerID string) ([]BeneficialOwner, error) {
	rows, err := q.query(ctx, `SELECT `+ownerCols+` FROM beneficial_owners o
		WHERE o.platform_id = ? AND o.env = ? AND o.customer_id = ? AND o.deleted_at IS NULL ORDER BY o.id`,
		t.PlatformID, t.Env, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []BeneficialOwner
	for rows.Next() {
		o, err := scanOwner(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, classify(rows.Err())
}
