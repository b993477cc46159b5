package customers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
)

// MaxOwners is the most live beneficial owners a business may have.
const MaxOwners = 50

// OwnerCreateRequest is the body of POST /beneficial-owners.
type OwnerCreateRequest struct {
	CustomerID          *string       `json:"customerId"`
	Roles               []string      `json:"roles"`
	OwnershipPercentage *int          `json:"ownershipPercentage"`
	PersonalInfo        *PersonalInfo `json:"personalInfo"`
}

// OwnerUpdateRequest is the body of PATCH /beneficial-owners/{id}: roles
// replace the stored roles; personalInfo is merged field by field.
type OwnerUpdateRequest struct {
	Roles               []string      `json:"roles"`
	OwnershipPercentage *int          `json:"ownershipPercentage"`
	PersonalInfo        *PersonalInfo `json:"personalInfo"`
}

func (x *v) roles(list []string) {
	if len(list) == 0 {
		x.add("roles", apierr.MinLength, "must list at least one role")
		return
	}
	x.enumList("roles", list, OwnerRoles)
}

func (x *v) percentage(p *int) {
	switch {
	case p == nil:
	case *p < 0:
		x.add("ownershipPercentage", apierr.Minimum, "must be at least 0")
	case *p > 100:
		x.add("ownershipPercentage", apierr.Maximum, "must be at most 100")
	}
}

func (x *v) personalInfo(pi *PersonalInfo, now time.Time, patch bool) {
	if pi == nil {
		return
	}
	const pre = "personalInfo."
	x.text(pre+"firstName", pi.FirstName, MaxTextLength)
	x.text(pre+"middleName", pi.MiddleName, MaxTextLength)
	x.text(pre+"lastName", pi.LastName, MaxTextLength)
	x.date(pre+"birthDate", pi.BirthDate, now)
	x.country(pre+"nationality", pi.Nationality)
	x.email(pre+"email", pi.Email)
	x.phone(pre+"phoneNumber", pi.PhoneNumber)
	x.address(pre+"address", pi.Address, !patch)
	x.enum(pre+"idType", pi.IDType, IDTypes)
	x.text(pre+"identifier", pi.Identifier, 64)
	x.country(pre+"countryOfIssuance", pi.CountryOfIssuance)
}

// Validate lists every invalid field; it never changes r.
func (r OwnerCreateRequest) Validate(now time.Time) error {
	x := &v{}
	if x.required("customerId", r.CustomerID) {
		x.text("customerId", r.CustomerID, MaxTextLength)
	}
	if r.Roles == nil {
		x.add("roles", apierr.Required, "is required")
	} else {
		x.roles(r.Roles)
	}
	x.percentage(r.OwnershipPercentage)
	if r.OwnershipPercentage == nil && slices.Contains(r.Roles, "UBO") {
		x.add("ownershipPercentage", apierr.Required, "is required for an owner with the UBO role")
	}
	if r.PersonalInfo == nil {
		x.add("personalInfo", apierr.Required, "is required")
	} else {
		x.required("personalInfo.firstName", r.PersonalInfo.FirstName)
		x.required("personalInfo.lastName", r.PersonalInfo.LastName)
		x.personalInfo(r.PersonalInfo, now, false)
		pi := r.PersonalInfo
		x.identification("personalInfo.", pi.IDType, pi.Identifier, pi.CountryOfIssuance)
	}
	return mergeDuplicates(x.f.Err())
}

// Validate lists every invalid field; it never changes r.
func (r OwnerUpdateRequest) Validate(now time.Time) error {
	x := &v{}
	if r.Roles != nil {
		x.roles(r.Roles)
	}
	x.percentage(r.OwnershipPercentage)
	x.personalInfo(r.PersonalInfo, now, true)
	return mergeDuplicates(x.f.Err())
}

func mergePersonalInfo(cur PersonalInfo, in *PersonalInfo) PersonalInfo {
	out := clone(cur)
	if in == nil {
		return out
	}
	in2 := clone(*in)
	set := func(dst **string, src *string) {
		if src != nil {
			*dst = src
		}
	}
	set(&out.FirstName, in2.FirstName)
	set(&out.MiddleName, in2.MiddleName)
	set(&out.LastName, in2.LastName)
	set(&out.BirthDate, in2.BirthDate)
	set(&out.Nationality, in2.Nationality)
	set(&out.Email, in2.Email)
	set(&out.PhoneNumber, in2.PhoneNumber)
	set(&out.IDType, in2.IDType)
	set(&out.Identifier, in2.Identifier)
	set(&out.CountryOfIssuance, in2.CountryOfIssuance)
	mergeAddress(&out.Address, in2.Address)
	return out
}

