package customers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// KYCProvider is the adapter to a KYC/KYB provider. The sandbox
// implementation applies the spec's suffix tables; a production adapter
// talks to a real provider and is configured by the operator.
type KYCProvider interface {
	// Submit decides a POST /verifications for c.
	Submit(ctx context.Context, c Case) (Decision, error)
	// Resolve decides a customer's status without a submission (at
	// creation, once contact verification completes, when owners change).
	// ok is false when the provider decides only on submissions.
	Resolve(ctx context.Context, c Case) (d Decision, ok bool, err error)
}

// Case is everything a provider sees about a customer.
type Case struct {
	CustomerID string
	Type       string
	Status     string
	Profile    Profile
	Owners     []OwnerCase
	Documents  []store.CustomerDocument
	// Today is the current date (UTC); proof of address must be recent.
	Today time.Time
	// PaperworkRequired is false on sandbox tenants that are regulated or
	// skip verification paperwork (R-SBX-12).
	PaperworkRequired bool
	// RegistryErrorReported: the sandbox already reported the 002
	// registration-number error of this business once (R-SBX-14).
	RegistryErrorReported bool
}

// OwnerCase is a beneficial owner as a provider sees it.
type OwnerCase struct {
	ID                  string
	Roles               []string
	OwnershipPercentage int
	PersonalInfo        PersonalInfo
}

// Decision is a provider's verdict.
type Decision struct {
	// Status is the customer's kycStatus/kybStatus after the decision.
	Status string
	// VerificationStatus and Errors answer a submission.
	VerificationStatus string
	Errors             []VerificationError
	// OwnerStatuses maps owner ids to their new kycStatus.
	OwnerStatuses         map[string]string
	RegistryErrorReported bool
}

// SandboxProvider decides by the last three characters of a name (Part A
// "Customer verification", R-SBX-04..15):
//
//	suffix  individual (fullName)        business (registrationNumber)      owner (lastName)
//	001     PENDING, manual review       PENDING, manual review             PENDING
//	002     REJECTED                     RESOLVE_ERRORS once, then REJECTED REJECTED (business too)
//	003     UNVERIFIED, poor-quality doc UNVERIFIED, poor-quality doc       UNVERIFIED, poor-quality doc
//	other   APPROVED                     APPROVED                           APPROVED
//
// A business's outcome is the worst of its own and its owners' (REJECTED,
// then RESOLVE_ERRORS, then PENDING, then APPROVED). Where paperwork is
// required (unregulated sandbox platforms by default) nothing is decided
// until a complete packet is submitted; otherwise the suffix decides at
// once, and 001 and 003 still need a complete packet when submitted.
type SandboxProvider struct{}

type outcome int

const (
	outcomeApprove outcome = iota
	outcomeReview
	outcomePoor
	outcomeReject
)

// SuffixOutcome reads a sandbox key's last three characters.
func suffixOutcome(key *string) outcome {
	if key == nil {
		return outcomeApprove
	}
	k := strings.TrimSpace(*key)
	switch {
	case strings.HasSuffix(k, "001"):
		return outcomeReview
	case strings.HasSuffix(k, "002"):
		return outcomeReject
	case strings.HasSuffix(k, "003"):
		return outcomePoor
	}
	return outcomeApprove
}

func (o outcome) status() string {
	switch o {
	case outcomeReview:
		return StatusPending
	case outcomeReject:
		return StatusRejected
	case outcomePoor:
		return StatusUnverified
	}
	return StatusApproved
}

// party is one person or business whose suffix counts.
type party struct {
	id      string
	owner   bool
	outcome outcome
}

func parties(c Case) []party {
	var key *string
	if c.Type == Business {
		if c.Profile.BusinessInfo != nil {
			key = c.Profile.BusinessInfo.RegistrationNumber
		}
	} else {
		key = c.Profile.FullName
	}
	out := []party{{id: c.CustomerID, outcome: suffixOutcome(key)}}
	if c.Type == Business {
		for _, o := range c.Owners {
			out = append(out, party{id: o.ID, owner: true, outcome: suffixOutcome(o.PersonalInfo.LastName)})
		}
	}
	return out
}

func worst(ps []party) outcome {
	w := outcomeApprove
	for _, p := range ps {
		w = max(w, p.outcome)
	}
	return w
}

func ownerStatuses(ps []party) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		if p.owner {
			out[p.id] = p.outcome.status()
		}
	}
	return out
}

