package httpapi

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// newVerifiedIndividual creates a complete individual named name with an
// identity document on file, and returns its id.
func (e *env) custCompleteIndividual(t *testing.T, name string) string {
	t.Helper()
	id := e.custCreate(t, custIndividual(name))["id"].(string)
	e.custDocument(t, id, "PASSPORT", "country", "US")
	return id
}

// R-SBX-09: on an unregulated sandbox platform every new customer stays
// UNVERIFIED until submitted, whatever its suffix; nothing is emitted.
func TestVerification_UnregulatedStaysUnverified_R_SBX_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for _, name := range []string{"Test User 001", "Test User 002", "Test User 003", "Test User"} {
			c := e.custCreate(t, custIndividual(name))
			if c["kycStatus"] != "UNVERIFIED" || len(e.custEvents(t, c["id"].(string))) != 0 {
				t.Fatalf("%s: %v", name, c["kycStatus"])
			}
		}
		b := e.custCreate(t, custBusiness("REG-001"))
		if b["kybStatus"] != "UNVERIFIED" {
			t.Fatalf("business %v", b["kybStatus"])
		}
	})
}

// R-SBX-10, R-SBX-11, R-CUST-26, R-CUST-27, R-CUST-28, R-CUST-31: an
// incomplete submission answers RESOLVE_ERRORS with one entry per problem;
// the verification is stored and listed.
func TestVerification_IncompleteSubmission_R_SBX_10_11(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.custCreate(t, cwith(custIndividual("Test User"), "birthDate", nil))
		id := c["id"].(string)
		r := e.custSubmit(t, id)
		expect(t, r, http.StatusOK, "")
		v := r.JSON(t)
		if v["verificationStatus"] != "RESOLVE_ERRORS" || v["customerId"] != id {
			t.Fatalf("%s", r.Body)
		}
		errs := v["errors"].([]any)
		if len(errs) != 2 {
			t.Fatalf("one entry per problem (birthDate, identity document): %s", r.Body)
		}
		for _, x := range errs {
			m := x.(map[string]any)
			for _, k := range []string{"resourceId", "type", "field", "reason", "acceptedDocumentTypes"} {
				if _, ok := m[k]; !ok {
					t.Errorf("entry without %s (R-CUST-27): %v", k, m)
				}
			}
			switch m["type"] {
			case "MISSING_FIELD":
				if m["field"] != "birthDate" || m["resourceId"] != id {
					t.Errorf("%v", m)
				}
			case "MISSING_IDENTITY_DOCUMENT":
				if custJoin(custStrings(m["acceptedDocumentTypes"])) != "PASSPORT,DRIVERS_LICENSE,NATIONAL_ID" {
					t.Errorf("accepted types (R-SBX-11): %v", m)
				}
			default:
				t.Errorf("unexpected %v", m)
			}
		}
		if e.custStatus(t, id) != "UNVERIFIED" || len(e.custEvents(t, id)) != 0 {
			t.Fatal("an incomplete submission changes nothing")
		}
		got := e.do("GET", "/verifications/"+v["id"].(string), nil)
		expect(t, got, http.StatusOK, "")
		if string(got.Body) != string(r.Body) {
			t.Fatalf("GET returns the verification:\n%s\n%s", got.Body, r.Body)
		}
		list := e.do("GET", "/verifications?customerId="+id, nil).JSON(t)
		if list["totalCount"].(float64) != 1 || list["hasMore"] != false {
			t.Fatalf("%v", list)
		}
		if n := e.do("GET", "/verifications?verificationStatus=APPROVED", nil).JSON(t)["totalCount"]; n.(float64) != 0 {
			t.Fatalf("status filter: %v", n)
		}
		expect(t, e.do("GET", "/verifications?verificationStatus=MAYBE", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("GET", "/verifications/Verification:0195a2f5-b3e7-7d02-8000-000000000001", nil), http.StatusNotFound, "VERIFICATION_NOT_FOUND")
		// Bad submissions.
		before := e.custRowCounts(t)
		r = e.do("POST", "/verifications", `{}`)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["customerId"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("POST", "/verifications", `{"customerId":"Customer:0195a2f5-b3e7-7d02-8000-000000000001"}`), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("POST", "/verifications", `{"customerId":"`+id+`","extra":1}`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/verifications", cobj{"customerId": id}, withCreds(e.production)), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		if e.custRowCounts(t) != before {
			t.Fatal("refused submissions left rows behind")
		}
	})
}

