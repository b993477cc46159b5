package customers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

func sp(s string) *string { return &s }

var today0 = time.Date(2025, 10, 13, 0, 0, 0, 0, time.UTC)

func addr() *Address {
	return &Address{Line1: sp("1 Main St"), City: sp("Springfield"), PostalCode: sp("62701"), Country: sp("US")}
}

func doc(id, holder, typ string) store.CustomerDocument {
	return store.CustomerDocument{ID: id, HolderID: holder, DocumentType: typ, CreatedAt: today0}
}

// individualCase is a complete individual named name, with a passport.
func individualCase(name string, paperwork bool) Case {
	return Case{CustomerID: "Customer:c", Type: Individual, Status: StatusUnverified, Today: today0, PaperworkRequired: paperwork,
		Profile:   Profile{FullName: sp(name), BirthDate: sp("1990-01-15"), Nationality: sp("US"), Address: addr()},
		Documents: []store.CustomerDocument{doc("Document:1", "Customer:c", "PASSPORT")}}
}

func completeOwner(id, last string, pct int, roles ...string) OwnerCase {
	return OwnerCase{ID: id, Roles: roles, OwnershipPercentage: pct, PersonalInfo: PersonalInfo{FirstName: sp("O"), LastName: sp(last),
		BirthDate: sp("1970-01-01"), Address: addr(), IDType: sp("SSN"), Identifier: sp("123456789")}}
}

// businessCase is a complete business with registration number reg and one
// controlling owner per last name.
func businessCase(reg string, paperwork bool, ownerLastNames ...string) Case {
	c := Case{CustomerID: "Customer:b", Type: Business, Status: StatusUnverified, Today: today0, PaperworkRequired: paperwork,
		Profile: Profile{Address: addr(), BusinessInfo: &BusinessInfo{LegalName: sp("Acme"), TaxID: sp("12-3456789"), RegistrationNumber: sp(reg)}},
		Documents: []store.CustomerDocument{doc("Document:f", "Customer:b", "CERTIFICATE_OF_INCORPORATION"),
			doc("Document:o", "Customer:b", "SHAREHOLDER_REGISTER"), doc("Document:p", "Customer:b", "UTILITY_BILL"),
			doc("Document:t", "Customer:b", "TAX_ID_CERTIFICATE")}}
	for i, last := range ownerLastNames {
		id := fmt.Sprintf("BeneficialOwner:%d", i)
		c.Owners = append(c.Owners, completeOwner(id, last, 100/len(ownerLastNames), "CONTROL_PERSON", "UBO"))
		c.Documents = append(c.Documents, doc(fmt.Sprintf("Document:id%d", i), id, "PASSPORT"))
	}
	return c
}

func summary(d Decision) string {
	types := []string{}
	for _, e := range d.Errors {
		types = append(types, e.Type)
	}
	return d.Status + "/" + d.VerificationStatus + "/" + strings.Join(types, ",")
}

// R-SBX-04..08, R-SBX-09: the individual suffix table on an unregulated
// platform, with complete data and an identity document.
func TestSandbox_IndividualSuffixTable_R_SBX_04_08(t *testing.T) {
	rows := map[string]string{
		"Test User 001":  "PENDING/PENDING_MANUAL_REVIEW/",
		"Test User 002":  "REJECTED/REJECTED/",
		"Test User 003":  "UNVERIFIED/RESOLVE_ERRORS/POOR_QUALITY_DOCUMENT",
		"Test User":      "APPROVED/APPROVED/",
		"Test 1001":      "PENDING/PENDING_MANUAL_REVIEW/",
		"003 Test":       "APPROVED/APPROVED/",
		"Test User 002 ": "REJECTED/REJECTED/",
	}
	for name, want := range rows {
		c := individualCase(name, true)
		d, err := SandboxProvider{}.Submit(context.Background(), c)
		if err != nil || summary(d) != want {
			t.Errorf("%q: %s, want %s (%v)", name, summary(d), want, err)
		}
		if _, ok, _ := (SandboxProvider{}).Resolve(context.Background(), c); ok {
			t.Errorf("%q: nothing resolves without a submission where paperwork is required (R-SBX-09)", name)
		}
	}
	// The poor-quality error names the identity document.
	d, _ := SandboxProvider{}.Submit(context.Background(), individualCase("X 003", true))
	if e := d.Errors[0]; e.ResourceID != "Document:1" || strings.Join(e.AcceptedDocumentTypes, ",") != "PASSPORT,DRIVERS_LICENSE,NATIONAL_ID" {
		t.Fatalf("%+v", e)
	}
}