// Submit decides a submission.
func (SandboxProvider) Submit(_ context.Context, c Case) (Decision, error) {
	d := Decision{Status: c.Status, RegistryErrorReported: c.RegistryErrorReported}
	ps := parties(c)
	w := worst(ps)
	needPacket := c.PaperworkRequired
	for _, p := range ps {
		if p.outcome == outcomeReview || p.outcome == outcomePoor {
			needPacket = true // R-SBX-13
		}
	}
	if needPacket {
		if errs := Packet(c); len(errs) > 0 {
			d.VerificationStatus, d.Errors = VerificationResolveErrors, errs
			return d, nil
		}
	}
	if c.Type == Business && ps[0].outcome == outcomeReject && !c.RegistryErrorReported {
		// R-SBX-14: a business registration number ending 002 reports
		// errors first; the next submission is rejected.
		d.VerificationStatus = VerificationResolveErrors
		d.Errors = []VerificationError{{ResourceID: c.CustomerID, Type: ErrInvalidField,
			Field:                 "businessInfo.registrationNumber",
			Reason:                "The registration number does not match the business registry (sandbox: it ends in 002); check it and submit again",
			AcceptedDocumentTypes: []string{}}}
		d.RegistryErrorReported = true
		d.Status = StatusUnverified
		return d, nil
	}
	d.OwnerStatuses = ownerStatuses(ps)
	switch w {
	case outcomeReject:
		d.Status, d.VerificationStatus, d.Errors = StatusRejected, VerificationRejected, []VerificationError{}
	case outcomePoor:
		d.Status, d.VerificationStatus = StatusUnverified, VerificationResolveErrors
		for _, p := range ps {
			if p.outcome == outcomePoor {
				d.Errors = append(d.Errors, poorQuality(c, p))
			}
		}
	case outcomeReview:
		d.Status, d.VerificationStatus, d.Errors = StatusPending, VerificationPendingManualReview, []VerificationError{}
	default:
		d.Status, d.VerificationStatus, d.Errors = StatusApproved, VerificationApproved, []VerificationError{}
	}
	return d, nil
}

// Resolve decides without a submission where no paperwork is required.
func (SandboxProvider) Resolve(_ context.Context, c Case) (Decision, bool, error) {
	if c.PaperworkRequired {
		return Decision{}, false, nil
	}
	ps := parties(c)
	if c.Type == Business && ps[0].outcome == outcomeReject && !c.RegistryErrorReported {
		ps[0].outcome = outcomePoor // errors first: stays UNVERIFIED until submitted
	}
	return Decision{Status: worst(ps).status(), OwnerStatuses: ownerStatuses(ps),
		RegistryErrorReported: c.RegistryErrorReported}, true, nil
}

// poorQuality is the POOR_QUALITY_DOCUMENT entry of a 003 party: about its
// newest identity document (a business: its formation document).
func poorQuality(c Case, p party) VerificationError {
	kinds := IdentityDocuments
	if !p.owner && c.Type == Business {
		kinds = FormationDocuments
	}
	e := VerificationError{ResourceID: p.id, Type: ErrPoorQualityDocument, Field: "",
		Reason:                "The document is unreadable (sandbox: the name ends in 003); upload a clearer copy and submit again",
		AcceptedDocumentTypes: kinds}
	if d := newest(c.Documents, p.id, kinds); d != nil {
		e.ResourceID = d.ID
	}
	return e
}

func newest(docs []store.CustomerDocument, holder string, kinds []string) *store.CustomerDocument {
	var out *store.CustomerDocument
	for i := range docs {
		d := &docs[i]
		if d.HolderID == holder && slices.Contains(kinds, d.DocumentType) && (out == nil || d.ID > out.ID) {
			out = d
		}
	}
	return out
}

// documentDate is the date a document bears, or its upload date.
func documentDate(d store.CustomerDocument) time.Time {
	if d.IssuedOn != nil {
		if t, err := time.Parse(time.DateOnly, *d.IssuedOn); err == nil {
			return t
		}
	}
	return d.CreatedAt
}

// ProofOfAddressMaxAge is how old a proof of address may be (R-CUST-32).
const ProofOfAddressMaxAgeMonths = 3

