package customers

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// DocumentRequest records a verification document's metadata. The KYC
// document upload endpoints call RecordDocument with the file's metadata;
// the sandbox records metadata alone (POST /sandbox/documents) so that a
// verification packet can be completed before uploads exist.
type DocumentRequest struct {
	DocumentHolder *string `json:"documentHolder"`
	DocumentType   *string `json:"documentType"`
	Country        *string `json:"country"`
	Side           *string `json:"side"`
	IssuedOn       *string `json:"issuedOn"`
	FileName       *string `json:"fileName"`
	// upload carries the file of POST /documents (documents_files.go).
	upload *upload
}

// Validate lists every invalid field; it never changes r.
func (r DocumentRequest) Validate(now time.Time) error {
	x := &v{}
	if x.required("documentHolder", r.DocumentHolder) {
		x.text("documentHolder", r.DocumentHolder, MaxTextLength)
	}
	if x.required("documentType", r.DocumentType) {
		x.enum("documentType", r.DocumentType, DocumentTypes)
	}
	x.country("country", r.Country)
	x.enum("side", r.Side, DocumentSides)
	x.date("issuedOn", r.IssuedOn, now)
	x.text("fileName", r.FileName, MaxTextLength)
	return x.f.Err()
}

// RecordDocument stores a document's metadata for its holder: a live
// customer or a live beneficial owner of one. It does not change any
// verification status; the next submission reads it.
func (s *Service) RecordDocument(ctx context.Context, t store.Tenant, req DocumentRequest) (Document, error) {
	now := s.now()
	if err := req.Validate(now); err != nil {
		return Document{}, err
	}
	holder := *req.DocumentHolder
	d := store.CustomerDocument{ID: id.New(id.Document), Tenant: t, HolderID: holder, DocumentType: *req.DocumentType,
		IssuedOn: req.IssuedOn, CreatedAt: now, UpdatedAt: now}
	if req.Country != nil {
		d.Country = *req.Country
	}
	if req.Side != nil {
		d.Side = *req.Side
	}
	if req.FileName != nil {
		d.FileName = *req.FileName
	}
	notFound := apierr.NotFound("DOCUMENT_HOLDER_NOT_FOUND", "Document holder "+holder)
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		switch {
		case strings.HasPrefix(holder, id.Customer+":"):
			row, err := tx.GetCustomer(ctx, t, holder, false)
			if errors.Is(err, store.ErrNotFound) {
				return notFound
			}
			if err != nil {
				return err
			}
			d.CustomerID = row.ID
		case strings.HasPrefix(holder, id.BeneficialOwner+":"):
			o, err := tx.GetBeneficialOwner(ctx, t, holder, false)
			if errors.Is(err, store.ErrNotFound) {
				return notFound
			}
			if err != nil {
				return err
			}
			d.CustomerID = o.CustomerID
		default:
			return notFound
		}
		return s.insertDocument(ctx, tx, d, req)
	})
	if err != nil {
		return Document{}, err
	}
	return Document{ID: d.ID, DocumentHolder: d.HolderID, DocumentType: d.DocumentType, Country: d.Country,
		Side: d.Side, IssuedOn: d.IssuedOn, FileName: d.FileName, CreatedAt: d.CreatedAt}, nil
}
