package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"
)

// AgreementConsent is a customer's recorded acceptance of one agreement type.
type AgreementConsent struct {
	CustomerID       string
	Tenant           Tenant
	Type             string
	TermsVersion     string
	AcceptedAt       time.Time
	IPAddress        string
	AcceptanceMethod string
	RecordedAt       time.Time
}

const agreementCols = `customer_id, agreement_type, platform_id, env, terms_version, accepted_at, ip_address, acceptance_method, recorded_at`

func scanAgreement(row interface{ Scan(...any) error }) (AgreementConsent, error) {
	var a AgreementConsent
	var accepted, recorded int64
	if err := row.Scan(&a.CustomerID, &a.Type, &a.Tenant.PlatformID, &a.Tenant.Env, &a.TermsVersion, &accepted,
		&a.IPAddress, &a.AcceptanceMethod, &recorded); err != nil {
		return AgreementConsent{}, classify(err)
	}
	a.AcceptedAt, a.RecordedAt = fromMicros(accepted), fromMicros(recorded)
	return a, nil
}

// PutAgreementConsent records a consent, replacing the customer's earlier
// consent to the same agreement type.
func (q Q) PutAgreementConsent(ctx context.Context, a AgreementConsent) error {
	_, err := q.exec(ctx, `INSERT INTO customer_agreements (`+agreementCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (customer_id, agreement_type) DO UPDATE SET terms_version = excluded.terms_version,
		accepted_at = excluded.accepted_at, ip_address = excluded.ip_address,
		acceptance_method = excluded.acceptance_method, recorded_at = excluded.recorded_at`,
		a.CustomerID, a.Type, a.Tenant.PlatformID, a.Tenant.Env, a.TermsVersion, toMicros(a.AcceptedAt),
		a.IPAddress, a.AcceptanceMethod, toMicros(a.RecordedAt))
	return err
}

// AgreementConsents returns the consents of the given customers of the
// tenant, ordered by customer and agreement type.
func (q Q) AgreementConsents(ctx context.Context, t Tenant, customerIDs ...string) ([]AgreementConsent, error) {
	if len(customerIDs) == 0 {
		return nil, nil
	}
	args := []any{t.PlatformID, t.Env}
	for _, id := range customerIDs {
		args = append(args, id)
	}
	rows, err := q.query(ctx, `SELECT `+agreementCols+` FROM customer_agreements
		WHERE platform_id = ? AND env = ? AND customer_id IN (`+custInList(len(customerIDs))+`)
		ORDER BY customer_id, agreement_type`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgreementConsent
	for rows.Next() {
		a, err := scanAgreement(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, classify(rows.Err())
}

// AgreedTerms is one agreement a customer accepted, and the version.
type AgreedTerms struct{ Type, TermsVersion string }

// LiveCustomerWithAgreements returns a live customer of the tenant and the
// agreements it accepted, in one query (every quote from a customer asks,
// for the terms and for strong customer authentication): ErrNotFound when
// there is no such customer, an empty list when it accepted none.
func (q Q) LiveCustomerWithAgreements(ctx context.Context, t Tenant, customerID string) (Customer, []AgreedTerms, error) {
	rows, err := q.query(ctx, `SELECT `+customerColsC+`, a.agreement_type, a.terms_version FROM customers c
		LEFT JOIN customer_agreements a ON a.customer_id = c.id AND a.platform_id = c.platform_id AND a.env = c.env
		WHERE c.platform_id = ? AND c.env = ? AND c.id = ? AND c.deleted_at IS NULL`,
		t.PlatformID, t.Env, customerID)
	if err != nil {
		return Customer{}, nil, err
	}
	defer rows.Close()
	var c Customer
	found := false
	out := []AgreedTerms{}
	for rows.Next() {
		var typ, version sql.NullString
		row, err := scanCustomer(tailScan{row: rows, tail: []any{&typ, &version}})
		if err != nil {
			return Customer{}, nil, err
		}
		c, found = row, true
		out = addAgreed(out, typ, version)
	}
	if err := rows.Err(); err != nil {
		return Customer{}, nil, classify(err)
	}
	if !found {
		return Customer{}, nil, ErrNotFound
	}
	return c, out, nil
}

// addAgreed adds an agreement read from an outer join's row (NULL: none)
// to a customer's list, in type order, once however many rows repeat it.
// Every reader of agreements collects them through it
// (LiveCustomerWithAgreements, InternalAccountsWithOwners and the
// credential's read-ahead), so each gives that order without an ORDER BY:
// a customer accepts each type once (customer_agreements' key), and placing
// the few rows here costs less than the Sort node PostgreSQL would set up
// for every statement.
func addAgreed(list []AgreedTerms, typ, version sql.NullString) []AgreedTerms {
	if !typ.Valid {
		return list
	}
	agreed := AgreedTerms{Type: typ.String, TermsVersion: version.String}
	i, dup := slices.BinarySearchFunc(list, agreed, func(a, b AgreedTerms) int {
		return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.TermsVersion, b.TermsVersion))
	})
	if dup {
		return list
	}
	return slices.Insert(list, i, agreed)
}