// R-SBX-10, R-SBX-11, R-SBX-13: incomplete submissions report one entry per
// problem; in resolve-at-creation mode only 001 and 003 need the packet.
func TestSandbox_IncompletePacket_R_SBX_10_11_13(t *testing.T) {
	for _, paperwork := range []bool{true, false} {
		for name, want := range map[string]string{
			"A 001": "UNVERIFIED/RESOLVE_ERRORS/MISSING_FIELD,MISSING_IDENTITY_DOCUMENT",
			"A 003": "UNVERIFIED/RESOLVE_ERRORS/MISSING_FIELD,MISSING_IDENTITY_DOCUMENT",
			"A 002": "UNVERIFIED/RESOLVE_ERRORS/MISSING_FIELD,MISSING_IDENTITY_DOCUMENT",
			"A":     "UNVERIFIED/RESOLVE_ERRORS/MISSING_FIELD,MISSING_IDENTITY_DOCUMENT",
		} {
			c := individualCase(name, paperwork)
			c.Profile.BirthDate, c.Documents = nil, nil
			if !paperwork {
				switch name {
				case "A 002":
					want = "REJECTED/REJECTED/"
				case "A":
					want = "APPROVED/APPROVED/"
				}
			}
			d, _ := SandboxProvider{}.Submit(context.Background(), c)
			if summary(d) != want {
				t.Errorf("paperwork=%v %q: %s, want %s", paperwork, name, summary(d), want)
			}
		}
	}
	c := individualCase("A", true)
	c.Profile = Profile{FullName: sp("A"), Address: &Address{Line1: sp("x")}}
	var fields []string
	for _, e := range Packet(c) {
		fields = append(fields, e.Type+":"+e.Field)
	}
	if got := strings.Join(fields, " "); got != "MISSING_FIELD:birthDate MISSING_FIELD:nationality MISSING_FIELD:address.city "+
		"MISSING_FIELD:address.postalCode MISSING_FIELD:address.country" {
		t.Fatal(got)
	}
}

// R-SBX-12: on regulated platforms or with skip-paperwork on, the suffix
// resolves without documents.
func TestSandbox_ResolveAtCreation_R_SBX_12(t *testing.T) {
	for name, want := range map[string]string{"B 001": StatusPending, "B 002": StatusRejected, "B 003": StatusUnverified, "B": StatusApproved} {
		c := Case{CustomerID: "Customer:c", Type: Individual, Status: StatusUnverified, Profile: Profile{FullName: sp(name)}}
		d, ok, err := SandboxProvider{}.Resolve(context.Background(), c)
		if err != nil || !ok || d.Status != want {
			t.Errorf("%s: %s, want %s", name, d.Status, want)
		}
	}
	for reg, want := range map[string]string{"R001": StatusPending, "R002": StatusUnverified, "R003": StatusUnverified, "R": StatusApproved} {
		c := Case{CustomerID: "Customer:b", Type: Business, Profile: Profile{BusinessInfo: &BusinessInfo{RegistrationNumber: sp(reg)}}}
		if d, _, _ := (SandboxProvider{}).Resolve(context.Background(), c); d.Status != want {
			t.Errorf("%s: %s, want %s", reg, d.Status, want)
		}
		c.RegistryErrorReported = true
		if d, _, _ := (SandboxProvider{}).Resolve(context.Background(), c); reg == "R002" && d.Status != StatusRejected {
			t.Errorf("002 after its errors were reported: %s", d.Status)
		}
	}
	// Owners count at once too (R-SBX-15).
	c := Case{CustomerID: "Customer:b", Type: Business, Profile: Profile{BusinessInfo: &BusinessInfo{RegistrationNumber: sp("R")}},
		Owners: []OwnerCase{completeOwner("BeneficialOwner:1", "Doe 001", 50, "UBO"), completeOwner("BeneficialOwner:2", "Roe", 50, "UBO")}}
	d, _, _ := SandboxProvider{}.Resolve(context.Background(), c)
	if d.Status != StatusPending || d.OwnerStatuses["BeneficialOwner:1"] != StatusPending || d.OwnerStatuses["BeneficialOwner:2"] != StatusApproved {
		t.Fatalf("%+v", d)
	}
}

