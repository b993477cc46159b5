package kyclink

import (
	"bytes"
	"html/template"
	"strings"

	"github.com/paymentsd/paymentsd/internal/customers"
)

// Form field names. Data fields are named by their path in the customer
// request, so validation errors point straight at them.
const (
	FieldNonce           = "nonce"
	FieldDocumentType    = "documentType"
	FieldSide            = "side"
	FieldDocumentCountry = "documentCountry"
	FieldDocumentNumber  = "documentNumber"
	FieldFile            = "file"
	fieldLegalName       = "businessInfo.legalName"
	fieldRegistration    = "businessInfo.registrationNumber"
	fieldTaxID           = "businessInfo.taxId"
	fieldFullName        = "fullName"
	fieldBirthDate       = "birthDate"
	fieldNationality     = "nationality"
	fieldLine1           = "address.line1"
	fieldLine2           = "address.line2"
	fieldCity            = "address.city"
	fieldState           = "address.state"
	fieldPostalCode      = "address.postalCode"
	fieldCountry         = "address.country"
	// MaxFieldBytes bounds each text input of the form.
	MaxFieldBytes = 1024
)

// Field is one input of the form.
type Field struct {
	Name, Label, Type, Placeholder string
	Required                       bool
}

var addressFields = []Field{
	{Name: fieldLine1, Label: "Address line 1", Type: "text", Required: true},
	{Name: fieldLine2, Label: "Address line 2", Type: "text"},
	{Name: fieldCity, Label: "City", Type: "text", Required: true},
	{Name: fieldState, Label: "State or region", Type: "text"},
	{Name: fieldPostalCode, Label: "Postal code", Type: "text", Required: true},
	{Name: fieldCountry, Label: "Country (2-letter code, such as US)", Type: "text", Placeholder: "US", Required: true},
}

// DataFields are the data inputs of the form for a customer type.
func DataFields(customerType string) []Field {
	if customerType == customers.Business {
		return append([]Field{
			{Name: fieldLegalName, Label: "Legal name of the business", Type: "text", Required: true},
			{Name: fieldRegistration, Label: "Registration number", Type: "text"},
			{Name: fieldTaxID, Label: "Tax identification number", Type: "text", Required: true},
		}, addressFields...)
	}
	return append([]Field{
		{Name: fieldFullName, Label: "Full name", Type: "text", Required: true},
		{Name: fieldBirthDate, Label: "Date of birth", Type: "date", Required: true},
		{Name: fieldNationality, Label: "Nationality (2-letter code, such as US)", Type: "text", Placeholder: "US", Required: true},
	}, addressFields...)
}

// DocumentTypes are the documents the form offers for a customer type.
func DocumentTypes(customerType string) []string {
	if customerType == customers.Business {
		return customers.FormationDocuments
	}
	return customers.IdentityDocuments
}

// Values prefills the form from what the platform already sent.
func Values(c customers.Customer) map[string]string {
	v := map[string]string{}
	set := func(k string, p *string) {
		if p != nil {
			v[k] = *p
		}
	}
	set(fieldFullName, c.FullName)
	set(fieldBirthDate, c.BirthDate)
	set(fieldNationality, c.Nationality)
	if a := c.Address; a != nil {
		set(fieldLine1, a.Line1)
		set(fieldLine2, a.Line2)
		set(fieldCity, a.City)
		set(fieldState, a.State)
		set(fieldPostalCode, a.PostalCode)
		set(fieldCountry, a.Country)
	}
	if b := c.BusinessInfo; b != nil {
		set(fieldLegalName, b.LegalName)
		set(fieldRegistration, b.RegistrationNumber)
		set(fieldTaxID, b.TaxID)
	}
	return v
}

// Update builds the customer change from submitted values: the shown
// fields, each set when filled in.
func Update(customerType string, values map[string]string) customers.UpdateRequest {
	var r customers.UpdateRequest
	get := func(k string) *string {
		if s := strings.TrimSpace(values[k]); s != "" {
			return &s
		}
		return nil
	}
	addr := customers.Address{Line1: get(fieldLine1), Line2: get(fieldLine2), City: get(fieldCity),
		State: get(fieldState), PostalCode: get(fieldPostalCode), Country: get(fieldCountry)}
	if addr != (customers.Address{}) {
		r.Address = &addr
	}
	if customerType == customers.Business {
		b := customers.BusinessInfo{LegalName: get(fieldLegalName), RegistrationNumber: get(fieldRegistration), TaxID: get(fieldTaxID)}
		if b.LegalName != nil || b.RegistrationNumber != nil || b.TaxID != nil {
			r.BusinessInfo = &b
		}
		return r
	}
	r.FullName, r.BirthDate, r.Nationality = get(fieldFullName), get(fieldBirthDate), get(fieldNationality)
	return r
}