func custStrings(x any) []string {
	out := []string{}
	for _, s := range x.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// individualRow checks one row of the individual suffix table on an
// unregulated platform: a complete submission gives wantVerification and
// kycStatus wantStatus, with wantEvents.
func custIndividualRow(t *testing.T, e *env, name, wantVerification, wantStatus string, wantEvents ...string) (string, map[string]any) {
	t.Helper()
	id := e.custCompleteIndividual(t, name)
	r := e.custSubmit(t, id)
	expect(t, r, http.StatusOK, "")
	v := r.JSON(t)
	if v["verificationStatus"] != wantVerification {
		t.Fatalf("%s: verificationStatus %v, want %s: %s", name, v["verificationStatus"], wantVerification, r.Body)
	}
	if got := e.custStatus(t, id); got != wantStatus {
		t.Fatalf("%s: kycStatus %s, want %s", name, got, wantStatus)
	}
	if got := e.custEvents(t, id); !slices.Equal(got, append([]string{}, wantEvents...)) {
		t.Fatalf("%s: events %v, want %v (R-CUST-39)", name, got, wantEvents)
	}
	return id, v
}

// R-SBX-05: fullName suffix 001, complete data and identity document:
// PENDING_MANUAL_REVIEW, kycStatus PENDING, CUSTOMER.KYC_PENDING.
func TestVerification_Suffix001_R_SBX_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id, _ := custIndividualRow(t, e, "Test User 001", "PENDING_MANUAL_REVIEW", "PENDING", "CUSTOMER.KYC_PENDING")
		// PENDING is not final: submitting again is answered, not refused.
		r := e.custSubmit(t, id)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["verificationStatus"] != "PENDING_MANUAL_REVIEW" || len(e.custEvents(t, id)) != 1 {
			t.Fatalf("%s", r.Body)
		}
	})
}

// R-SBX-06, R-CUST-29, R-CUST-30: suffix 002 resolves REJECTED; further
// submissions are 400; renaming does not re-derive.
func TestVerification_Suffix002_R_SBX_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id, v := custIndividualRow(t, e, "Test User 002", "REJECTED", "REJECTED", "CUSTOMER.KYC_REJECTED")
		if len(v["errors"].([]any)) != 0 {
			t.Fatalf("%v", v)
		}
		before := e.custRowCounts(t)
		expect(t, e.custSubmit(t, id), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/customers/"+id, `{"fullName":"Test User"}`), http.StatusOK, "")
		if e.custStatus(t, id) != "REJECTED" || len(e.custEvents(t, id)) != 1 {
			t.Fatal("renaming does not re-derive a final status")
		}
		expect(t, e.custSubmit(t, id), http.StatusBadRequest, "INVALID_INPUT")
		if e.custRowCounts(t) != before {
			t.Fatal("refused submissions stored verifications")
		}
	})
}

// R-SBX-07: suffix 003 with complete data: RESOLVE_ERRORS with a
// POOR_QUALITY_DOCUMENT error about the identity document; UNVERIFIED.
func TestVerification_Suffix003_R_SBX_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id, v := custIndividualRow(t, e, "Test User 003", "RESOLVE_ERRORS", "UNVERIFIED")
		errs := v["errors"].([]any)
		if len(errs) != 1 {
			t.Fatalf("%v", v)
		}
		m := errs[0].(map[string]any)
		docs := e.custDocs(t, id)
		if m["type"] != "POOR_QUALITY_DOCUMENT" || m["resourceId"] != docs[0] {
			t.Fatalf("%v (documents %v)", m, docs)
		}
	})
}

