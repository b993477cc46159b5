package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// R-CUST-01, R-CUST-02, R-CUST-04, R-CUST-05, R-CUST-09, R-CONV-02: create
// individual and business customers; fields round-trip on GET.
func TestCustomers_CreateAndGet_R_CUST_01_02_05_09(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		body := cwith(custIndividual("Jane Doe"), "platformCustomerId", "ind-1", "sourceOfFundsCategories", []string{"SALARY"},
			"pepStatus", "NONE", "annualIncomeRange", "RANGE_50K_100K", "region", "US", "currencies", []string{"USD", "USDC"})
		c := e.custCreate(t, body)
		id := c["id"].(string)
		if !strings.HasPrefix(id, "Customer:") || c["kycStatus"] != "UNVERIFIED" || c["customerType"] != "INDIVIDUAL" {
			t.Fatalf("created %v", c)
		}
		if _, has := c["kybStatus"]; has {
			t.Fatal("an individual has kycStatus, not kybStatus (R-CUST-06)")
		}
		got := e.do("GET", "/customers/"+id, nil).JSON(t)
		for k, want := range body {
			if fmt.Sprint(got[k]) != fmt.Sprint(want) {
				t.Errorf("%s: got %v, want %v (R-CUST-05)", k, got[k], want)
			}
		}
		if got["isDeleted"] != false || got["createdAt"] == nil || fmt.Sprint(got["agreementConsents"]) != "[]" {
			t.Fatalf("%v", got)
		}
		if _, has := got["contactVerification"]; has {
			t.Fatal("contactVerification is shown only when the provider requires it")
		}

		// Business: registrationNumber round-trips top-level and in businessInfo (R-CUST-09).
		b := e.custCreate(t, cwith(custBusiness("REG-555"), "registrationNumber", "REG-555"))
		bid := b["id"].(string)
		got = e.do("GET", "/customers/"+bid, nil).JSON(t)
		bi := got["businessInfo"].(map[string]any)
		if got["registrationNumber"] != "REG-555" || bi["registrationNumber"] != "REG-555" || got["kybStatus"] != "UNVERIFIED" ||
			bi["legalName"] != "Acme Corp" || bi["taxId"] != "47-1234567" || bi["incorporatedOn"] != "2018-03-14" {
			t.Fatalf("business %v", got)
		}
		// Sent only top-level, it is stored in businessInfo too.
		b2 := e.custCreate(t, cobj{"customerType": "BUSINESS", "registrationNumber": "R-9", "businessInfo": cobj{"legalName": "Two"}})
		if b2["registrationNumber"] != "R-9" || b2["businessInfo"].(map[string]any)["registrationNumber"] != "R-9" {
			t.Fatalf("%v", b2)
		}
		// platformCustomerId generated when absent.
		if pc, _ := b2["platformCustomerId"].(string); pc == "" {
			t.Fatal("platformCustomerId is generated when absent")
		}
		// R-CUST-10: creation succeeds without any EDD field; R-CUST-08: a
		// USD business needs neither taxId nor incorporatedOn.
		e.custCreate(t, cobj{"customerType": "BUSINESS", "businessInfo": cobj{"legalName": "Bare LLC"}})
	})
}

