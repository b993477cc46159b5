package httpapi

import (
	"context"
	"net/http"
	"testing"
)

func custConsent(typ, version string) cobj {
	return cobj{"type": typ, "acceptedAt": "2025-10-01T12:00:00Z", "ipAddress": "198.51.100.24",
		"termsVersion": version, "acceptanceMethod": "CHECKBOX"}
}

// custTerms returns the current end-user-terms agreement.
func (e *env) custTerms(t *testing.T) (string, string) {
	t.Helper()
	list := e.do("GET", "/customers/agreements", nil).JSON(t)["data"].([]any)
	a := list[0].(map[string]any)
	return a["type"].(string), a["version"].(string)
}

// R-CUST-15, R-CUST-17: agreements list type, version and url; the
// deprecated end-user-terms endpoint still answers {version, url}.
func TestAgreements_List_R_CUST_15_17(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("GET", "/customers/agreements", nil)
		expect(t, r, http.StatusOK, "")
		list := r.JSON(t)["data"].([]any)
		if len(list) == 0 {
			t.Fatal("no agreements")
		}
		for _, x := range list {
			a := x.(map[string]any)
			if a["type"] == "" || a["version"] == "" || a["url"] == "" {
				t.Fatalf("%v", a)
			}
		}
		typ, version := e.custTerms(t)
		if typ != "LIGHTSPARK_END_USER_TERMS" {
			t.Fatalf("the end-user terms type fixed by R-CUST-13: %s", typ)
		}
		eut := e.do("GET", "/customers/end-user-terms", nil)
		expect(t, eut, http.StatusOK, "")
		if m := eut.JSON(t); m["version"] != version || m["url"] == "" {
			t.Fatalf("%v", m)
		}
	})
}

// R-CUST-11, R-CUST-16: consents round-trip; an unknown version is 400
// END_USER_TERMS_VERSION_NOT_FOUND and stores nothing. TermsAccepted reports
// the recorded state.
func TestAgreements_Consents_R_CUST_11_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		typ, version := e.custTerms(t)
		before := e.custRowCounts(t)
		r := e.do("POST", "/customers", cwith(custIndividual("Jane Doe"), "agreementConsents", []any{custConsent(typ, "1999-01-01")}))
		expect(t, r, http.StatusBadRequest, "END_USER_TERMS_VERSION_NOT_FOUND")
		if e.custRowCounts(t) != before {
			t.Fatal("nothing stored")
		}
		c := e.custCreate(t, cwith(custIndividual("Jane Doe"), "agreementConsents", []any{custConsent(typ, version)}))
		id := c["id"].(string)
		got := e.do("GET", "/customers/"+id, nil).JSON(t)
		list := got["agreementConsents"].([]any)
		if len(list) != 1 {
			t.Fatalf("%v", got)
		}
		want := custConsent(typ, version)
		for k, v := range want {
			if list[0].(map[string]any)[k] != v {
				t.Errorf("%s: %v, want %v", k, list[0].(map[string]any)[k], v)
			}
		}
		ok, err := e.custService().TermsAccepted(context.Background(), e.custTenant(), id)
		if err != nil || !ok {
			t.Fatalf("TermsAccepted %v %v", ok, err)
		}
		other := e.custCreate(t, custIndividual("No Terms"))["id"].(string)
		if ok, _ := e.custService().TermsAccepted(context.Background(), e.custTenant(), other); ok {
			t.Fatal("no consent, no terms")
		}
		// PATCH records consent; an unknown version changes nothing.
		r = e.do("PATCH", "/customers/"+other, cobj{"fullName": "Renamed", "agreementConsents": []any{custConsent(typ, "v0")}})
		expect(t, r, http.StatusBadRequest, "END_USER_TERMS_VERSION_NOT_FOUND")
		if got := e.do("GET", "/customers/"+other, nil).JSON(t); got["fullName"] != "No Terms" {
			t.Fatal("a refused PATCH changes nothing")
		}
		expect(t, e.do("PATCH", "/customers/"+other, cobj{"agreementConsents": []any{custConsent(typ, version)}}), http.StatusOK, "")
		if ok, _ := e.custService().TermsAccepted(context.Background(), e.custTenant(), other); !ok {
			t.Fatal("consent recorded by PATCH")
		}
		if _, err := e.custService().TermsAccepted(context.Background(), e.custTenant(), "Customer:0195a2f5-b3e7-7d02-8000-000000000001"); err == nil {
			t.Fatal("unknown customer")
		}
	})
}

