package store

import (
	"context"
	"database/sql"
	"time"
)

// CustomerDocument is the metadata of a verification document. HolderID is
// the customer itself or one of its beneficial owners; CustomerID is always
// the customer. IssuedOn is the date printed on the document (YYYY-MM-DD),
// when known.
type CustomerDocument struct {
	ID           string
	Tenant       Tenant
	CustomerID   string
	HolderID     string
	DocumentType string
	Country      string
	Side         string
	IssuedOn     *string
	FileName     string
	DeletedAt    *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const customerDocumentCols = `id, platform_id, env, customer_id, holder_id, document_type, country, side, issued_on,
	file_name, deleted_at, created_at, updated_at`

func scanCustomerDocument(row interface{ Scan(...any) error }) (CustomerDocument, error) {
	var d CustomerDocument
	var issued sql.NullString
	var deleted sql.NullInt64
	var created, updated int64
	if err := row.Scan(&d.ID, &d.Tenant.PlatformID, &d.Tenant.Env, &d.CustomerID, &d.HolderID, &d.DocumentType,
		&d.Country, &d.Side, &issued, &d.FileName, &deleted, &created, &updated); err != nil {
		return CustomerDocument{}, classify(err)
	}
	d.IssuedOn, d.DeletedAt = custStrPtr(issued), timePtr(deleted)
	d.CreatedAt, d.UpdatedAt = fromMicros(created), fromMicros(updated)
	return d, nil
}

// InsertCustomerDocument stores a document's metadata.
func (q Q) InsertCustomerDocument(ctx context.Context, d CustomerDocument) error {
	_, err := q.exec(ctx, `INSERT INTO customer_documents (`+customerDocumentCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.Tenant.PlatformID, d.Tenant.Env, d.CustomerID, d.HolderID, d.DocumentType, d.Country, d.Side,
		custNullStr(d.IssuedOn), d.FileName, nullMicros(d.DeletedAt), toMicros(d.CreatedAt), toMicros(d.UpdatedAt))
	return err
}

// CustomerDocuments returns the live documents of a customer and of its
// owners, oldest first.
func (q Q) CustomerDocuments(ctx context.Context, t Tenant, customerID string) ([]CustomerDocument, error) {
	rows, err := q.query(ctx, `SELECT `+customerDocumentCols+` FROM customer_documents
		WHERE platform_id = ? AND env = ? AND customer_id = ? AND deleted_at IS NULL ORDER BY id`,
		t.PlatformID, t.Env, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CustomerDocument
	for rows.Next() {
		d, err := scanCustomerDocument(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, classify(rows.Err())
}

// DeleteHolderDocuments marks every live document of a holder deleted and
// reports how many there were.
func (q Q) DeleteHolderDocuments(ctx context.Context, t Tenant, holderID string, at time.Time) (int, error) {
	res, err := q.exec(ctx, `UPDATE customer_documents SET deleted_at = ?, updated_at = ?
		WHERE platform_id = ? AND env = ? AND holder_id = ? AND deleted_at IS NULL`,
		toMicros(at), toMicros(at), t.PlatformID, t.Env, holderID)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}
