package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/kyclink"
	"github.com/paymentsd/paymentsd/internal/openapitest"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// kycPage sends a request to the public page of a link token, without
// credentials, and checks it against the OpenAPI document. Pages answer
// HTML, errors included.
func (e *env) kycPage(t *testing.T, method, token string, body []byte, contentType string) resp {
	t.Helper()
	req := httptest.NewRequest(method, kyclink.PagePath+"?token="+url.QueryEscape(token), bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	res := resp{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s %s: Content-Type %q: %s", method, req.URL.Path, ct, res.Body)
	}
	if res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Referrer-Policy") != "no-referrer" ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("missing page protections: %v", res.Header)
	}
	openapitest.Check(t, req, res.Status, res.Header, res.Body)
	return res
}

// kycLink asks for a link and returns its token.
func (e *env) kycLink(t *testing.T, customerID string) (token string, link map[string]any) {
	t.Helper()
	r := e.do("POST", "/customers/"+customerID+"/kyc-link", nil)
	expect(t, r, http.StatusCreated, "")
	link = r.JSON(t)
	u, err := url.Parse(link["kycUrl"].(string))
	if err != nil || u.Path != kyclink.PagePath || u.Query().Get("token") == "" {
		t.Fatalf("kycUrl %v: %v", link["kycUrl"], err)
	}
	return u.Query().Get("token"), link
}

var nonceRE = regexp.MustCompile(`name="nonce" value="([^"]+)"`)

func pageNonce(t *testing.T, page resp) string {
	t.Helper()
	m := nonceRE.FindSubmatch(page.Body)
	if m == nil {
		t.Fatalf("no nonce in the form: %s", page.Body)
	}
	return string(m[1])
}

// individualForm is a complete submission of the individual form.
func individualForm(nonce, fullName string) []string {
	return []string{"nonce", nonce, "fullName", fullName, "birthDate", "1988-04-02", "nationality", "US",
		"address.line1", "9 Elm St", "address.city", "Springfield", "address.postalCode", "62701", "address.country", "US",
		"documentType", "PASSPORT", "documentCountry", "US", "documentNumber", "P123"}
}

func (e *env) kycSubmit(t *testing.T, token string, fields []string, files ...formFile) resp {
	t.Helper()
	body, ct := multipartBody(t, fields, files...)
	return e.kycPage(t, "POST", token, body, ct)
}

// R-CUST-33, R-CUST-34, R-CUST-35: a link per call, fresh each time; the
// customer's status does not change.
func TestKycLink_FreshLinkStatusUnchanged_R_CUST_33_34_35(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		cid := e.custCreate(t, custIndividual("Lee Link"))["id"].(string)
		before := e.do("GET", "/customers/"+cid, nil).JSON(t)
		t1, l1 := e.kycLink(t, cid)
		t2, l2 := e.kycLink(t, cid)
		if t1 == t2 || l1["kycUrl"] == l2["kycUrl"] || !strings.HasPrefix(l1["kycUrl"].(string), "http://example.com/kyc?token=") {
			t.Fatalf("links: %v %v", l1, l2)
		}
		exp, _ := time.Parse(time.RFC3339Nano, l1["expiresAt"].(string))
		if d := time.Until(exp); d < 23*time.Hour || d > 25*time.Hour {
			t.Fatalf("expiresAt %v", exp)
		}
		if _, has := l1["token"]; has || l1["provider"] != "PAYMENTSD" {
			t.Fatalf("%v", l1)
		}
		after := e.do("GET", "/customers/"+cid, nil).JSON(t)
		if before["kycStatus"] != after["kycStatus"] || before["updatedAt"] != after["updatedAt"] {
			t.Fatalf("status changed: %v → %v", before["kycStatus"], after["kycStatus"])
		}
		if got := e.custEvents(t, cid); len(got) != 0 {
			t.Fatalf("events: %v", got)
		}
		// Both links open.
		for _, tok := range []string{t1, t2} {
			expect(t, e.kycPage(t, "GET", tok, nil, ""), http.StatusOK, "")
		}
		expect(t, e.do("POST", "/customers/"+cid+"/kyc-link", cobj{"redirectUri": "https://app.example.com/done"}), http.StatusCreated, "")
		r := e.do("POST", "/customers/"+cid+"/kyc-link", cobj{"redirectUri": "javascript:alert(1)", "extra": 1})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fe := fieldErrors(t, r); fe["redirectUri"] != "format" || fe["extra"] == "" {
			t.Fatalf("%v", fe)
		}
		expect(t, e.do("POST", "/customers/Customer:0195a2f5-b3e7-7d02-8000-000000000009/kyc-link", nil), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
		expect(t, e.do("POST", "/customers/"+cid+"/kyc-link", nil, withCreds(e.production)), http.StatusNotFound, "CUSTOMER_NOT_FOUND")
	})
}

// The links' base is Options.PublicURL when set.
func TestKycLink_PublicURL(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{BlobDir: t.TempDir(), PublicURL: "https://kyc.example.org/"})
		cid := e.custCreate(t, custIndividual("Pia Public"))["id"].(string)
		_, l := e.kycLink(t, cid)
		if !strings.HasPrefix(l["kycUrl"].(string), "https://kyc.example.org/kyc?token=") {
			t.Fatalf("%v", l["kycUrl"])
		}
	})
}