// R-SBX-08, R-CUST-29, R-CUST-30: any other suffix resolves APPROVED;
// further submissions are 400; a rename to 002 leaves it APPROVED.
func TestVerification_SuffixOther_R_SBX_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id, _ := custIndividualRow(t, e, "Test User", "APPROVED", "APPROVED", "CUSTOMER.KYC_APPROVED")
		expect(t, e.custSubmit(t, id), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/customers/"+id, `{"fullName":"Test User 002"}`), http.StatusOK, "")
		if e.custStatus(t, id) != "APPROVED" {
			t.Fatal("R-CUST-30")
		}
		expect(t, e.custSubmit(t, id), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-SBX-12, R-SBX-13: on a regulated platform, or with
// skipVerificationPaperwork on, the suffix resolves at creation with no
// documents; 001 and 003 still need a complete packet on submission.
func TestVerification_ResolveAtCreation_R_SBX_12_13(t *testing.T) {
	modes := map[string]func(*testing.T, *env){
		"regulated":      func(t *testing.T, e *env) { e.custRegulated(t) },
		"skipPaperwork":  func(t *testing.T, e *env) { e.custSkipPaperwork(t, true) },
		"skipAndRegular": func(t *testing.T, e *env) { e.custRegulated(t); e.custSkipPaperwork(t, false) },
	}
	for mode, setup := range modes {
		t.Run(mode, func(t *testing.T) {
			eachEnv(t, func(t *testing.T, e *env) {
				setup(t, e)
				rows := []struct{ name, status, event string }{
					{"Test User 001", "PENDING", "CUSTOMER.KYC_PENDING"},
					{"Test User 002", "REJECTED", "CUSTOMER.KYC_REJECTED"},
					{"Test User 003", "UNVERIFIED", ""},
					{"Test User", "APPROVED", "CUSTOMER.KYC_APPROVED"},
				}
				ids := map[string]string{}
				for _, row := range rows {
					// No documents, and data incomplete (no birthDate).
					c := e.custCreate(t, cwith(custIndividual(row.name), "birthDate", nil))
					id := c["id"].(string)
					ids[row.name] = id
					if c["kycStatus"] != row.status {
						t.Fatalf("%s: created %v, want %s", row.name, c["kycStatus"], row.status)
					}
					want := []string{}
					if row.event != "" {
						want = append(want, row.event)
					}
					if got := e.custEvents(t, id); !slices.Equal(got, want) {
						t.Fatalf("%s: events %v, want %v", row.name, got, want)
					}
				}
				// 002 and other are final.
				expect(t, e.custSubmit(t, ids["Test User 002"]), http.StatusBadRequest, "INVALID_INPUT")
				expect(t, e.custSubmit(t, ids["Test User"]), http.StatusBadRequest, "INVALID_INPUT")
				// 001 and 003 submitted incomplete: RESOLVE_ERRORS (R-SBX-13).
				for _, name := range []string{"Test User 001", "Test User 003"} {
					v := e.custSubmit(t, ids[name]).JSON(t)
					if v["verificationStatus"] != "RESOLVE_ERRORS" || custJoin(custErrorTypes(v)) != "MISSING_FIELD,MISSING_IDENTITY_DOCUMENT" {
						t.Fatalf("%s: %v", name, v)
					}
					expect(t, e.do("PATCH", "/customers/"+ids[name], `{"birthDate":"1990-01-15"}`), http.StatusOK, "")
					e.custDocument(t, ids[name], "DRIVERS_LICENSE", "side", "FRONT")
				}
				v := e.custSubmit(t, ids["Test User 001"]).JSON(t)
				if v["verificationStatus"] != "PENDING_MANUAL_REVIEW" || e.custStatus(t, ids["Test User 001"]) != "PENDING" {
					t.Fatalf("001 complete: %v", v)
				}
				v = e.custSubmit(t, ids["Test User 003"]).JSON(t)
				if v["verificationStatus"] != "RESOLVE_ERRORS" || custJoin(custErrorTypes(v)) != "POOR_QUALITY_DOCUMENT" ||
					e.custStatus(t, ids["Test User 003"]) != "UNVERIFIED" {
					t.Fatalf("003 complete: %v", v)
				}
			})
		})
	}
}

// skipVerificationPaperwork is a sandbox setting, off by default, that
// production cannot turn on.
func TestVerification_SkipPaperworkConfig(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		if c := e.do("GET", "/config", nil).JSON(t); c["skipVerificationPaperwork"] != false {
			t.Fatalf("default off: %v", c["skipVerificationPaperwork"])
		}
		e.custSkipPaperwork(t, true)
		if c := e.do("GET", "/config", nil).JSON(t); c["skipVerificationPaperwork"] != true {
			t.Fatal("on")
		}
		r := e.do("PATCH", "/config", `{"skipVerificationPaperwork":true}`, withCreds(e.production))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/config", `{"skipVerificationPaperwork":false}`, withCreds(e.production)), http.StatusOK, "")
		// Turning it off again: new customers wait for paperwork.
		e.custSkipPaperwork(t, false)
		if c := e.custCreate(t, custIndividual("Test User")); c["kycStatus"] != "UNVERIFIED" {
			t.Fatalf("%v", c["kycStatus"])
		}
	})
}

