package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"
)

// Customer is one row of customers. Profile is the customer's data as JSON,
// owned by package customers; the columns beside it are what queries filter
// on or what the verification rules keep.
type Customer struct {
	ID                    string
	Tenant                Tenant
	PlatformCustomerID    string
	Type                  string
	Status                string
	Region                string
	Currencies            []string
	Profile               []byte
	EmailVerified         *string
	PhoneVerified         *string
	RegistryErrorReported bool
	ReviewVerificationID  *string
	DeletedAt             *time.Time
	CreatedAt             time.Time
	UpdatedAt             time.Time
}

const customerCols = `id, platform_id, env, platform_customer_id, customer_type, status, region, currencies, profile,
	email_verified, phone_verified, registry_error_reported, review_verification_id, deleted_at, created_at, updated_at`

// customerColsC is customerCols qualified by the alias c (built once: every
// quote from a customer reads them).
var customerColsC = qualifiedCols("c", customerCols)

// qualifiedCols is a list of columns qualified by the table alias a.
func qualifiedCols(a, list string) string {
	cols := strings.Split(list, ",")
	for i, c := range cols {
		cols[i] = a + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

func scanCustomer(row interface{ Scan(...any) error }) (Customer, error) {
	c, ok, err := scanCustomerOrNone(row)
	if err == nil && !ok {
		err = errors.New("store: a customer row without an id")
	}
	return c, err
}

// scanCustomerOrNone reads customerCols where an outer join may have found
// no customer: every column NULL, ok false.
func scanCustomerOrNone(row interface{ Scan(...any) error }) (c Customer, ok bool, err error) {
	var id, platformID, env, pcid, typ, status, region, currencies, profile sql.NullString
	var emailV, phoneV, review sql.NullString
	var reported sql.NullBool
	var deleted, created, updated sql.NullInt64
	if err := row.Scan(&id, &platformID, &env, &pcid, &typ, &status, &region, &currencies, &profile, &emailV, &phoneV,
		&reported, &review, &deleted, &created, &updated); err != nil {
		return Customer{}, false, classify(err)
	}
	if !id.Valid {
		return Customer{}, false, nil
	}
	c = Customer{ID: id.String, Tenant: Tenant{PlatformID: platformID.String, Env: env.String},
		PlatformCustomerID: pcid.String, Type: typ.String, Status: status.String, Region: region.String,
		RegistryErrorReported: reported.Bool}
	c.Currencies = custSplitList(currencies.String)
	c.Profile = []byte(profile.String)
	c.EmailVerified, c.PhoneVerified, c.ReviewVerificationID = custStrPtr(emailV), custStrPtr(phoneV), custStrPtr(review)
	c.DeletedAt = timePtr(deleted)
	c.CreatedAt, c.UpdatedAt = fromMicros(created.Int64), fromMicros(updated.Int64)
	return c, true, nil
}

// custJoinList stores a list as ",A,B," so that LIKE '%,A,%' finds a member.
func custJoinList(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return "," + strings.Join(items, ",") + ","
}

func custSplitList(s string) []string {
	s = strings.Trim(s, ",")
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func custStrPtr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}

func custNullStr(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}

// InsertCustomer stores a new customer. A platformCustomerId already used by
// a live customer of the tenant is ErrConflict.
func (q Q) InsertCustomer(ctx context.Context, c Customer) error {
	_, err := q.exec(ctx, `INSERT INTO customers (`+customerCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Tenant.PlatformID, c.Tenant.Env, c.PlatformCustomerID, c.Type, c.Status, c.Region,
		custJoinList(c.Currencies), string(c.Profile), custNullStr(c.EmailVerified), custNullStr(c.PhoneVerified),
		c.RegistryErrorReported, custNullStr(c.ReviewVerificationID), nullMicros(c.DeletedAt),
		toMicros(c.CreatedAt), toMicros(c.UpdatedAt))
	return err
}

// GetCustomer returns a live (not deleted) customer of the tenant; lock takes
// a row lock (PostgreSQL) for a read-modify-write inside a transaction.
func (q Q) GetCustomer(ctx context.Context, t Tenant, id string, lock bool) (Customer, error) {
	query := `SELECT ` + customerCols + ` FROM customers WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`
	if lock {
		query += q.forUpdate()
	}
	return scanCustomer(q.queryRow(ctx, query, t.PlatformID, t.Env, id))
}

// UpdateCustomer writes every mutable column of a live customer. Setting
// DeletedAt deletes it. A platformCustomerId taken by another live customer
// is ErrConflict.
func (q Q) UpdateCustomer(ctx context.Context, c Customer) error {
	res, err := q.exec(ctx, `UPDATE customers SET platform_customer_id = ?, status = ?, region = ?, currencies = ?,
		profile = ?, email_verified = ?, phone_verified = ?, registry_error_reported = ?, review_verification_id = ?,
		deleted_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND id = ? AND deleted_at IS NULL`,
		c.PlatformCustomerID, c.Status, c.Region, custJoinList(c.Currencies), string(c.Profile),
		custNullStr(c.EmailVerified), custNullStr(c.PhoneVerified), c.RegistryErrorReported, custNullStr(c.ReviewVerificationID),
		nullMicros(c.DeletedAt), toMicros(c.UpdatedAt), c.Tenant.PlatformID, c.Tenant.Env, c.ID)
	return affectedOne(res, err)
}

// CustomerFilter narrows ListCustomers. Empty fields do not filter.
type CustomerFilter struct {
	PlatformCustomerID          string
	Type                        string
	Region                      string
	Currency                    string
	Status                      string
	CreatedAfter, CreatedBefore *time.Time
	UpdatedAfter, UpdatedBefore *time.Time
}

// ListCustomers returns up to limit live customers after the id `after`
// (keyset, oldest first) and how many match the filter in all.
func (q Q) ListCustomers(ctx context.Context, t Tenant, f CustomerFilter, after string, limit int) ([]Customer, int, error) {
	w := where{}
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	w.add("deleted_at IS NULL")
	if f.PlatformCustomerID != "" {
		w.add("platform_customer_id = ?", f.PlatformCustomerID)
	}
	if f.Type != "" {
		w.add("customer_type = ?", f.Type)
	}
	if f.Region != "" {
		w.add("region = ?", f.Region)
	}
	if f.Currency != "" {
		w.add("currencies LIKE ?", "%,"+f.Currency+",%")
	}
	if f.Status != "" {
		w.add("status = ?", f.Status)
	}
	w.timeRange("created_at", f.CreatedAfter, f.CreatedBefore)
	w.timeRange("updated_at", f.UpdatedAfter, f.UpdatedBefore)
	var total int
	if err := q.queryRow(ctx, `SELECT COUNT(*) FROM customers`+w.sql(), w.args...).Scan(&total); err != nil {
		return nil, 0, classify(err)
	}
	if after != "" {
		w.add("id > ?", after)
	}
	rows, err := q.query(ctx, `SELECT `+customerCols+` FROM customers`+w.sql()+` ORDER BY id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Customer
	for rows.Next() {
		c, err := scanCustomer(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, classify(rows.Err())
}

// CustomerRowCounts counts the rows of every customers table, deleted rows
// included, across all tenants: tests use it to prove a refused request left
// nothing behind.
func (q Q) CustomerRowCounts(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, table := range []string{"customers", "customer_agreements", "customer_contact_codes",
		"beneficial_owners", "customer_documents", "verifications"} {
		var n int
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
			return nil, classify(err)
		}
		out[table] = n
	}
	return out, nil
}

// custInList returns "?, ?, …" for n values.
func custInList(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
