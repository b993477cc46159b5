package customers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
)

// provider returns the KYC provider of the tenant's environment.
func (s *Service) provider(t store.Tenant) KYCProvider {
	if t.Env == store.EnvSandbox {
		return s.SandboxKYC
	}
	return s.ProductionKYC
}

func errNoProvider() error {
	return apierr.New("NOT_READY", "No KYC provider is configured for this environment; "+
		"verifications cannot be submitted until the operator configures one")
}

// buildCase gathers what a provider sees, reading through q.
func buildCase(ctx context.Context, q store.Q, t store.Tenant, row store.Customer, today time.Time) (Case, []store.BeneficialOwner, error) {
	p, err := profileOf(row)
	if err != nil {
		return Case{}, nil, err
	}
	paperwork, err := paperworkRequired(ctx, q, t)
	if err != nil {
		return Case{}, nil, err
	}
	c := Case{CustomerID: row.ID, Type: row.Type, Status: row.Status, Profile: p, Today: today,
		PaperworkRequired: paperwork, RegistryErrorReported: row.RegistryErrorReported}
	var owners []store.BeneficialOwner
	if row.Type == Business {
		if owners, err = q.BeneficialOwnersOf(ctx, t, row.ID); err != nil {
			return Case{}, nil, err
		}
		for _, o := range owners {
			var pi PersonalInfo
			if err := json.Unmarshal(o.PersonalInfo, &pi); err != nil {
				return Case{}, nil, fmt.Errorf("customers: stored owner %s: %w", o.ID, err)
			}
			c.Owners = append(c.Owners, OwnerCase{ID: o.ID, Roles: o.Roles, OwnershipPercentage: o.OwnershipPercentage, PersonalInfo: pi})
		}
	}
	if c.Documents, err = q.CustomerDocuments(ctx, t, row.ID); err != nil {
		return Case{}, nil, err
	}
	return c, owners, nil
}