// Production has no KYC provider configured: submissions are refused
// clearly (503 NOT_READY), nothing is stored.
func TestVerification_ProductionWithoutProvider(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("POST", "/customers", custIndividual("Test User"), withCreds(e.production))
		expect(t, r, http.StatusCreated, "")
		c := r.JSON(t)
		if c["kycStatus"] != "UNVERIFIED" {
			t.Fatalf("%v", c)
		}
		before := e.custRowCounts(t)
		expect(t, e.do("POST", "/verifications", cobj{"customerId": c["id"]}, withCreds(e.production)), http.StatusServiceUnavailable, "NOT_READY")
		if e.custRowCounts(t) != before {
			t.Fatal("a refused submission stored something")
		}
	})
}

// R-CUST-32: a bare business submission names every gap of the KYB packet.
func TestVerification_BusinessPacket_R_CUST_32(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		b := e.custCreate(t, cobj{"customerType": "BUSINESS", "businessInfo": cobj{"legalName": "Bare LLC"}})
		id := b["id"].(string)
		v := e.custSubmit(t, id).JSON(t)
		want := "MISSING_FIELD,MISSING_FIELD,MISSING_CONTROL_PERSON,MISSING_BENEFICIAL_OWNER,MISSING_LEGAL_PRESENCE_DOCUMENT," +
			"MISSING_OWNERSHIP_STRUCTURE_DOCUMENT,MISSING_PROOF_OF_ADDRESS_DOCUMENT,MISSING_TAX_ID_DOCUMENT"
		if v["verificationStatus"] != "RESOLVE_ERRORS" || custJoin(custErrorTypes(v)) != want {
			t.Fatalf("got %v\nwant %s", custErrorTypes(v), want)
		}
		// An owner with gaps, and a proof of address older than 3 months.
		o := e.custCreateOwner(t, cobj{"customerId": id, "roles": []string{"CONTROL_PERSON", "UBO"}, "ownershipPercentage": 60,
			"personalInfo": cobj{"firstName": "Ann", "lastName": "Owner"}})
		expect(t, e.do("PATCH", "/customers/"+id, cobj{"address": custAddress, "businessInfo": cobj{"taxId": "12-3456789"}}), http.StatusOK, "")
		old := time.Now().UTC().AddDate(0, -4, 0).Format(time.DateOnly)
		for _, typ := range []string{"ARTICLES_OF_ASSOCIATION", "TRUST_AGREEMENT", "TAX_ID_CERTIFICATE"} {
			e.custDocument(t, id, typ)
		}
		poa := e.custDocument(t, id, "BANK_STATEMENT", "issuedOn", old)
		v = e.custSubmit(t, id).JSON(t)
		oid := o["id"].(string)
		got := []string{}
		for _, x := range v["errors"].([]any) {
			m := x.(map[string]any)
			got = append(got, m["type"].(string)+":"+m["field"].(string))
			switch m["type"] {
			case "MISSING_FIELD", "MISSING_IDENTITY_DOCUMENT":
				if m["resourceId"] != oid {
					t.Errorf("owner gaps name the owner: %v", m)
				}
			case "EXPIRED_DOCUMENT":
				if m["resourceId"] != poa {
					t.Errorf("expired proof of address names the document: %v", m)
				}
			}
		}
		want = "MISSING_FIELD:personalInfo.birthDate,MISSING_FIELD:personalInfo.idType,MISSING_FIELD:personalInfo.identifier," +
			"MISSING_FIELD:personalInfo.address,MISSING_IDENTITY_DOCUMENT:,EXPIRED_DOCUMENT:"
		if custJoin(got) != want {
			t.Fatalf("got %v\nwant %s", got, want)
		}
		// Complete it: approved.
		expect(t, e.do("PATCH", "/beneficial-owners/"+oid, cobj{"personalInfo": custOwner(id, "Owner", 60)["personalInfo"]}), http.StatusOK, "")
		e.custDocument(t, oid, "NATIONAL_ID")
		e.custDocument(t, id, "UTILITY_BILL", "issuedOn", time.Now().UTC().AddDate(0, -2, 0).Format(time.DateOnly))
		v = e.custSubmit(t, id).JSON(t)
		if v["verificationStatus"] != "APPROVED" || e.custStatus(t, id) != "APPROVED" {
			t.Fatalf("%v", v)
		}
		if got := e.custEvents(t, id); custJoin(got) != "CUSTOMER.KYB_APPROVED" {
			t.Fatalf("KYB events (R-CUST-39): %v", got)
		}
		if ow := e.do("GET", "/beneficial-owners/"+oid, nil).JSON(t); ow["kycStatus"] != "APPROVED" {
			t.Fatalf("owner status: %v", ow["kycStatus"])
		}
	})
}

