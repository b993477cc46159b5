package kyclink

import (
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
)

func TestCreateRequest_Validate(t *testing.T) {
	ok := []string{"https://app.example.com/done?x=1", "http://localhost:3000/cb"}
	bad := []string{"javascript:alert(1)", "/relative", "https://", "ftp://example.com", "https://e.com/" + strings.Repeat("a", 2048)}
	for _, u := range ok {
		if err := (CreateRequest{RedirectURI: &u}).Validate(); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range bad {
		if l := apierr.FieldList((CreateRequest{RedirectURI: &u}).Validate()); len(l) != 1 || l[0].Field != "redirectUri" {
			t.Errorf("%.40s: %v", u, l)
		}
	}
	if err := (CreateRequest{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// The form's values become a customer change with only the filled fields,
// and prefill from the customer the same way.
func TestFormRoundTrip(t *testing.T) {
	values := map[string]string{"fullName": " Ada ", "birthDate": "1990-01-15", "address.line1": "1 Main", "address.country": "GB",
		"documentType": "PASSPORT", "documentCountry": "GB", "side": ""}
	u := Update(customers.Individual, values)
	if *u.FullName != "Ada" || u.Nationality != nil || u.Address == nil || *u.Address.Line1 != "1 Main" || u.Address.City != nil || u.BusinessInfo != nil {
		t.Fatalf("%+v", u)
	}
	d := Document(values)
	if *d.DocumentType != "PASSPORT" || *d.Country != "GB" || d.Side != nil {
		t.Fatalf("%+v", d)
	}
	back := Values(customers.Customer{Profile: customers.Profile{FullName: u.FullName, BirthDate: u.BirthDate, Address: u.Address}})
	if back["fullName"] != "Ada" || back["address.line1"] != "1 Main" || back["nationality"] != "" {
		t.Fatalf("%v", back)
	}
	if b := Update(customers.Business, map[string]string{"businessInfo.legalName": "Acme", "fullName": "ignored"}); b.FullName != nil || *b.BusinessInfo.LegalName != "Acme" {
		t.Fatalf("%+v", b)
	}
}

func TestPagesRender(t *testing.T) {
	form, err := Render("form", FormView{Sandbox: true, Nonce: `n"<x>`, Fields: DataFields(customers.Individual),
		DocumentTypes: DocumentTypes(customers.Individual), Values: map[string]string{"fullName": `<script>alert(1)</script>`},
		Messages: []Message{{Field: "birthDate", Label: "Date of birth", Text: "is required"}}, MaxMB: 10})
	if err != nil {
		t.Fatal(err)
	}
	s := string(form)
	if strings.Contains(s, "<script>") || !strings.Contains(s, "&lt;script&gt;") || !strings.Contains(s, `value="n&#34;&lt;x&gt;"`) ||
		!strings.Contains(s, "Driver&#39;s license") || !strings.Contains(s, `data-field="birthDate"`) {
		t.Fatalf("%s", s)
	}
	res := NewResultView(Result{Customer: customers.Customer{CustomerType: customers.Individual, KycStatus: customers.StatusRejected},
		Verification: customers.Verification{VerificationStatus: customers.VerificationRejected}}, true)
	if res.Headline != "Verification declined" {
		t.Fatalf("%+v", res)
	}
	if _, err := Render("result", res); err != nil {
		t.Fatal(err)
	}
	if _, err := Render("message", MessageView{Title: "t", Text: "x"}); err != nil {
		t.Fatal(err)
	}
}
