package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// R-CUST-36: beneficial owner CRUD round trip.
func TestOwners_CRUD_R_CUST_36(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id := e.custCreate(t, custBusiness("REG-1"))["id"].(string)
		o := e.custCreateOwner(t, custOwner(id, "Smith", 40, "UBO", "DIRECTOR"))
		oid := o["id"].(string)
		if !strings.HasPrefix(oid, "BeneficialOwner:") || o["customerId"] != id || o["kycStatus"] != "UNVERIFIED" ||
			o["ownershipPercentage"].(float64) != 40 || o["personalInfo"].(map[string]any)["lastName"] != "Smith" {
			t.Fatalf("%v", o)
		}
		got := e.do("GET", "/beneficial-owners/"+oid, nil)
		expect(t, got, http.StatusOK, "")
		second := e.custCreateOwner(t, custOwner(id, "Jones", 10, "COMPANY_OFFICER"))
		other := e.custCreate(t, custBusiness("REG-2"))["id"].(string)
		e.custCreateOwner(t, custOwner(other, "Else", 0, "DIRECTOR"))
		list := e.do("GET", "/beneficial-owners?customerId="+id, nil).JSON(t)
		if list["totalCount"].(float64) != 2 {
			t.Fatalf("%v", list)
		}
		if all := e.do("GET", "/beneficial-owners?limit=1", nil).JSON(t); all["totalCount"].(float64) != 3 || all["hasMore"] != true {
			t.Fatalf("%v", all)
		}
		r := e.do("PATCH", "/beneficial-owners/"+oid, `{"roles":["UBO","CONTROL_PERSON"],"ownershipPercentage":45,"personalInfo":{"middleName":"Q","address":{"city":"Chicago"}}}`)
		expect(t, r, http.StatusOK, "")
		p := r.JSON(t)
		pi := p["personalInfo"].(map[string]any)
		if fmt.Sprint(p["roles"]) != "[UBO CONTROL_PERSON]" || p["ownershipPercentage"].(float64) != 45 || pi["middleName"] != "Q" ||
			pi["lastName"] != "Smith" || pi["address"].(map[string]any)["city"] != "Chicago" || pi["address"].(map[string]any)["line1"] != "1 Main St" {
			t.Fatalf("%v", p)
		}
		expect(t, e.do("DELETE", "/beneficial-owners/"+second["id"].(string), nil), http.StatusNoContent, "")
		expect(t, e.do("GET", "/beneficial-owners/"+second["id"].(string), nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("DELETE", "/beneficial-owners/"+second["id"].(string), nil), http.StatusNotFound, "NOT_FOUND")
		if n := e.do("GET", "/beneficial-owners?customerId="+id, nil).JSON(t)["totalCount"]; n.(float64) != 1 {
			t.Fatalf("%v", n)
		}
		// Another tenant's owner is not found; a deleted customer's owners vanish.
		expect(t, e.do("GET", "/beneficial-owners/"+oid, nil, withCreds(e.production)), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("DELETE", "/customers/"+id, nil), http.StatusOK, "")
		expect(t, e.do("GET", "/beneficial-owners/"+oid, nil), http.StatusNotFound, "NOT_FOUND")
	})
}