// Packet lists what a customer's verification packet lacks, one entry per
// problem (R-SBX-10, R-CUST-32).
//
// An individual needs fullName, birthDate, nationality, an address (line1,
// city, postalCode, country) and an identity document. A business needs
// businessInfo.legalName, businessInfo.taxId and an address; a beneficial
// owner with the CONTROL_PERSON role; at least one owner holding 25% or
// more; for each of those people a first and last name, birthDate, address,
// idType, identifier and an identity document; and, held by the business, a
// formation document, an ownership-structure document, a proof of address
// dated within the last 3 months and a tax-id document.
func Packet(c Case) []VerificationError {
	var out []VerificationError
	missing := func(resource, field, what string) {
		out = append(out, VerificationError{ResourceID: resource, Type: ErrMissingField, Field: field,
			Reason: what + " is required", AcceptedDocumentTypes: []string{}})
	}
	address := func(resource, prefix string, a *Address, whose string) {
		if a == nil {
			missing(resource, prefix+"address", whose+" address")
			return
		}
		for _, f := range []struct {
			name string
			v    *string
		}{{"line1", a.Line1}, {"city", a.City}, {"postalCode", a.PostalCode}, {"country", a.Country}} {
			if f.v == nil {
				missing(resource, prefix+"address."+f.name, fmt.Sprintf("%s address %s", whose, f.name))
			}
		}
	}
	document := func(holder, typ string, kinds []string, what string) {
		if newest(c.Documents, holder, kinds) == nil {
			out = append(out, VerificationError{ResourceID: holder, Type: typ, Field: "",
				Reason:                fmt.Sprintf("%s is required; upload one of %s", what, strings.Join(kinds, ", ")),
				AcceptedDocumentTypes: kinds})
		}
	}
	p := c.Profile
	if c.Type != Business {
		for _, f := range []struct {
			name string
			v    *string
		}{{"fullName", p.FullName}, {"birthDate", p.BirthDate}, {"nationality", p.Nationality}} {
			if f.v == nil {
				missing(c.CustomerID, f.name, f.name)
			}
		}
		address(c.CustomerID, "", p.Address, "The customer's")
		document(c.CustomerID, ErrMissingIdentityDocument, IdentityDocuments, "An identity document")
		return out
	}

	b := p.BusinessInfo
	if b == nil {
		b = &BusinessInfo{}
	}
	if b.LegalName == nil {
		missing(c.CustomerID, "businessInfo.legalName", "The business's legal name")
	}
	if b.TaxID == nil {
		missing(c.CustomerID, "businessInfo.taxId", "The business's tax identification number")
	}
	address(c.CustomerID, "", p.Address, "The business's")

	var control, major bool
	for _, o := range c.Owners {
		isControl := slices.Contains(o.Roles, RoleControlPerson)
		isMajor := o.OwnershipPercentage >= 25
		control = control || isControl
		major = major || isMajor
		if !isControl && !isMajor {
			continue // neither the control person nor a 25% owner
		}
		pi := o.PersonalInfo
		for _, f := range []struct {
			name string
			v    *string
		}{{"firstName", pi.FirstName}, {"lastName", pi.LastName}, {"birthDate", pi.BirthDate},
			{"idType", pi.IDType}, {"identifier", pi.Identifier}} {
			if f.v == nil {
				missing(o.ID, "personalInfo."+f.name, "The beneficial owner's "+f.name)
			}
		}
		address(o.ID, "personalInfo.", pi.Address, "The beneficial owner's")
		document(o.ID, ErrMissingIdentityDocument, IdentityDocuments, "An identity document of the beneficial owner")
	}
	if !control {
		out = append(out, VerificationError{ResourceID: c.CustomerID, Type: ErrMissingControlPerson, Field: "",
			Reason:                "Register the person who controls the business: POST /beneficial-owners with the CONTROL_PERSON role",
			AcceptedDocumentTypes: []string{}})
	}
	if !major {
		out = append(out, VerificationError{ResourceID: c.CustomerID, Type: ErrMissingBeneficialOwner, Field: "",
			Reason:                "Register every individual who owns 25% or more of the business: POST /beneficial-owners with ownershipPercentage",
			AcceptedDocumentTypes: []string{}})
	}
	document(c.CustomerID, ErrMissingLegalPresenceDoc, FormationDocuments, "A formation document")
	document(c.CustomerID, ErrMissingOwnershipDoc, OwnershipDocuments, "An ownership-structure document")
	if poa := newest(c.Documents, c.CustomerID, ProofOfAddressDocuments); poa == nil {
		document(c.CustomerID, ErrMissingProofOfAddressDoc, ProofOfAddressDocuments, "A proof of address dated within the last 3 months")
	} else if !recentProofOfAddress(c) {
		out = append(out, VerificationError{ResourceID: poa.ID, Type: ErrExpiredDocument, Field: "",
			Reason:                "The proof of address is older than 3 months; upload one dated within the last 3 months",
			AcceptedDocumentTypes: ProofOfAddressDocuments})
	}
	document(c.CustomerID, ErrMissingTaxIDDocument, TaxIDDocuments, "A tax-id document")
	return out
}

func recentProofOfAddress(c Case) bool {
	cutoff := c.Today.AddDate(0, -ProofOfAddressMaxAgeMonths, 0)
	for _, d := range c.Documents {
		if d.HolderID == c.CustomerID && slices.Contains(ProofOfAddressDocuments, d.DocumentType) &&
			!documentDate(d).Before(cutoff) {
			return true
		}
	}
	return false
}