func today(now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// apply writes a decision: owner statuses, the registry flag, the review in
// progress, and the customer's status with its event.
func apply(ctx context.Context, tx *store.Tx, t store.Tenant, row *store.Customer, owners []store.BeneficialOwner,
	d Decision, reviewID string, now time.Time) error {
	for _, o := range owners {
		st, ok := d.OwnerStatuses[o.ID]
		changed := ok && st != o.KycStatus
		if reviewID != "" {
			r := reviewID
			o.ReviewVerificationID, changed = &r, true
		}
		if !changed {
			continue
		}
		if ok {
			o.KycStatus = st
		}
		o.UpdatedAt = now
		if err := tx.UpdateBeneficialOwner(ctx, o); err != nil {
			return err
		}
	}
	statusChanged, err := setStatus(row, d.Status)
	if err != nil {
		return err
	}
	if reviewID != "" {
		r := reviewID
		row.ReviewVerificationID = &r
	}
	flagChanged := d.RegistryErrorReported != row.RegistryErrorReported
	row.RegistryErrorReported = d.RegistryErrorReported
	if !statusChanged && !flagChanged && reviewID == "" {
		return nil
	}
	row.UpdatedAt = now
	if err := tx.UpdateCustomer(ctx, *row); err != nil {
		return err
	}
	if statusChanged {
		return emitStatus(ctx, tx, t, *row)
	}
	return nil
}

// resolve lets the provider decide a customer's status without a
// submission, where the tenant needs no paperwork (R-SBX-12): at creation,
// once contact verification completes, and when owners change (R-CUST-37).
// Final statuses never change (R-CUST-29, R-CUST-30), a review in progress
// is left alone, and KYC waits for contact verification (R-CONTACT-06).
func (s *Service) resolve(ctx context.Context, tx *store.Tx, t store.Tenant, row *store.Customer) error {
	prov := s.provider(t)
	if prov == nil || Final(row.Status) || (row.Status == StatusPending && row.ReviewVerificationID != nil) {
		return nil
	}
	p, err := profileOf(*row)
	if err != nil {
		return err
	}
	if !contactCleared(*row, p) {
		return nil
	}
	now := s.now()
	c, owners, err := buildCase(ctx, tx.Q, t, *row, today(now))
	if err != nil {
		return err
	}
	d, ok, err := prov.Resolve(ctx, c)
	if err != nil || !ok {
		return err
	}
	return apply(ctx, tx, t, row, owners, d, "", now)
}

func renderVerification(v store.Verification) (Verification, error) {
	out := Verification{ID: v.ID, CustomerID: v.CustomerID, VerificationStatus: v.Status,
		CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt}
	if err := json.Unmarshal(v.Errors, &out.Errors); err != nil {
		return Verification{}, fmt.Errorf("customers: stored verification %s: %w", v.ID, err)
	}
	if out.Errors == nil {
		out.Errors = []VerificationError{}
	}
	return out, nil
}

// VerificationRequest is the body of POST /verifications.
type VerificationRequest struct {
	CustomerID *string `json:"customerId"`
}

// Validate lists every invalid field; it never changes r.
func (r VerificationRequest) Validate() error {
	x := &v{}
	if x.required("customerId", r.CustomerID) {
		x.text("customerId", r.CustomerID, MaxTextLength)
	}
	return x.f.Err()
}

// Submit submits a customer for KYC (individuals) or KYB (businesses) and
// returns the verification (R-CUST-26..29). A customer whose status is final
// gets 400; one whose email and phone must be verified first gets 409 and
// nothing starts (R-CONTACT-06).
func (s *Service) Submit(ctx context.Context, t store.Tenant, req VerificationRequest) (Verification, error) {
	if err := req.Validate(); err != nil {
		return Verification{}, err
	}
	prov := s.provider(t)
	var out Verification
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getLive(ctx, tx.Q, t, *req.CustomerID, true)
		if err != nil {
			return err
		}
		if prov == nil {
			return errNoProvider()
		}
		if Final(row.Status) {
			return apierr.InvalidInput(fmt.Sprintf("Customer %s is %s; its verification is final and cannot be submitted again",
				row.ID, row.Status)).WithDetails(map[string]any{"status": row.Status})
		}
		p, err := profileOf(row)
		if err != nil {
			return err
		}
		if !contactCleared(row, p) {
			c, err := render(row, nil)
			if err != nil {
				return err
			}
			return apierr.Conflict("Customer " + row.ID + " must have its email and phone VERIFIED before KYC begins; " +
				"use POST /customers/{customerId}/verify-email and verify-phone").
				WithDetails(map[string]any{"contactVerification": c.ContactVerification})
		}
		now := s.now()
		c, owners, err := buildCase(ctx, tx.Q, t, row, today(now))
		if err != nil {
			return err
		}
		d, err := prov.Submit(ctx, c)
		if err != nil {
			return err
		}
		if d.Errors == nil {
			d.Errors = []VerificationError{}
		}
		errs, err := json.Marshal(d.Errors)
		if err != nil {
			return err
		}
		sv := store.Verification{ID: id.New(id.Verification), Tenant: t, CustomerID: row.ID,
			Status: d.VerificationStatus, Errors: errs, CreatedAt: now, UpdatedAt: now}
		if err := tx.InsertVerification(ctx, sv); err != nil {
			return err
		}
		reviewID := ""
		if d.VerificationStatus == VerificationPendingManualReview {
			reviewID = sv.ID // the review includes every current owner (R-CUST-38)
		}
		if err := apply(ctx, tx, t, &row, owners, d, reviewID, now); err != nil {
			return err
		}
		out, err = renderVerification(sv)
		return err
	})
	if err != nil {
		return Verification{}, err
	}
	return out, nil
}

// GetVerification returns one verification (R-CUST-31).
func (s *Service) GetVerification(ctx context.Context, t store.Tenant, verificationID string) (Verification, error) {
	v, err := s.DB.Read().GetVerification(ctx, t, verificationID)
	if errors.Is(err, store.ErrNotFound) {
		return Verification{}, apierr.NotFound("VERIFICATION_NOT_FOUND", "Verification "+verificationID)
	}
	if err != nil {
		return Verification{}, err
	}
	return renderVerification(v)
}

// ListVerifications returns one page of verifications, oldest first.
func (s *Service) ListVerifications(ctx context.Context, t store.Tenant, f store.VerificationFilter, after string, limit int) ([]Verification, int, error) {
	rows, total, err := s.DB.Read().ListVerifications(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out, err := page.Render(rows, renderVerification)
	return out, total, err
}