// Bad owners are refused precisely and leave no rows.
func TestOwners_Validation_R_ERR_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		biz := e.custCreate(t, custBusiness("REG-1"))["id"].(string)
		ind := e.custCreate(t, custIndividual("Jane Doe"))["id"].(string)
		e.custCreateOwner(t, custOwner(biz, "Big", 80, "UBO"))
		before := e.custRowCounts(t)
		cases := []struct {
			body any
			want map[string]string
		}{
			{`{}`, map[string]string{"customerId": "required", "roles": "required", "personalInfo": "required"}},
			{cobj{"customerId": biz, "roles": []string{}, "ownershipPercentage": 101, "personalInfo": cobj{"firstName": ""}},
				map[string]string{"roles": "minLength", "ownershipPercentage": "maximum", "personalInfo.firstName": "minLength",
					"personalInfo.lastName": "required"}},
			{cobj{"customerId": biz, "roles": []string{"UBO", "KING"}, "personalInfo": cobj{"firstName": "A", "lastName": "B", "birthDate": "1970-02-31", "idType": "SSN"}},
				map[string]string{"roles[1]": "enum", "ownershipPercentage": "required", "personalInfo.birthDate": "format", "personalInfo.identifier": "required"}},
			{cobj{"customerId": ind, "roles": []string{"DIRECTOR"}, "personalInfo": cobj{"firstName": "A", "lastName": "B"}},
				map[string]string{"customerId": "enum"}},
			{cobj{"customerId": biz, "roles": []string{"UBO"}, "ownershipPercentage": 30, "personalInfo": cobj{"firstName": "A", "lastName": "B"}},
				map[string]string{"ownershipPercentage": "maximum"}},
		}
		for _, c := range cases {
			r := e.do("POST", "/beneficial-owners", c.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if got := fieldErrors(t, r); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%v:\n got %v\nwant %v", c.body, got, c.want)
			}
		}
		expect(t, e.do("POST", "/beneficial-owners", custOwner("Customer:0195a2f5-b3e7-7d02-8000-000000000001", "X", 1, "UBO")), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("POST", "/sandbox/documents", cobj{"documentHolder": "BeneficialOwner:0195a2f5-b3e7-7d02-8000-000000000001", "documentType": "PASSPORT"}),
			http.StatusNotFound, "DOCUMENT_HOLDER_NOT_FOUND")
		r := e.do("POST", "/sandbox/documents", cobj{"documentHolder": biz, "documentType": "SCROLL", "issuedOn": "2999-01-01", "side": "TOP"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); len(fe) != 3 {
			t.Fatalf("%v", fe)
		}
		expect(t, e.do("POST", "/sandbox/documents", cobj{"documentHolder": biz, "documentType": "PASSPORT"}, withCreds(e.production)),
			http.StatusForbidden, "FORBIDDEN")
		if e.custRowCounts(t) != before {
			t.Fatal("refused requests left rows behind")
		}
	})
}

// R-CUST-37: deleting an owner removes its documents and re-derives the
// business's status (here on a regulated platform, where owners count at once).
func TestOwners_DeleteRecomputes_R_CUST_37(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.custRegulated(t)
		id := e.custCreate(t, custBusiness("REG-001"))["id"].(string)
		if e.custStatus(t, id) != "PENDING" {
			t.Fatal("001 resolves PENDING at creation")
		}
		oid := e.custCreateOwner(t, custOwner(id, "Doe 003", 30, "UBO"))["id"].(string)
		e.custDocument(t, oid, "PASSPORT")
		if e.custStatus(t, id) != "UNVERIFIED" {
			t.Fatal("an owner whose name ends in 003 holds the business back")
		}
		if n := len(e.custDocs(t, id)); n != 1 {
			t.Fatalf("%d documents", n)
		}
		expect(t, e.do("DELETE", "/beneficial-owners/"+oid, nil), http.StatusNoContent, "")
		if n := len(e.custDocs(t, id)); n != 0 {
			t.Fatal("the owner's documents are removed")
		}
		if e.custStatus(t, id) != "PENDING" {
			t.Fatalf("re-derived: %s", e.custStatus(t, id))
		}
		if got := custJoin(e.custEvents(t, id)); got != "CUSTOMER.KYB_PENDING,CUSTOMER.KYB_UNVERIFIED,CUSTOMER.KYB_PENDING" {
			t.Fatalf("%s", got)
		}
	})
}

// R-CUST-38: an owner in a review in progress cannot be deleted; one added
// after the review started can.
func TestOwners_DeleteDuringReview_R_CUST_38(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id, oid := e.custBusinessWithPacket(t, "REG-001", "Smith")
		if v := e.custSubmit(t, id).JSON(t); v["verificationStatus"] != "PENDING_MANUAL_REVIEW" {
			t.Fatalf("%v", v)
		}
		before := e.custRowCounts(t)
		expect(t, e.do("DELETE", "/beneficial-owners/"+oid, nil), http.StatusConflict, "CONFLICT")
		if e.custRowCounts(t) != before {
			t.Fatal("nothing changes")
		}
		expect(t, e.do("GET", "/beneficial-owners/"+oid, nil), http.StatusOK, "")
		late := e.custCreateOwner(t, custOwner(id, "Late", 0, "DIRECTOR"))["id"].(string)
		expect(t, e.do("DELETE", "/beneficial-owners/"+late, nil), http.StatusNoContent, "")
		if e.custStatus(t, id) != "PENDING" {
			t.Fatal("the review goes on")
		}
	})
}