// businessWithPacket creates a business with registration number reg, one
// complete controlling owner named ownerLast, and every document.
func (e *env) custBusinessWithPacket(t *testing.T, reg, ownerLast string) (string, string) {
	t.Helper()
	id := e.custCreate(t, custBusiness(reg))["id"].(string)
	oid := e.custCreateOwner(t, custOwner(id, ownerLast, 100, "CONTROL_PERSON", "UBO"))["id"].(string)
	e.custCompletePacket(t, id, oid)
	return id, oid
}

// R-SBX-14: a business's outcome is read from registrationNumber; 002
// reports errors first, then rejects.
func TestVerification_BusinessSuffixTable_R_SBX_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id, _ := e.custBusinessWithPacket(t, "REG-001", "Smith")
		if v := e.custSubmit(t, id).JSON(t); v["verificationStatus"] != "PENDING_MANUAL_REVIEW" || e.custStatus(t, id) != "PENDING" ||
			custJoin(e.custEvents(t, id)) != "CUSTOMER.KYB_PENDING" {
			t.Fatalf("001: %v", v)
		}

		id, _ = e.custBusinessWithPacket(t, "REG-002", "Smith")
		v := e.custSubmit(t, id).JSON(t)
		if v["verificationStatus"] != "RESOLVE_ERRORS" || custJoin(custErrorTypes(v)) != "INVALID_FIELD" || e.custStatus(t, id) != "UNVERIFIED" {
			t.Fatalf("002 first submission reports errors: %v", v)
		}
		if v = e.custSubmit(t, id).JSON(t); v["verificationStatus"] != "REJECTED" || e.custStatus(t, id) != "REJECTED" ||
			custJoin(e.custEvents(t, id)) != "CUSTOMER.KYB_REJECTED" {
			t.Fatalf("002 then rejects: %v", v)
		}
		expect(t, e.custSubmit(t, id), http.StatusBadRequest, "INVALID_INPUT")

		id, _ = e.custBusinessWithPacket(t, "REG-003", "Smith")
		v = e.custSubmit(t, id).JSON(t)
		docs := e.custDocs(t, id)
		if v["verificationStatus"] != "RESOLVE_ERRORS" || custJoin(custErrorTypes(v)) != "POOR_QUALITY_DOCUMENT" ||
			v["errors"].([]any)[0].(map[string]any)["resourceId"] != docs[0] || e.custStatus(t, id) != "UNVERIFIED" {
			t.Fatalf("003 names the formation document %s: %v", docs[0], v)
		}

		id, _ = e.custBusinessWithPacket(t, "REG-777", "Smith")
		if v = e.custSubmit(t, id).JSON(t); v["verificationStatus"] != "APPROVED" || e.custStatus(t, id) != "APPROVED" {
			t.Fatalf("other: %v", v)
		}
		expect(t, e.custSubmit(t, id), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-SBX-15: a beneficial owner's lastName suffix affects the business.
func TestVerification_OwnerSuffix_R_SBX_15(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cases := []struct{ last, verification, status, ownerStatus string }{
			{"Smith 001", "PENDING_MANUAL_REVIEW", "PENDING", "PENDING"},
			{"Smith 002", "REJECTED", "REJECTED", "REJECTED"},
			{"Smith 003", "RESOLVE_ERRORS", "UNVERIFIED", "UNVERIFIED"},
			{"Smith", "APPROVED", "APPROVED", "APPROVED"},
		}
		for _, c := range cases {
			id, oid := e.custBusinessWithPacket(t, "REG-555", c.last)
			v := e.custSubmit(t, id).JSON(t)
			if v["verificationStatus"] != c.verification || e.custStatus(t, id) != c.status {
				t.Fatalf("%s: %v, %s", c.last, v, e.custStatus(t, id))
			}
			if ow := e.do("GET", "/beneficial-owners/"+oid, nil).JSON(t); ow["kycStatus"] != c.ownerStatus {
				t.Fatalf("%s: owner %v", c.last, ow["kycStatus"])
			}
			if c.verification == "RESOLVE_ERRORS" {
				m := v["errors"].([]any)[0].(map[string]any)
				if m["type"] != "POOR_QUALITY_DOCUMENT" || m["resourceId"] == id {
					t.Fatalf("003 names the owner's document: %v", m)
				}
			}
		}
	})
}

