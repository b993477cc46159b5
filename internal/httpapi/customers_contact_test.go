package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/store"
)

// custEEA is an individual served by the EEA provider, which verifies email
// and phone before KYC.
func custEEA(name string) cobj {
	return cwith(custIndividual(name), "region", "DE", "nationality", "DE", "idType", "NON_US_TAX_ID",
		"identifier", "DE-123", "countryOfIssuance", "DE",
		"address", cobj{"line1": "Hauptstr. 1", "city": "Berlin", "postalCode": "10115", "country": "DE"})
}

func (e *env) custSandboxSent(t *testing.T) []customers.Message {
	t.Helper()
	return e.custService().SandboxSender.(*customers.SandboxSender).Sent()
}

// R-CONTACT-02: customers whose provider has no contact verification get 409.
func TestContact_NotRequired_R_CONTACT_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id := e.custCreate(t, custIndividual("Jane Doe"))["id"].(string)
		before := e.custRowCounts(t)
		for _, p := range []string{"/verify-email", "/verify-phone"} {
			expect(t, e.do("POST", "/customers/"+id+p, nil), http.StatusConflict, "CONFLICT")
			expect(t, e.do("POST", "/customers/"+id+p+"/confirm", `{"code":"123456"}`), http.StatusConflict, "CONFLICT")
		}
		expect(t, e.do("POST", "/customers/Customer:0195a2f5-b3e7-7d02-8000-000000000001/verify-email", nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		if e.custRowCounts(t) != before || len(e.custSandboxSent(t)) != 0 {
			t.Fatal("nothing is sent or stored")
		}
	})
}

// R-CONTACT-01, R-CONTACT-03, R-CONTACT-04: send (and re-send) a code,
// confirm 123456, the channel becomes VERIFIED; codes are stored hashed.
func TestContact_Flow_R_CONTACT_01_03_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		c := e.custCreate(t, custEEA("Hans Muster"))
		id := c["id"].(string)
		if cv := c["contactVerification"].(map[string]any); cv["email"] != "PENDING" || cv["phone"] != "PENDING" {
			t.Fatalf("%v", cv)
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-email", nil), http.StatusNoContent, "")
		expect(t, e.do("POST", "/customers/"+id+"/verify-email", ""), http.StatusNoContent, "") // re-send
		sent := e.custSandboxSent(t)
		if len(sent) != 2 || sent[1].To != "jane@example.com" || sent[1].Code != "123456" || sent[1].Channel != "EMAIL" {
			t.Fatalf("%+v", sent)
		}
		code, err := e.db.Read().GetContactCode(context.Background(), e.custTenant(), id, customers.ChannelEmail, false)
		if err != nil || strings.Contains(code.CodeHash, "123456") || len(code.CodeHash) != 64 || code.Sends != 2 {
			t.Fatalf("stored hashed: %+v %v", code, err)
		}
		r := e.do("POST", "/customers/"+id+"/verify-email/confirm", `{"code":"123456"}`)
		expect(t, r, http.StatusOK, "")
		if cv := r.JSON(t)["contactVerification"].(map[string]any); cv["email"] != "VERIFIED" || cv["phone"] != "PENDING" {
			t.Fatalf("%v", cv)
		}
		if _, err := e.db.Read().GetContactCode(context.Background(), e.custTenant(), id, customers.ChannelEmail, false); err != store.ErrNotFound {
			t.Fatal("a used code is gone")
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-email", nil), http.StatusConflict, "CONFLICT")
		// Sandbox: 123456 may be confirmed without requesting it first.
		r = e.do("POST", "/customers/"+id+"/verify-phone/confirm", `{"code":"123456"}`)
		expect(t, r, http.StatusOK, "")
		if cv := r.JSON(t)["contactVerification"].(map[string]any); cv["phone"] != "VERIFIED" {
			t.Fatalf("%v", cv)
		}
		// The customer in a confirmation's answer is the whole resource,
		// scaRequired included, as on GET.
		if _, ok := r.JSON(t)["scaRequired"].(bool); !ok {
			t.Fatalf("verify-phone confirm without scaRequired: %s", r.Body)
		}
		// Changing the email makes it PENDING again.
		r = e.do("PATCH", "/customers/"+id, `{"email":"hans@example.de"}`)
		expect(t, r, http.StatusOK, "")
		if cv := r.JSON(t)["contactVerification"].(map[string]any); cv["email"] != "PENDING" || cv["phone"] != "VERIFIED" {
			t.Fatalf("%v", cv)
		}
		// Bad bodies.
		for body, field := range map[string]string{`{}`: "code", `{"code":"12"}`: "code", `{"code":"abcdef"}`: "code", `{"code":"123456","x":1}`: "x"} {
			r := e.do("POST", "/customers/"+id+"/verify-email/confirm", body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if _, ok := fieldErrors(t, r)[field]; !ok {
				t.Errorf("%s: %s", body, r.Body)
			}
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-email", `{"x":1}`), http.StatusBadRequest, "INVALID_INPUT")
	})
}

// R-CONTACT-05: a wrong code does not verify; attempts are limited; an
// expired code is refused; a new code replaces a burnt one.
func TestContact_WrongExpiredAndAttempts_R_CONTACT_05(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id := e.custCreate(t, custEEA("Hans Muster"))["id"].(string)
		confirm := func(code string) resp {
			return e.do("POST", "/customers/"+id+"/verify-phone/confirm", fmt.Sprintf(`{"code":%q}`, code))
		}
		r := confirm("000001")
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if d := r.JSON(t)["details"].(map[string]any); d["codeError"] != "NOT_REQUESTED" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-phone", nil), http.StatusNoContent, "")
		for i := 1; i <= customers.MaxAttempts; i++ {
			r := confirm("000001")
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			d := r.JSON(t)["details"].(map[string]any)
			if d["codeError"] != "INCORRECT" || d["attemptsRemaining"].(float64) != float64(customers.MaxAttempts-i) {
				t.Fatalf("attempt %d: %s", i, r.Body)
			}
		}
		r = confirm("123456")
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if d := r.JSON(t)["details"].(map[string]any); d["codeError"] != "TOO_MANY_ATTEMPTS" {
			t.Fatalf("even the right code is refused once the attempts are spent: %s", r.Body)
		}
		if cv := e.do("GET", "/customers/"+id, nil).JSON(t)["contactVerification"].(map[string]any); cv["phone"] != "PENDING" {
			t.Fatalf("not VERIFIED: %v", cv)
		}
		// A new code; let it expire.
		expect(t, e.do("POST", "/customers/"+id+"/verify-phone", nil), http.StatusNoContent, "")
		e.db.SetClock(func() time.Time { return time.Now().Add(customers.CodeTTL + time.Second) })
		r = confirm("123456")
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if d := r.JSON(t)["details"].(map[string]any); d["codeError"] != "EXPIRED" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-phone", nil), http.StatusNoContent, "")
		expect(t, confirm("123456"), http.StatusOK, "")
	})
}