func renderOwner(o store.BeneficialOwner) (BeneficialOwner, error) {
	out := BeneficialOwner{ID: o.ID, CustomerID: o.CustomerID, Roles: o.Roles, OwnershipPercentage: o.OwnershipPercentage,
		KycStatus: o.KycStatus, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	if out.Roles == nil {
		out.Roles = []string{}
	}
	if err := json.Unmarshal(o.PersonalInfo, &out.PersonalInfo); err != nil {
		return BeneficialOwner{}, fmt.Errorf("customers: stored owner %s: %w", o.ID, err)
	}
	return out, nil
}

func ownerNotFound(ownerID string) error {
	return apierr.NotFound(apierr.CodeNotFound, "Beneficial owner "+ownerID)
}

// checkOwnership refuses an ownership total above 100% among a business's
// live owners (skipping the owner being changed).
func checkOwnership(owners []store.BeneficialOwner, skipID string, pct int) error {
	total := pct
	for _, o := range owners {
		if o.ID != skipID {
			total += o.OwnershipPercentage
		}
	}
	if total > 100 {
		var f apierr.Fields
		f.Add("ownershipPercentage", apierr.Maximum, "brings the business's owners to %d%%; the total must not exceed 100%%", total)
		return f.Err()
	}
	return nil
}

// CreateOwner adds a beneficial owner to a business customer (R-CUST-36).
// Where no paperwork is required the owner's sandbox outcome counts at once
// (R-SBX-15).
func (s *Service) CreateOwner(ctx context.Context, t store.Tenant, req OwnerCreateRequest) (BeneficialOwner, error) {
	now := s.now()
	if err := req.Validate(now); err != nil {
		return BeneficialOwner{}, err
	}
	info, err := json.Marshal(clone(*req.PersonalInfo))
	if err != nil {
		return BeneficialOwner{}, err
	}
	pct := 0
	if req.OwnershipPercentage != nil {
		pct = *req.OwnershipPercentage
	}
	var out BeneficialOwner
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getLive(ctx, tx.Q, t, *req.CustomerID, true)
		if err != nil {
			return err
		}
		if row.Type != Business {
			var f apierr.Fields
			f.Add("customerId", apierr.Enum, "is an INDIVIDUAL customer; beneficial owners belong to BUSINESS customers")
			return f.Err()
		}
		owners, err := tx.BeneficialOwnersOf(ctx, t, row.ID)
		if err != nil {
			return err
		}
		if len(owners) >= MaxOwners {
			var f apierr.Fields
			f.Add("customerId", apierr.MaxItems, "already has %d beneficial owners, the most allowed", MaxOwners)
			return f.Err()
		}
		if err := checkOwnership(owners, "", pct); err != nil {
			return err
		}
		o := store.BeneficialOwner{ID: id.New(id.BeneficialOwner), Tenant: t, CustomerID: row.ID, Roles: req.Roles,
			OwnershipPercentage: pct, PersonalInfo: info, KycStatus: StatusUnverified, CreatedAt: now, UpdatedAt: now}
		if err := tx.InsertBeneficialOwner(ctx, o); err != nil {
			return err
		}
		if err := s.resolve(ctx, tx, t, &row); err != nil {
			return err
		}
		if o, err = tx.GetBeneficialOwner(ctx, t, o.ID, false); err != nil {
			return err
		}
		if out, err = renderOwner(o); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		return BeneficialOwner{}, err
	}
	return out, nil
}

// GetOwner returns a live owner of a live customer.
func (s *Service) GetOwner(ctx context.Context, t store.Tenant, ownerID string) (BeneficialOwner, error) {
	o, err := s.DB.Read().GetBeneficialOwner(ctx, t, ownerID, false)
	if errors.Is(err, store.ErrNotFound) {
		return BeneficialOwner{}, ownerNotFound(ownerID)
	}
	if err != nil {
		return BeneficialOwner{}, err
	}
	return renderOwner(o)
}