// R-SBX-12, R-SBX-14, R-SBX-15 on a regulated platform: businesses resolve at
// creation (002 waits for its first submission), and owners count at once.
func TestVerification_RegulatedBusiness_R_SBX_12_14_15(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.custRegulated(t)
		for reg, want := range map[string]string{"A-001": "PENDING", "A-002": "UNVERIFIED", "A-003": "UNVERIFIED", "A-999": "APPROVED"} {
			if got := e.custCreate(t, custBusiness(reg))["kybStatus"]; got != want {
				t.Fatalf("%s: %v, want %s", reg, got, want)
			}
		}
		// 002: errors first (no packet needed in this mode), then rejected.
		id := e.custCreate(t, custBusiness("B-002"))["id"].(string)
		if v := e.custSubmit(t, id).JSON(t); custJoin(custErrorTypes(v)) != "INVALID_FIELD" {
			t.Fatalf("%v", v)
		}
		if v := e.custSubmit(t, id).JSON(t); v["verificationStatus"] != "REJECTED" {
			t.Fatalf("%v", v)
		}
		// An owner whose name ends in 002 rejects a business still pending.
		id = e.custCreate(t, custBusiness("C-001"))["id"].(string)
		o := e.custCreateOwner(t, custOwner(id, "Doe 002", 30, "UBO"))
		if o["kycStatus"] != "REJECTED" || e.custStatus(t, id) != "REJECTED" {
			t.Fatalf("owner %v, business %s", o["kycStatus"], e.custStatus(t, id))
		}
		if got := e.custEvents(t, id); custJoin(got) != "CUSTOMER.KYB_PENDING,CUSTOMER.KYB_REJECTED" {
			t.Fatalf("%v", got)
		}
	})
}

func (e *env) custDocs(t *testing.T, customerID string) []string {
	t.Helper()
	docs, err := e.db.Read().CustomerDocuments(t.Context(), e.custTenant(), customerID)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}