// R-SBX-05..08 through the hosted page: the page renders with the sandbox
// note, a submission records the data and document, submits the
// verification, and shows the suffix outcome. The link then works no more.
func TestKycLink_SandboxSubmissionGivesSuffixOutcome_R_SBX_06(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		for suffix, want := range map[string]string{"002": "REJECTED", "001": "PENDING", "003": "UNVERIFIED", "": "APPROVED"} {
			c := custIndividual("Kim Page " + suffix)
			delete(c, "birthDate")
			delete(c, "nationality")
			cid := e.custCreate(t, c)["id"].(string)
			token, _ := e.kycLink(t, cid)
			page := e.kycPage(t, "GET", token, nil, "")
			expect(t, page, http.StatusOK, "")
			for _, s := range []string{"Verify your identity", `id="sandbox-note"`, `value="Kim Page ` + suffix, `name="file"`, "PASSPORT"} {
				if !bytes.Contains(page.Body, []byte(s)) {
					t.Fatalf("page lacks %q", s)
				}
			}
			r := e.kycSubmit(t, token, individualForm(pageNonce(t, page), "Kim Page "+suffix), formFile{"file", "passport.png", testPNG})
			expect(t, r, http.StatusOK, "")
			if !bytes.Contains(r.Body, []byte(`id="status">`+want+`<`)) {
				t.Fatalf("%s: result page: %s", suffix, r.Body)
			}
			if got := e.custStatus(t, cid); got != want {
				t.Fatalf("%s: status %s, want %s", suffix, got, want)
			}
			cust := e.do("GET", "/customers/"+cid, nil).JSON(t)
			if cust["birthDate"] != "1988-04-02" || cust["nationality"] != "US" || cust["address"].(map[string]any)["line1"] != "9 Elm St" {
				t.Fatalf("data not recorded: %v", cust)
			}
			docs := e.do("GET", "/documents?documentHolder="+cid, nil).JSON(t)
			if d := docs["data"].([]any); len(d) != 1 || d[0].(map[string]any)["documentType"] != "PASSPORT" ||
				d[0].(map[string]any)["contentType"] != "image/png" || d[0].(map[string]any)["documentNumber"] != "P123" {
				t.Fatalf("documents: %v", docs)
			}
			vs := e.do("GET", "/verifications?customerId="+cid, nil).JSON(t)
			if vs["totalCount"] != float64(1) {
				t.Fatalf("verifications: %v", vs)
			}
			// Used: the page and the form say so.
			used := e.kycPage(t, "GET", token, nil, "")
			if expect(t, used, http.StatusGone, ""); !bytes.Contains(used.Body, []byte("already been used")) {
				t.Fatalf("%s", used.Body)
			}
			expect(t, e.kycSubmit(t, token, individualForm(pageNonce(t, page), "Kim Again"), formFile{"file", "p.png", testPNG}), http.StatusGone, "")
			if strings.Contains(e.logs.String(), token) {
				t.Fatal("the link's token reached the log")
			}
		}
		if n := blobFiles(t, dir); n != 4 {
			t.Fatalf("%d blob files, want one per customer", n)
		}
	})
}

// An expired link shows a message and takes nothing (the clock is the
// store's).
func TestKycLink_ExpiredLink(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Eve Expired"))["id"].(string)
		token, _ := e.kycLink(t, cid)
		page := e.kycPage(t, "GET", token, nil, "")
		nonce := pageNonce(t, page)
		e.db.SetClock(func() time.Time { return time.Now().Add(kyclink.DefaultTTL + time.Second) })
		defer e.db.SetClock(time.Now)
		r := e.kycPage(t, "GET", token, nil, "")
		if expect(t, r, http.StatusGone, ""); !bytes.Contains(r.Body, []byte("expired")) {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.kycSubmit(t, token, individualForm(nonce, "Eve Expired"), formFile{"file", "p.png", testPNG}), http.StatusGone, "")
		if n := blobFiles(t, dir); n != 0 || e.documentRows(t) != 0 {
			t.Fatalf("an expired link recorded something: %d files", n)
		}
		r = e.kycPage(t, "GET", "no-such-token", nil, "")
		if expect(t, r, http.StatusNotFound, ""); !bytes.Contains(r.Body, []byte("Link not found")) {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.kycSubmit(t, "no-such-token", individualForm(nonce, "X"), formFile{"file", "p.png", testPNG}), http.StatusNotFound, "")
		expect(t, e.kycPage(t, "GET", "", nil, ""), http.StatusNotFound, "")
	})
}