// R-CUST-12, R-CUST-14: at most one entry per type; endUserTermsConsent and
// agreementConsents together are refused.
func TestAgreements_Refusals_R_CUST_12_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		typ, version := e.custTerms(t)
		id := e.custCreate(t, custIndividual("Jane Doe"))["id"].(string)
		before := e.custRowCounts(t)
		eut := cobj{"acceptedAt": "2025-10-01T12:00:00Z", "ipAddress": "2001:db8::1", "termsVersion": version, "acceptanceMethod": "CLICK_TO_ACCEPT"}
		cases := []struct {
			body  cobj
			field string
		}{
			{cobj{"agreementConsents": []any{custConsent(typ, version), custConsent(typ, version)}}, "agreementConsents[1].type"},
			{cobj{"agreementConsents": []any{custConsent(typ, version)}, "endUserTermsConsent": eut}, "endUserTermsConsent"},
			{cobj{"agreementConsents": []any{custConsent("PRIVACY", version)}}, "agreementConsents[0].type"},
			{cobj{"agreementConsents": []any{cwith(custConsent(typ, version), "ipAddress", "999.1.1.1")}}, "agreementConsents[0].ipAddress"},
			{cobj{"agreementConsents": []any{cwith(custConsent(typ, version), "acceptedAt", "2999-01-01T00:00:00Z")}}, "agreementConsents[0].acceptedAt"},
			{cobj{"agreementConsents": []any{cwith(custConsent(typ, version), "acceptanceMethod", "NOD")}}, "agreementConsents[0].acceptanceMethod"},
			{cobj{"endUserTermsConsent": cwith(eut, "termsVersion", nil)}, "endUserTermsConsent.termsVersion"},
		}
		for _, c := range cases {
			for _, req := range []struct{ method, path string }{{"POST", "/customers"}, {"PATCH", "/customers/" + id}} {
				body := c.body
				if req.method == "POST" {
					body = cwith(custIndividual("New Person"), "agreementConsents", c.body["agreementConsents"], "endUserTermsConsent", c.body["endUserTermsConsent"])
				}
				r := e.do(req.method, req.path, body)
				expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
				if _, ok := fieldErrors(t, r)[c.field]; !ok {
					t.Errorf("%s %v: %s", req.method, c.body, r.Body)
				}
			}
		}
		if e.custRowCounts(t) != before {
			t.Fatal("refused consents stored something")
		}
	})
}

// R-CUST-13: the deprecated endUserTermsConsent alone is accepted and
// recorded as one end-user-terms entry.
func TestAgreements_DeprecatedEndUserTermsConsent_R_CUST_13(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		_, version := e.custTerms(t)
		eut := cobj{"acceptedAt": "2025-10-01T12:00:00Z", "ipAddress": "198.51.100.7", "termsVersion": version, "acceptanceMethod": "CHECKBOX"}
		c := e.custCreate(t, cwith(custIndividual("Jane Doe"), "endUserTermsConsent", eut))
		list := c["agreementConsents"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["type"] != "LIGHTSPARK_END_USER_TERMS" {
			t.Fatalf("%v", c["agreementConsents"])
		}
		if m := c["endUserTermsConsent"].(map[string]any); m["termsVersion"] != version || m["ipAddress"] != "198.51.100.7" {
			t.Fatalf("%v", m)
		}
		r := e.do("POST", "/customers", cwith(custIndividual("Jane Doe"), "endUserTermsConsent", cwith(eut, "termsVersion", "nope")))
		expect(t, r, http.StatusBadRequest, "END_USER_TERMS_VERSION_NOT_FOUND")
	})
}