// Codes are sent at most MaxSends times per window: 429 with Retry-After.
func TestContact_SendRateLimit(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id := e.custCreate(t, custEEA("Hans Muster"))["id"].(string)
		for range customers.MaxSends {
			expect(t, e.do("POST", "/customers/"+id+"/verify-email", nil), http.StatusNoContent, "")
		}
		r := e.do("POST", "/customers/"+id+"/verify-email", nil)
		expect(t, r, http.StatusTooManyRequests, "RATE_LIMITED")
		if r.Header.Get("Retry-After") == "" {
			t.Fatal("Retry-After (R-ERR-20)")
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-phone", nil), http.StatusNoContent, "") // per channel
		e.db.SetClock(func() time.Time { return time.Now().Add(customers.SendWindow) })
		expect(t, e.do("POST", "/customers/"+id+"/verify-email", nil), http.StatusNoContent, "")
	})
}

// Production: a random code is issued and logged without the code or the
// full address; 123456 is not special.
func TestContact_ProductionLogsWithoutCode(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		prod := withCreds(e.production)
		r := e.do("POST", "/customers", custEEA("Hans Muster"), prod)
		expect(t, r, http.StatusCreated, "")
		id := r.JSON(t)["id"].(string)
		expect(t, e.do("POST", "/customers/"+id+"/verify-email", nil, prod), http.StatusNoContent, "")
		logs := e.logs.String()
		if !strings.Contains(logs, "contact code issued") || strings.Contains(logs, "jane@example.com") || strings.Contains(logs, `"code"`) {
			t.Fatalf("production log: %s", logs)
		}
		if len(e.custSandboxSent(t)) != 0 {
			t.Fatal("production does not use the sandbox sender")
		}
		if r := e.do("POST", "/customers/"+id+"/verify-email/confirm", `{"code":"000000"}`, prod); r.Status != http.StatusBadRequest {
			t.Fatalf("%s", r.Body)
		}
	})
}

// R-CONTACT-06: where the provider requires it, KYC does not begin until
// both email and phone are VERIFIED.
func TestContact_KYCWaitsForContact_R_CONTACT_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		id := e.custCreate(t, custEEA("Hans Muster"))["id"].(string)
		e.custDocument(t, id, "PASSPORT")
		before := e.custRowCounts(t)
		r := e.custSubmit(t, id)
		expect(t, r, http.StatusConflict, "CONFLICT")
		if e.custRowCounts(t) != before || e.custStatus(t, id) != "UNVERIFIED" {
			t.Fatal("KYC did not begin")
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-email/confirm", `{"code":"123456"}`), http.StatusOK, "")
		expect(t, e.custSubmit(t, id), http.StatusConflict, "CONFLICT")
		expect(t, e.do("POST", "/customers/"+id+"/verify-phone/confirm", `{"code":"123456"}`), http.StatusOK, "")
		if v := e.custSubmit(t, id).JSON(t); v["verificationStatus"] != "APPROVED" {
			t.Fatalf("%v", v)
		}

		// Where the outcome resolves at creation, it waits for contact
		// verification, then resolves.
		e.custRegulated(t)
		c := e.custCreate(t, custEEA("Greta 001"))
		id = c["id"].(string)
		if c["kycStatus"] != "UNVERIFIED" {
			t.Fatalf("%v", c["kycStatus"])
		}
		expect(t, e.do("POST", "/customers/"+id+"/verify-phone/confirm", `{"code":"123456"}`), http.StatusOK, "")
		if e.custStatus(t, id) != "UNVERIFIED" || len(e.custEvents(t, id)) != 0 {
			t.Fatal("one channel is not enough")
		}
		r = e.do("POST", "/customers/"+id+"/verify-email/confirm", `{"code":"123456"}`)
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["kycStatus"] != "PENDING" || custJoin(e.custEvents(t, id)) != "CUSTOMER.KYC_PENDING" {
			t.Fatalf("%s", r.Body)
		}
	})
}