// R-CUST-03: unknown, malformed, deleted and other tenants' ids are 404 CUSTOMER_NOT_FOUND.
func TestCustomers_NotFound_R_CUST_03(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.custCreate(t, custIndividual("Jane Doe"))
		id := c["id"].(string)
		for _, bad := range []string{"Customer:0195a2f5-b3e7-7d02-8000-000000000001", "nope"} {
			expect(t, e.do("GET", "/customers/"+bad, nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
			expect(t, e.do("PATCH", "/customers/"+bad, `{"fullName":"X"}`), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
			expect(t, e.do("DELETE", "/customers/"+bad, nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		}
		// Tenancy: the production token does not see sandbox customers.
		before := e.custRowCounts(t)
		expect(t, e.do("GET", "/customers/"+id, nil, withCreds(e.production)), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("PATCH", "/customers/"+id, `{"fullName":"X"}`, withCreds(e.production)), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("DELETE", "/customers/"+id, nil, withCreds(e.production)), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		if n := e.do("GET", "/customers", nil, withCreds(e.production)).JSON(t)["totalCount"]; n.(float64) != 0 {
			t.Fatalf("production lists sandbox customers: %v", n)
		}
		if e.custRowCounts(t) != before || e.custStatus(t, id) != "UNVERIFIED" {
			t.Fatal("another tenant's request had an effect")
		}
	})
}

// R-CUST-07: a platformCustomerId colliding with an active customer is 409
// CONFLICT; a deleted customer's id is free again; deletion keeps history.
func TestCustomers_PlatformCustomerIDConflict_R_CUST_07(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		first := e.custCreate(t, cwith(custIndividual("Jane Doe"), "platformCustomerId", "p-1"))
		before := e.custRowCounts(t)
		expect(t, e.do("POST", "/customers", cwith(custIndividual("John Roe"), "platformCustomerId", "p-1")), http.StatusConflict, "CONFLICT")
		if e.custRowCounts(t) != before {
			t.Fatal("a refused create left rows behind")
		}
		second := e.custCreate(t, cwith(custIndividual("John Roe"), "platformCustomerId", "p-2"))
		expect(t, e.do("PATCH", "/customers/"+second["id"].(string), `{"platformCustomerId":"p-1"}`), http.StatusConflict, "CONFLICT")
		// The same id in the other environment is another tenant's.
		r := e.do("POST", "/customers", cwith(custIndividual("Jane Doe"), "platformCustomerId", "p-1"), withCreds(e.production))
		expect(t, r, http.StatusCreated, "")

		del := e.do("DELETE", "/customers/"+first["id"].(string), nil)
		expect(t, del, http.StatusOK, "")
		if del.JSON(t)["isDeleted"] != true {
			t.Fatalf("delete answers the deleted customer: %s", del.Body)
		}
		if _, ok := del.JSON(t)["scaRequired"].(bool); !ok {
			t.Fatalf("delete's customer without scaRequired: %s", del.Body)
		}
		expect(t, e.do("GET", "/customers/"+first["id"].(string), nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("DELETE", "/customers/"+first["id"].(string), nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		again := e.custCreate(t, cwith(custIndividual("Jane Again"), "platformCustomerId", "p-1"))
		if again["id"] == first["id"] {
			t.Fatal("a new customer")
		}
		if n := e.do("GET", "/customers?platformCustomerId=p-1", nil).JSON(t)["totalCount"]; n.(float64) != 1 {
			t.Fatalf("only the live customer is listed: %v", n)
		}
		// History stays in the database for audits.
		row, _, err := e.db.Read().ListCustomers(context.Background(), store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox},
			store.CustomerFilter{}, "", 100)
		if err != nil || len(row) != 2 {
			t.Fatalf("live rows %d %v", len(row), err)
		}
		if counts := e.custRowCounts(t); !strings.Contains(counts, "customers:4") {
			t.Fatalf("the deleted customer's row is kept: %s", counts)
		}
	})
}

// A customer that still holds money cannot be deleted (CloseAccounts
// refuses, inside the delete's transaction); without an accounts capability
// (CloseAccounts nil) nothing refuses.
func TestCustomers_DeleteHoldingMoney(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.custCreate(t, custIndividual("Rich Person"))
		id := c["id"].(string)
		closeAccounts := e.custService().CloseAccounts
		e.custService().CloseAccounts = func(_ context.Context, _ *store.Tx, tn store.Tenant, customerID string) error {
			if customerID == id && tn.Env == store.EnvSandbox {
				return apierr.Conflict("Customer " + id + " still holds money")
			}
			return nil
		}
		defer func() { e.custService().CloseAccounts = closeAccounts }()
		r := e.do("DELETE", "/customers/"+id, nil)
		expect(t, r, http.StatusConflict, "CONFLICT")
		if !strings.Contains(r.Code(t)+string(r.Body), "holds money") {
			t.Fatalf("the error says why: %s", r.Body)
		}
		expect(t, e.do("GET", "/customers/"+id, nil), http.StatusOK, "")
		e.custService().CloseAccounts = nil
		expect(t, e.do("DELETE", "/customers/"+id, nil), http.StatusOK, "")
	})
}

// R-CUST-18, R-CUST-23: PATCH changes the fields sent; email and phoneNumber
// together are refused and nothing changes.
func TestCustomers_Update_R_CUST_18_23(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.custCreate(t, custIndividual("Jane Doe"))
		id := c["id"].(string)
		time.Sleep(2 * time.Millisecond)
		r := e.do("PATCH", "/customers/"+id, `{"address":{"line1":"2 Elm St","city":"Chicago"}}`)
		expect(t, r, http.StatusOK, "")
		got := e.do("GET", "/customers/"+id, nil).JSON(t)
		a := got["address"].(map[string]any)
		if a["line1"] != "2 Elm St" || a["city"] != "Chicago" || a["postalCode"] != "62701" || got["fullName"] != "Jane Doe" {
			t.Fatalf("address merged field by field, other fields kept: %v", got)
		}
		if got["updatedAt"] == c["updatedAt"] {
			t.Fatal("updatedAt moves")
		}
		before := e.custRowCounts(t) + fmt.Sprint(e.do("GET", "/customers/"+id, nil).JSON(t))
		r = e.do("PATCH", "/customers/"+id, `{"email":"new@example.com","phoneNumber":"+14155550000"}`)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["email"] == "" || fe["phoneNumber"] == "" {
			t.Fatalf("%s", r.Body)
		}
		for _, bad := range []string{`{"customerType":"BUSINESS"}`, `{"businessInfo":{"legalName":"X"}}`, `{"birthDate":"1990-02-30"}`,
			`{"email":"not-an-email"}`, `{"nope":1}`, `{"address":{"country":"USA"}}`} {
			expect(t, e.do("PATCH", "/customers/"+id, bad), http.StatusBadRequest, "INVALID_INPUT")
		}
		if after := e.custRowCounts(t) + fmt.Sprint(e.do("GET", "/customers/"+id, nil).JSON(t)); after != before {
			t.Fatal("refused updates changed the customer")
		}
		// A customer without an address must get a complete one.
		b := e.custCreate(t, cobj{"customerType": "BUSINESS", "businessInfo": cobj{"legalName": "NoAddr"}})
		r = e.do("PATCH", "/customers/"+b["id"].(string), `{"address":{"city":"Chicago"}}`)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["address.line1"] != "required" || fe["address.country"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		r = e.do("PATCH", "/customers/"+b["id"].(string), `{"customerType":"BUSINESS","businessInfo":{"doingBusinessAs":"NA"}}`)
		expect(t, r, http.StatusOK, "")
		if bi := r.JSON(t)["businessInfo"].(map[string]any); bi["legalName"] != "NoAddr" || bi["doingBusinessAs"] != "NA" {
			t.Fatalf("businessInfo merged: %v", bi)
		}
	})
}

// R-ERR-02, R-ERR-03: every invalid field listed with its constraint; nothing stored.
func TestCustomers_Validation_R_ERR_02_03(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		before := e.custRowCounts(t)
		cases := []struct {
			body string
			want map[string]string
		}{
			{`{}`, map[string]string{"customerType": "required"}},
			{`{"customerType":"ROBOT"}`, map[string]string{"customerType": "enum"}},
			{`{"customerType":"INDIVIDUAL"}`, map[string]string{"fullName": "required"}},
			{`{"customerType":"BUSINESS"}`, map[string]string{"businessInfo": "required"}},
			{`{"customerType":"INDIVIDUAL","fullName":"A","birthDate":"15/01/1990","nationality":"XX","email":"x","phoneNumber":"555","idType":"PASSPORT"}`,
				map[string]string{"birthDate": "format", "nationality": "enum", "email": "format", "phoneNumber": "pattern", "idType": "enum",
					"identifier": "required"}},
			{`{"customerType":"INDIVIDUAL","fullName":"A","birthDate":"2999-01-01","address":{"line1":"x"},"currencies":["USD","XYZ","USD"]}`,
				map[string]string{"birthDate": "maximum", "address.postalCode": "required", "address.country": "required",
					"currencies[1]": "enum", "currencies[2]": "uniqueItems"}},
			{`{"customerType":"INDIVIDUAL","fullName":"A","businessInfo":{"legalName":"B"},"registrationNumber":"1"}`,
				map[string]string{"businessInfo": "additionalProperties", "registrationNumber": "additionalProperties"}},
			{`{"customerType":"BUSINESS","fullName":"A","birthDate":"1990-01-01","businessInfo":{"legalName":"B","entityType":"LLP","incorporatedOn":"2020-13-01"}}`,
				map[string]string{"fullName": "additionalProperties", "birthDate": "additionalProperties",
					"businessInfo.entityType": "enum", "businessInfo.incorporatedOn": "format"}},
			{`{"customerType":"INDIVIDUAL","fullName":"A","idType":"SSN","identifier":"12-34","purposeOfAccount":"OTHER"}`,
				map[string]string{"identifier": "pattern", "purposeOfAccountOtherDescription": "required"}},
			{`{"customerType":"INDIVIDUAL","fullName":7,"colour":"red","birthDate":null}`,
				map[string]string{"fullName": "type", "colour": "additionalProperties"}},
			// R-CUST-08: EUR uses direct customer-owned accounts; EEA customers verify contact details.
			{`{"customerType":"BUSINESS","currencies":["EUR"],"businessInfo":{"legalName":"B"}}`,
				map[string]string{"businessInfo.taxId": "required", "businessInfo.incorporatedOn": "required",
					"email": "required", "phoneNumber": "required"}},
			{`{"customerType":"INDIVIDUAL","fullName":"` + strings.Repeat("n", 256) + `","platformCustomerId":"  "}`,
				map[string]string{"fullName": "maxLength", "platformCustomerId": "minLength"}},
		}
		for _, c := range cases {
			r := e.do("POST", "/customers", c.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if got := fieldErrors(t, r); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s:\n got %v\nwant %v", c.body, got, c.want)
			}
		}
		if e.custRowCounts(t) != before {
			t.Fatal("invalid requests left rows behind")
		}
	})
}