// Document builds the document metadata from submitted values.
func Document(values map[string]string) customers.UploadRequest {
	get := func(k string) *string {
		if s := strings.TrimSpace(values[k]); s != "" {
			return &s
		}
		return nil
	}
	return customers.UploadRequest{
		DocumentRequest: customers.DocumentRequest{DocumentType: get(FieldDocumentType), Country: get(FieldDocumentCountry),
			Side: get(FieldSide)},
		DocumentNumber: get(FieldDocumentNumber),
	}
}

// FormField maps a validation error's field to the form input it concerns.
func FormField(field string) string {
	if field == "country" {
		return FieldDocumentCountry
	}
	return field
}

// Message is one problem shown above the form.
type Message struct{ Field, Label, Text string }

// FormView is the data of the form page.
type FormView struct {
	Business      bool
	Sandbox       bool
	Nonce         string
	ExpiresAt     string
	Fields        []Field
	DocumentTypes []string
	Values        map[string]string
	Messages      []Message
	MaxMB         int
}

// ResultView is the data of the page shown after a submission.
type ResultView struct {
	Headline           string
	Text               string
	Status             string
	VerificationStatus string
	Problems           []string
	RedirectURI        string
	Sandbox            bool
}

// MessageView is the data of a page that only explains something.
type MessageView struct {
	Title, Text string
}

// NewResultView explains a verification outcome in plain words.
func NewResultView(r Result, sandbox bool) ResultView {
	v := ResultView{Status: r.Customer.Status(), VerificationStatus: r.Verification.VerificationStatus,
		RedirectURI: r.RedirectURI, Sandbox: sandbox}
	switch v.Status {
	case customers.StatusApproved:
		v.Headline, v.Text = "You are verified", "Thank you. Your identity has been verified; you can close this page."
	case customers.StatusRejected:
		v.Headline, v.Text = "Verification declined", "We could not verify your identity with the information provided. The service you came from will tell you what you can do next."
	case customers.StatusPending:
		v.Headline, v.Text = "Under review", "Thank you. Your information is being reviewed; you will hear from the service you came from."
	default:
		v.Headline, v.Text = "More information is needed", "Your information was received, but something needs fixing. Ask the service you came from for a new link and try again."
	}
	for _, e := range r.Verification.Errors {
		v.Problems = append(v.Problems, e.Reason)
	}
	return v
}

// Render executes one of the page templates.
func Render(name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// documentLabels name document types for people.
var documentLabels = map[string]string{
	"PASSPORT": "Passport", "DRIVERS_LICENSE": "Driver's license", "NATIONAL_ID": "National identity card",
	"CERTIFICATE_OF_INCORPORATION": "Certificate of incorporation", "ARTICLES_OF_INCORPORATION": "Articles of incorporation",
	"ARTICLES_OF_ASSOCIATION": "Articles of association", "STATE_REGISTRY_EXCERPT": "State registry excerpt",
}

func documentLabel(t string) string {
	if l := documentLabels[t]; l != "" {
		return l
	}
	return t
}

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"val":      func(m map[string]string, k string) string { return m[k] },
	"docLabel": documentLabel,
}).Parse(pageTemplates))

