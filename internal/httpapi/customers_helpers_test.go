package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
)

// cobj is a JSON object under construction.
type cobj = map[string]any

// with returns a copy of base with the given keys set (nil deletes a key).
func cwith(base cobj, kv ...any) cobj {
	out := maps.Clone(base)
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if kv[i+1] == nil {
			delete(out, k)
		} else {
			out[k] = kv[i+1]
		}
	}
	return out
}

var custAddress = cobj{"line1": "1 Main St", "city": "Springfield", "state": "IL", "postalCode": "62701", "country": "US"}

// individual is a complete individual customer named name.
func custIndividual(name string) cobj {
	return cobj{"customerType": "INDIVIDUAL", "fullName": name, "birthDate": "1990-01-15", "nationality": "US",
		"idType": "SSN", "identifier": "123-45-6789", "countryOfIssuance": "US", "address": custAddress,
		"email": "jane@example.com", "phoneNumber": "+14155551234"}
}

// business is a business customer with registration number reg.
func custBusiness(reg string) cobj {
	return cobj{"customerType": "BUSINESS", "email": "finance@acme.example", "address": custAddress,
		"businessInfo": cobj{"legalName": "Acme Corp", "country": "US", "registrationNumber": reg, "taxId": "47-1234567",
			"incorporatedOn": "2018-03-14", "entityType": "LLC"}}
}

// owner is a complete beneficial owner of customerID.
func custOwner(customerID, lastName string, pct int, roles ...string) cobj {
	return cobj{"customerId": customerID, "roles": roles, "ownershipPercentage": pct,
		"personalInfo": cobj{"firstName": "Olive", "lastName": lastName, "birthDate": "1970-06-15", "nationality": "US",
			"address": custAddress, "idType": "SSN", "identifier": "987-65-4321"}}
}

func (e *env) custCreate(t *testing.T, body any) map[string]any {
	t.Helper()
	r := e.do("POST", "/customers", body)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

func (e *env) custCreateOwner(t *testing.T, body any) map[string]any {
	t.Helper()
	r := e.do("POST", "/beneficial-owners", body)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// document records a verification document for holder (sandbox helper).
func (e *env) custDocument(t *testing.T, holder, typ string, extra ...any) string {
	t.Helper()
	body := cwith(cobj{"documentHolder": holder, "documentType": typ}, extra...)
	r := e.do("POST", "/sandbox/documents", body)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)["id"].(string)
}

// completeBusinessPacket records every document a business packet needs.
func (e *env) custCompletePacket(t *testing.T, customerID string, owners ...string) {
	t.Helper()
	for _, typ := range []string{"CERTIFICATE_OF_INCORPORATION", "SHAREHOLDER_REGISTER", "UTILITY_BILL", "TAX_ID_CERTIFICATE"} {
		e.custDocument(t, customerID, typ)
	}
	for _, o := range owners {
		e.custDocument(t, o, "PASSPORT")
	}
}

func (e *env) custSubmit(t *testing.T, customerID string) resp {
	t.Helper()
	return e.do("POST", "/verifications", cobj{"customerId": customerID})
}

// status returns a customer's kycStatus or kybStatus.
func (e *env) custStatus(t *testing.T, customerID string) string {
	t.Helper()
	r := e.do("GET", "/customers/"+customerID, nil)
	expect(t, r, http.StatusOK, "")
	c := r.JSON(t)
	if s, ok := c["kycStatus"].(string); ok {
		return s
	}
	return c["kybStatus"].(string)
}

// eventTypes lists the types of the events about a customer, in order.
func (e *env) custEvents(t *testing.T, customerID string) []string {
	t.Helper()
	evs, err := e.db.Read().EventsForCustomer(context.Background(), store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}, customerID)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, ev := range evs {
		var env struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(ev.Envelope, &env); err != nil || env.Type != ev.Type || env.Data["id"] != customerID {
			t.Fatalf("event envelope %s: %v", ev.Envelope, err)
		}
		out = append(out, ev.Type)
	}
	return out
}

func (e *env) custRegulated(t *testing.T) {
	t.Helper()
	if err := platforms.SetRegulated(context.Background(), e.db, e.platformID, true); err != nil {
		t.Fatal(err)
	}
}

func (e *env) custSkipPaperwork(t *testing.T, on bool) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", fmt.Sprintf(`{"skipVerificationPaperwork":%v}`, on)), http.StatusOK, "")
}

// rowCounts counts the rows of every customers table.
func (e *env) custRowCounts(t *testing.T) string {
	t.Helper()
	m, err := e.db.Read().CustomerRowCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(m)
}

func (e *env) custService() *customers.Service { return e.srv.customerService() }

// errorTypes lists errors[].type of a verification.
func custErrorTypes(v map[string]any) []string {
	out := []string{}
	for _, x := range v["errors"].([]any) {
		out = append(out, x.(map[string]any)["type"].(string))
	}
	return out
}

func custJoin(list []string) string { return strings.Join(list, ",") }

func (e *env) custTenant() store.Tenant {
	return store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}
}