// R-CONV-10..14: 250 customers page through with limit and cursor without
// gaps or repeats; default page size 20.
func TestCustomers_Pagination250_R_CONV_10_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		const n = 250
		want := map[string]bool{}
		for i := range n {
			typ := custIndividual(fmt.Sprintf("Person %d", i))
			if i%5 == 0 {
				typ = cwith(custBusiness(fmt.Sprintf("R%d", i)), "currencies", []string{"USDC"})
			}
			want[e.custCreate(t, typ)["id"].(string)] = true
		}
		first := e.do("GET", "/customers", nil).JSON(t)
		if len(first["data"].([]any)) != 20 || first["hasMore"] != true || first["totalCount"].(float64) != n {
			t.Fatalf("default page (R-CONV-13): %d items, hasMore %v, total %v", len(first["data"].([]any)), first["hasMore"], first["totalCount"])
		}
		for _, limit := range []int{100, 7} {
			seen := map[string]bool{}
			last := ""
			cursor := ""
			for pages := 0; ; pages++ {
				q := fmt.Sprintf("/customers?limit=%d", limit)
				if cursor != "" {
					q += "&cursor=" + url.QueryEscape(cursor)
				}
				p := e.do("GET", q, nil)
				expect(t, p, http.StatusOK, "")
				m := p.JSON(t)
				data := m["data"].([]any)
				if len(data) > limit || m["totalCount"].(float64) != n {
					t.Fatalf("page of %d, total %v", len(data), m["totalCount"])
				}
				for _, x := range data {
					id := x.(map[string]any)["id"].(string)
					if seen[id] || id <= last {
						t.Fatalf("repeat or out of order: %s", id)
					}
					seen[id], last = true, id
				}
				nc, has := m["nextCursor"]
				if m["hasMore"] != has {
					t.Fatalf("nextCursor present=%v, hasMore=%v (R-CONV-11)", has, m["hasMore"])
				}
				if !has {
					break
				}
				cursor = nc.(string)
			}
			if len(seen) != n {
				t.Fatalf("limit %d: saw %d of %d", limit, len(seen), n)
			}
			for id := range want {
				if !seen[id] {
					t.Fatalf("gap: %s", id)
				}
			}
		}
		expect(t, e.do("GET", "/customers?limit=101", nil), http.StatusBadRequest, "INVALID_INPUT")
		// Filters, and a cursor only continues the list and filters it came from.
		biz := e.do("GET", "/customers?customerType=BUSINESS&limit=10", nil).JSON(t)
		if biz["totalCount"].(float64) != 50 {
			t.Fatalf("customerType filter: %v", biz["totalCount"])
		}
		expect(t, e.do("GET", "/customers?customerType=INDIVIDUAL&cursor="+url.QueryEscape(biz["nextCursor"].(string)), nil),
			http.StatusBadRequest, "INVALID_INPUT")
		if n := e.do("GET", "/customers?currency=USDC", nil).JSON(t)["totalCount"]; n.(float64) != 50 {
			t.Fatalf("currency filter: %v", n)
		}
		if n := e.do("GET", "/customers?customerType=INDIVIDUAL&createdAfter="+url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), nil).JSON(t)["totalCount"]; n.(float64) != 0 {
			t.Fatalf("createdAfter filter: %v", n)
		}
		r := e.do("GET", "/customers?customerType=ROBOT&region=USA&currency=XYZ&updatedBefore=soon", nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); len(fe) != 4 {
			t.Fatalf("every bad filter named: %v", fe)
		}
	})
}