const pageTemplates = `
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.}}</title>
<style>
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f5f6f8;color:#1d232b;margin:0}
main{max-width:38rem;margin:2rem auto;background:#fff;border-radius:10px;padding:2rem;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.5rem;margin:0 0 1rem}
fieldset{border:1px solid #d9dde3;border-radius:8px;margin:0 0 1.25rem;padding:1rem}
legend{font-weight:600;padding:0 .4rem}
label{display:block;margin:.6rem 0 .2rem;font-size:.92rem}
input,select{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #b9c0ca;border-radius:6px;font:inherit}
button{background:#1f5fd6;color:#fff;border:0;border-radius:6px;padding:.7rem 1.4rem;font:inherit;cursor:pointer}
.errors{background:#fdecec;border:1px solid #e5a3a3;border-radius:8px;padding:.75rem 1rem;margin-bottom:1rem}
.note{background:#fff8e1;border:1px solid #e8d48a;border-radius:8px;padding:.75rem 1rem;margin-bottom:1rem;font-size:.92rem}
.muted{color:#5b6572;font-size:.9rem}
table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d9dde3;padding:.25rem .5rem;text-align:left}
.status{font-weight:600}
</style></head><body><main>{{end}}

{{define "foot"}}</main></body></html>{{end}}

{{define "sandbox"}}<div class="note" id="sandbox-note"><strong>Sandbox.</strong> No real verification happens. The outcome follows the last three characters of the {{if .}}registration number{{else}}full name{{end}}:
<table><tr><th>Ends in</th><th>Outcome</th></tr>
<tr><td>001</td><td>PENDING: sent to manual review</td></tr>
<tr><td>002</td><td>REJECTED</td></tr>
<tr><td>003</td><td>UNVERIFIED: the document is reported as poor quality</td></tr>
<tr><td>anything else</td><td>APPROVED</td></tr></table>
Any PDF, JPEG or PNG file works as the document.</div>{{end}}

{{define "form"}}{{template "head" "Verify your identity"}}
<h1>{{if .Business}}Verify your business{{else}}Verify your identity{{end}}</h1>
{{if .Sandbox}}{{template "sandbox" .Business}}{{end}}
{{if .Messages}}<div class="errors" role="alert"><strong>Please check the form:</strong><ul>
{{range .Messages}}<li data-field="{{.Field}}">{{.Label}}: {{.Text}}</li>{{end}}</ul></div>{{end}}
<form method="post" enctype="multipart/form-data">
<input type="hidden" name="nonce" value="{{.Nonce}}">
<fieldset><legend>{{if .Business}}The business{{else}}About you{{end}}</legend>
{{range .Fields}}<label for="{{.Name}}">{{.Label}}{{if not .Required}} (optional){{end}}</label>
<input id="{{.Name}}" name="{{.Name}}" type="{{.Type}}" value="{{val $.Values .Name}}"{{if .Placeholder}} placeholder="{{.Placeholder}}"{{end}}{{if .Required}} required{{end}} maxlength="255">
{{end}}</fieldset>
<fieldset><legend>Document</legend>
<label for="documentType">Document type</label>
<select id="documentType" name="documentType" required>
{{range .DocumentTypes}}<option value="{{.}}"{{if eq . (val $.Values "documentType")}} selected{{end}}>{{docLabel .}}</option>{{end}}
</select>
{{if not .Business}}<label for="side">Side (for two-sided documents)</label>
<select id="side" name="side"><option value="">Not applicable</option>
<option value="FRONT"{{if eq "FRONT" (val .Values "side")}} selected{{end}}>Front</option>
<option value="BACK"{{if eq "BACK" (val .Values "side")}} selected{{end}}>Back</option></select>{{end}}
<label for="documentCountry">Country that issued the document (2-letter code)</label>
<input id="documentCountry" name="documentCountry" type="text" value="{{val .Values "documentCountry"}}" placeholder="US" required maxlength="2">
<label for="documentNumber">Document number (optional)</label>
<input id="documentNumber" name="documentNumber" type="text" value="{{val .Values "documentNumber"}}" maxlength="64">
<label for="file">File: PDF, JPEG or PNG, at most {{.MaxMB}} MB</label>
<input id="file" name="file" type="file" accept="application/pdf,image/jpeg,image/png" required>
</fieldset>
<button type="submit">Submit for verification</button>
<p class="muted">This link works once and expires at {{.ExpiresAt}}.</p>
</form>
{{template "foot"}}{{end}}

{{define "result"}}{{template "head" .Headline}}
<h1>{{.Headline}}</h1>
<p>{{.Text}}</p>
<p>Status: <span class="status" id="status">{{.Status}}</span><br>
<span class="muted">Verification result: <span id="verification-status">{{.VerificationStatus}}</span></span></p>
{{if .Problems}}<div class="errors"><ul>{{range .Problems}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{if .RedirectURI}}<p><a href="{{.RedirectURI}}">Continue</a></p>{{end}}
<p class="muted">This link has now been used; it cannot be used again.</p>
{{template "foot"}}{{end}}

{{define "message"}}{{template "head" .Title}}
<h1>{{.Title}}</h1>
<p>{{.Text}}</p>
{{template "foot"}}{{end}}
`