// R-SBX-14, R-SBX-15: businesses read registrationNumber (002 reports errors
// first) and every owner's lastName; the worst outcome wins.
func TestSandbox_BusinessSuffixTable_R_SBX_14_15(t *testing.T) {
	rows := []struct {
		reg    string
		owners []string
		want   string
	}{
		{"R-001", []string{"Smith"}, "PENDING/PENDING_MANUAL_REVIEW/"},
		{"R-002", []string{"Smith"}, "UNVERIFIED/RESOLVE_ERRORS/INVALID_FIELD"},
		{"R-003", []string{"Smith"}, "UNVERIFIED/RESOLVE_ERRORS/POOR_QUALITY_DOCUMENT"},
		{"R-9", []string{"Smith"}, "APPROVED/APPROVED/"},
		{"R-9", []string{"Smith 001"}, "PENDING/PENDING_MANUAL_REVIEW/"},
		{"R-9", []string{"Smith 002"}, "REJECTED/REJECTED/"},
		{"R-9", []string{"Smith 003"}, "UNVERIFIED/RESOLVE_ERRORS/POOR_QUALITY_DOCUMENT"},
		{"R-001", []string{"Smith 002"}, "REJECTED/REJECTED/"},
		{"R-001", []string{"Smith 003"}, "UNVERIFIED/RESOLVE_ERRORS/POOR_QUALITY_DOCUMENT"},
		{"R-003", []string{"Smith 003", "Jones 003"}, "UNVERIFIED/RESOLVE_ERRORS/POOR_QUALITY_DOCUMENT,POOR_QUALITY_DOCUMENT,POOR_QUALITY_DOCUMENT"},
		{"R-002", []string{"Smith 001"}, "UNVERIFIED/RESOLVE_ERRORS/INVALID_FIELD"},
	}
	for _, paperwork := range []bool{true, false} {
		for _, r := range rows {
			c := businessCase(r.reg, paperwork, r.owners...)
			d, err := SandboxProvider{}.Submit(context.Background(), c)
			if err != nil || summary(d) != r.want {
				t.Errorf("paperwork=%v %s %v: %s, want %s", paperwork, r.reg, r.owners, summary(d), r.want)
			}
		}
	}
	// 002: errors first, then rejected.
	c := businessCase("R-002", true, "Smith")
	d, _ := SandboxProvider{}.Submit(context.Background(), c)
	if !d.RegistryErrorReported || d.Errors[0].Field != "businessInfo.registrationNumber" {
		t.Fatalf("%+v", d)
	}
	c.RegistryErrorReported = true
	if d, _ = (SandboxProvider{}).Submit(context.Background(), c); summary(d) != "REJECTED/REJECTED/" || d.OwnerStatuses["BeneficialOwner:0"] != StatusApproved {
		t.Fatalf("%+v", d)
	}
	// 003 names the business's formation document, and an owner's passport.
	d, _ = SandboxProvider{}.Submit(context.Background(), businessCase("R-003", true, "Smith 003"))
	if d.Errors[0].ResourceID != "Document:f" || d.Errors[1].ResourceID != "Document:id0" {
		t.Fatalf("%+v", d.Errors)
	}
}