// POST /customers honours Idempotency-Key (R-IDEM-02): one customer, the
// same 201 body on replay.
func TestCustomers_Idempotent_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		body := cwith(custIndividual("Jane Doe"), "platformCustomerId", "idem-1")
		first := e.do("POST", "/customers", body, key("c-1"))
		expect(t, first, http.StatusCreated, "")
		second := e.do("POST", "/customers", body, key("c-1"))
		if second.Status != http.StatusCreated || string(second.Body) != string(first.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %d %s", second.Status, second.Body)
		}
		if n := e.do("GET", "/customers", nil).JSON(t)["totalCount"]; n.(float64) != 1 {
			t.Fatalf("%v customers", n)
		}
	})
}

// Reads need VIEW, changes need TRANSACT or MANAGE.
func TestCustomers_Permissions(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		tok := e.do("POST", "/tokens", `{"name":"viewer","permissions":["VIEW"]}`).JSON(t)
		viewer := withCreds(tok["clientId"].(string) + ":" + tok["clientSecret"].(string))
		c := e.custCreate(t, custIndividual("Jane Doe"))
		id := c["id"].(string)
		expect(t, e.do("GET", "/customers/"+id, nil, viewer), http.StatusOK, "")
		expect(t, e.do("GET", "/customers", nil, viewer), http.StatusOK, "")
		before := e.custRowCounts(t)
		expect(t, e.do("POST", "/customers", custIndividual("X"), viewer), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("PATCH", "/customers/"+id, `{"fullName":"Y"}`, viewer), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("DELETE", "/customers/"+id, nil, viewer), http.StatusForbidden, "FORBIDDEN")
		expect(t, e.do("POST", "/verifications", cobj{"customerId": id}, viewer), http.StatusForbidden, "FORBIDDEN")
		if e.custRowCounts(t) != before {
			t.Fatal("forbidden requests had an effect")
		}
	})
}