// ListOwners returns one page of owners, of one customer when customerID is
// set.
func (s *Service) ListOwners(ctx context.Context, t store.Tenant, customerID, after string, limit int) ([]BeneficialOwner, int, error) {
	rows, total, err := s.DB.Read().ListBeneficialOwners(ctx, t, customerID, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out, err := page.Render(rows, renderOwner)
	return out, total, err
}

// UpdateOwner changes an owner's data. Like renaming a customer, it never
// re-derives a verification status.
func (s *Service) UpdateOwner(ctx context.Context, t store.Tenant, ownerID string, req OwnerUpdateRequest) (BeneficialOwner, error) {
	now := s.now()
	if err := req.Validate(now); err != nil {
		return BeneficialOwner{}, err
	}
	var out BeneficialOwner
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		o, err := tx.GetBeneficialOwner(ctx, t, ownerID, true)
		if errors.Is(err, store.ErrNotFound) {
			return ownerNotFound(ownerID)
		}
		if err != nil {
			return err
		}
		var cur PersonalInfo
		if err := json.Unmarshal(o.PersonalInfo, &cur); err != nil {
			return err
		}
		next := mergePersonalInfo(cur, req.PersonalInfo)
		x := &v{}
		x.identification("personalInfo.", next.IDType, next.Identifier, next.CountryOfIssuance)
		x.address("personalInfo.address", next.Address, true)
		if err := mergeDuplicates(x.f.Err()); err != nil {
			return err
		}
		if req.Roles != nil {
			o.Roles = req.Roles
		}
		if req.OwnershipPercentage != nil {
			// Lock the business so concurrent changes cannot exceed 100%.
			if _, err := getLive(ctx, tx.Q, t, o.CustomerID, true); err != nil {
				return err
			}
			owners, err := tx.BeneficialOwnersOf(ctx, t, o.CustomerID)
			if err != nil {
				return err
			}
			if err := checkOwnership(owners, o.ID, *req.OwnershipPercentage); err != nil {
				return err
			}
			o.OwnershipPercentage = *req.OwnershipPercentage
		}
		if o.PersonalInfo, err = json.Marshal(next); err != nil {
			return err
		}
		o.UpdatedAt = now
		if err := tx.UpdateBeneficialOwner(ctx, o); err != nil {
			return err
		}
		out, err = renderOwner(o)
		return err
	})
	if err != nil {
		return BeneficialOwner{}, err
	}
	return out, nil
}

// DeleteOwner removes an owner and its documents, then lets the provider
// re-derive the business's status (R-CUST-37). It is refused while a manual
// review that includes the owner is in progress (R-CUST-38).
func (s *Service) DeleteOwner(ctx context.Context, t store.Tenant, ownerID string) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		o, err := tx.GetBeneficialOwner(ctx, t, ownerID, false)
		if errors.Is(err, store.ErrNotFound) {
			return ownerNotFound(ownerID)
		}
		if err != nil {
			return err
		}
		row, err := getLive(ctx, tx.Q, t, o.CustomerID, true)
		if err != nil {
			return err
		}
		// Read the owner again under the business's lock: a submission that
		// started a review meanwhile has marked it.
		if o, err = tx.GetBeneficialOwner(ctx, t, ownerID, true); errors.Is(err, store.ErrNotFound) {
			return ownerNotFound(ownerID)
		} else if err != nil {
			return err
		}
		if row.Status == StatusPending && row.ReviewVerificationID != nil && o.ReviewVerificationID != nil &&
			*o.ReviewVerificationID == *row.ReviewVerificationID {
			return apierr.Conflict(fmt.Sprintf("Beneficial owner %s is part of verification %s, whose manual review is in progress; "+
				"it can be removed once the review ends", o.ID, *row.ReviewVerificationID))
		}
		now := s.now()
		o.DeletedAt, o.UpdatedAt = &now, now
		if err := tx.UpdateBeneficialOwner(ctx, o); err != nil {
			return err
		}
		if _, err := tx.DeleteHolderDocuments(ctx, t, o.ID, now); err != nil {
			return err
		}
		return s.resolve(ctx, tx, t, &row)
	})
}