// R-CUST-32: what a business packet needs.
func TestPacket_Business_R_CUST_32(t *testing.T) {
	bare := Case{CustomerID: "Customer:b", Type: Business, Today: today0, Profile: Profile{BusinessInfo: &BusinessInfo{LegalName: sp("B")}}}
	var got []string
	for _, e := range Packet(bare) {
		got = append(got, e.Type)
	}
	want := "MISSING_FIELD,MISSING_FIELD,MISSING_CONTROL_PERSON,MISSING_BENEFICIAL_OWNER,MISSING_LEGAL_PRESENCE_DOCUMENT," +
		"MISSING_OWNERSHIP_STRUCTURE_DOCUMENT,MISSING_PROOF_OF_ADDRESS_DOCUMENT,MISSING_TAX_ID_DOCUMENT"
	if strings.Join(got, ",") != want {
		t.Fatalf("%v", got)
	}
	c := businessCase("R", true, "Smith")
	if errs := Packet(c); len(errs) != 0 {
		t.Fatalf("complete: %+v", errs)
	}
	// A 10% director is neither control person nor major owner: no data needed.
	c.Owners = append(c.Owners, OwnerCase{ID: "BeneficialOwner:minor", Roles: []string{"DIRECTOR"}, OwnershipPercentage: 10})
	if errs := Packet(c); len(errs) != 0 {
		t.Fatalf("minor owner: %+v", errs)
	}
	// The control person and the 25% owner may be different people; each needs an id document.
	c = businessCase("R", true)
	c.Owners = []OwnerCase{completeOwner("BeneficialOwner:ctl", "C", 0, "CONTROL_PERSON"), completeOwner("BeneficialOwner:ubo", "U", 25, "UBO")}
	c.Documents = append(c.Documents, doc("Document:x", "BeneficialOwner:ctl", "PASSPORT"))
	errs := Packet(c)
	if len(errs) != 1 || errs[0].Type != ErrMissingIdentityDocument || errs[0].ResourceID != "BeneficialOwner:ubo" {
		t.Fatalf("%+v", errs)
	}
	// Proof of address: dated within 3 months; without a date, the upload date counts.
	c = businessCase("R", true, "Smith")
	for i := range c.Documents {
		if c.Documents[i].DocumentType == "UTILITY_BILL" {
			old := today0.AddDate(0, -3, -1).Format(time.DateOnly)
			c.Documents[i].IssuedOn = &old
		}
	}
	if errs := Packet(c); len(errs) != 1 || errs[0].Type != ErrExpiredDocument || errs[0].ResourceID != "Document:p" {
		t.Fatalf("%+v", errs)
	}
	edge := today0.AddDate(0, -3, 0).Format(time.DateOnly)
	c.Documents = append(c.Documents, store.CustomerDocument{ID: "Document:q", HolderID: "Customer:b", DocumentType: "BANK_STATEMENT", IssuedOn: &edge})
	if errs := Packet(c); len(errs) != 0 {
		t.Fatalf("exactly 3 months old is recent enough: %+v", errs)
	}
	// A tax return proves both the address and the tax id.
	c = businessCase("R", true, "Smith")
	c.Documents = []store.CustomerDocument{doc("Document:f", "Customer:b", "ARTICLES_OF_INCORPORATION"),
		doc("Document:o", "Customer:b", "PARTNERSHIP_AGREEMENT"), doc("Document:r", "Customer:b", "TAX_RETURN"), doc("Document:i", "BeneficialOwner:0", "DRIVERS_LICENSE")}
	if errs := Packet(c); len(errs) != 0 {
		t.Fatalf("%+v", errs)
	}
}

// The verification state machine: every row of transitions, and nothing
// leaves a final status (R-CUST-29).
func TestTransitions_R_CUST_29(t *testing.T) {
	want := map[string]string{
		"UNVERIFIED>PENDING": "ok", "UNVERIFIED>APPROVED": "ok", "UNVERIFIED>REJECTED": "ok",
		"PENDING>UNVERIFIED": "ok", "PENDING>APPROVED": "ok", "PENDING>REJECTED": "ok",
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			if from == to {
				continue
			}
			if got := CanTransition(from, to); got != (want[from+">"+to] == "ok") {
				t.Errorf("%s > %s: %v", from, to, got)
			}
			row := store.Customer{ID: "Customer:x", Status: from}
			changed, err := setStatus(&row, to)
			if (err == nil) != CanTransition(from, to) || (err == nil && (!changed || row.Status != to)) {
				t.Errorf("setStatus %s > %s: %v %v", from, to, changed, err)
			}
		}
	}
	review := "Verification:1"
	row := store.Customer{Status: StatusPending, ReviewVerificationID: &review}
	if _, err := setStatus(&row, StatusApproved); err != nil || row.ReviewVerificationID != nil {
		t.Fatal("leaving PENDING ends the review")
	}
}