// The form must carry its nonce; without it nothing happens and the link
// stays usable. Invalid fields show the form again with every problem.
func TestKycLink_NonceRequiredAndInvalidForm(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		cid := e.custCreate(t, custIndividual("Cy Csrf 002"))["id"].(string)
		token, _ := e.kycLink(t, cid)
		nonce := pageNonce(t, e.kycPage(t, "GET", token, nil, ""))
		for _, n := range []string{"", "forged", nonce[:len(nonce)-1]} {
			fields := individualForm(n, "Cy Csrf 002")
			if n == "" {
				fields = fields[2:]
			}
			r := e.kycSubmit(t, token, fields, formFile{"file", "p.png", testPNG})
			if expect(t, r, http.StatusForbidden, ""); !bytes.Contains(r.Body, []byte("reload")) && !bytes.Contains(r.Body, []byte("Reload")) {
				t.Fatalf("%s", r.Body)
			}
		}
		// Missing and invalid fields, and a file that is not a document.
		fields := individualForm(nonce, "Cy Csrf 002")
		fields[5] = "" // birthDate
		fields[7] = "Narnia"
		r := e.kycSubmit(t, token, fields, formFile{"file", "cat.gif", testGIF})
		expect(t, r, http.StatusBadRequest, "")
		for _, f := range []string{`data-field="birthDate"`, `data-field="nationality"`, `data-field="file"`, `value="Cy Csrf 002"`} {
			if !bytes.Contains(r.Body, []byte(f)) {
				t.Fatalf("form lacks %s: %s", f, r.Body)
			}
		}
		if n := blobFiles(t, dir); n != 0 || e.documentRows(t) != 0 || e.custStatus(t, cid) != "UNVERIFIED" {
			t.Fatalf("a refused form changed something: %d files", n)
		}
		// Too large a form.
		huge := make([]byte, documentMaxBody)
		copy(huge, testPNG)
		expect(t, e.kycSubmit(t, token, individualForm(nonce, "Cy Csrf 002"), formFile{"file", "huge.png", huge}), http.StatusRequestEntityTooLarge, "")
		// Not a form at all.
		expect(t, e.kycPage(t, "POST", token, []byte(`{"fullName":"x"}`), "application/json"), http.StatusBadRequest, "")
		// A refused document (sandbox magic) is shown on the form.
		fields = individualForm(nonce, "Cy Csrf 002")
		fields[len(fields)-1] = "LOW_QUALITY" // documentNumber
		r = e.kycSubmit(t, token, fields, formFile{"file", "p.png", testPNG})
		if expect(t, r, http.StatusBadRequest, ""); !bytes.Contains(r.Body, []byte("low quality")) {
			t.Fatalf("%s", r.Body)
		}
		if n := blobFiles(t, dir); n != 0 || e.documentRows(t) != 0 || e.do("GET", "/customers/"+cid, nil).JSON(t)["birthDate"] != "1990-01-15" {
			t.Fatalf("a refused document was kept, or the data changed: %d files", n)
		}
		// The link still works.
		r = e.kycSubmit(t, token, individualForm(nonce, "Cy Csrf 002"), formFile{"file", "p.pdf", testPDF})
		if expect(t, r, http.StatusOK, ""); e.custStatus(t, cid) != "REJECTED" {
			t.Fatalf("%s", r.Body)
		}
	})
}

// A customer whose provider verifies contact details first cannot get a
// link before both are verified (KYC cannot begin, R-CONTACT-06).
func TestKycLink_ContactVerificationFirst(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		c := custIndividual("Eu Contact")
		c["region"] = "DE"
		cid := e.custCreate(t, c)["id"].(string)
		expect(t, e.do("POST", "/customers/"+cid+"/kyc-link", nil), http.StatusConflict, "CONFLICT")
		for _, ch := range []string{"email", "phone"} {
			expect(t, e.do("POST", "/customers/"+cid+"/verify-"+ch+"/confirm", cobj{"code": "123456"}), http.StatusOK, "")
		}
		e.kycLink(t, cid)
	})
}

// A business gets the business form; what the page cannot collect (owners)
// is listed in the outcome.
func TestKycLink_BusinessPage(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		cid := e.custCreate(t, custBusiness("REG-PAGE"))["id"].(string)
		token, _ := e.kycLink(t, cid)
		page := e.kycPage(t, "GET", token, nil, "")
		for _, s := range []string{"Verify your business", `value="Acme Corp"`, "registration number", "CERTIFICATE_OF_INCORPORATION"} {
			if !bytes.Contains(page.Body, []byte(s)) {
				t.Fatalf("page lacks %q", s)
			}
		}
		r := e.kycSubmit(t, token, []string{"nonce", pageNonce(t, page), "businessInfo.legalName", "Acme Corp",
			"businessInfo.taxId", "47-1234567", "address.line1", "1 Main St", "address.city", "Springfield",
			"address.postalCode", "62701", "address.country", "US", "documentType", "CERTIFICATE_OF_INCORPORATION",
			"documentCountry", "US"}, formFile{"file", "coi.pdf", testPDF})
		expect(t, r, http.StatusOK, "")
		if !bytes.Contains(r.Body, []byte(`id="verification-status">RESOLVE_ERRORS<`)) || !bytes.Contains(r.Body, []byte("CONTROL_PERSON")) {
			t.Fatalf("%s", r.Body)
		}
		if d := e.do("GET", "/documents?documentHolder="+cid, nil).JSON(t); d["totalCount"] != float64(1) {
			t.Fatalf("%v", d)
		}
		_ = context.Background()
	})
}
