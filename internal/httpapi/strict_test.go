package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/openapitest"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// strictEnv is one server over SQLite: these checks happen before any
// store is touched.
func strictEnv(t *testing.T) *env { return newEnv(t, storetest.OpenSQLite(t), Options{}) }

// R-ERR-02: a body encoding/json would accept with a silent choice
// (duplicate keys, at any depth: the last wins; invalid UTF-8 and lone
// surrogates: U+FFFD) is 400 INVALID_INPUT naming each offender, and
// creates nothing.
func TestStrict_BodiesNameEachOffender_R_ERR_02(t *testing.T) {
	e := strictEnv(t)
	before := e.snapshot()
	for body, want := range map[string][]string{
		`{"name":"a","name":"b","permissions":["VIEW"]}`:                      {"name"},
		`{"name":"a","permissions":["VIEW"],"permissions":["TRANSACT"]}`:      {"permissions"},
		`{"name":"a\u0000b","permissions":["VIEW"]}`:                          {"name"},
		"{\"name\":\"caf\xe9\",\"permissions\":[\"VIEW\"]}":                   {"name"},
		`{"name":"\ud800","permissions":["VIEW"]}`:                            {"name"},
		`{"name":"ok","permissions":["VIEW","\udc00"]}`:                       {"permissions[1]"},
		`{"name":"a","name":"b","permissions":["VIEW"],"expiresAt":"\udbff"}`: {"name", "expiresAt"},
	} {
		r := e.do("POST", "/tokens", body)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		got := fieldErrors(t, r)
		for _, f := range want {
			if got[f] == "" {
				t.Errorf("%q: %s not in details.errors: %s", body, f, r.Body)
			}
		}
	}
	// Nested duplicates are found too (PATCH /config has objects inside).
	r := e.do("PATCH", "/config", `{"cardConfigs":{"maxSpendPerDay":1,"maxSpendPerDay":2}}`)
	if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["cardConfigs.maxSpendPerDay"] == "" {
		t.Fatalf("%s", r.Body)
	}
	if after := e.snapshot(); after != before {
		t.Fatalf("refused requests changed state")
	}
}

// R-CONV-09: bodies are JSON, sent as application/json. A JSON body sent
// as text/plain, as a form (curl -d) or without a Content-Type is 415
// UNSUPPORTED_MEDIA_TYPE naming the header; charset=utf-8 is fine, and a
// request without a body needs no Content-Type.
func TestStrict_JSONNeedsItsMediaType_R_CONV_09(t *testing.T) {
	e := strictEnv(t)
	body := `{"name":"Dashboard","permissions":["VIEW"]}`
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "", "application/json; charset=latin1", "application/jsonx"} {
		r := e.do("POST", "/tokens", body, withHeader("Content-Type", ct))
		expect(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		if fieldErrors(t, r)["Content-Type"] == "" {
			t.Fatalf("%q: %s", ct, r.Body)
		}
	}
	expect(t, e.do("POST", "/tokens", body, withHeader("Content-Type", "application/json; charset=UTF-8")), http.StatusCreated, "")
	expect(t, e.do("POST", "/webhooks/secret/rotate", nil, withHeader("Content-Type", "")), http.StatusOK, "")
}

// R-ERR-02: a query parameter the operation does not read, or one given
// twice that is not a list, is 400 INVALID_INPUT naming it, on lists (a
// misspelt filter must not return everything), on single resources and on
// the public endpoints.
func TestStrict_UnknownQueryParameters_R_ERR_02(t *testing.T) {
	e := strictEnv(t)
	for path, names := range map[string][]string{
		"/tokens?nmae=x": {"nmae"},
		"/tokens?limit=1&include-deleted=true&Limit=2":                  {"include-deleted", "Limit"},
		"/customers/internal-accounts?umaAddress=$a@b.com":              {"umaAddress"},
		"/transactions?customer_id=x":                                   {"customer_id"},
		"/config?verbose=1":                                             {"verbose"},
		"/tokens/Token:0195a2f5-b3e7-7d02-8000-000000000001?expand=all": {"expand"},
		"//healthz?probe=1":                                             {"probe"},
		"/tokens?limit=%zz":                                             {"(query)"},
		"/tokens?limit=1&limit=100&name=a&name=b":                       {"limit", "name"},
		"/exchange-rates?sourceCurrency=USD&sourceCurrency=EUR&destinationCurrency=EUR&destinationCurrency=MXN": {"sourceCurrency"},
	} {
		r := e.do("GET", path, nil)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		got := fieldErrors(t, r)
		for _, n := range names {
			if got[n] == "" {
				t.Errorf("%s: %s not named: %s", path, n, r.Body)
			}
		}
	}
	expect(t, e.do("DELETE", "/tokens/Token:0195a2f5-b3e7-7d02-8000-000000000001?force=true", nil), http.StatusBadRequest, "INVALID_INPUT")
	expect(t, e.do("GET", "/tokens?limit=1&name=x", nil), http.StatusOK, "")
	expect(t, e.do("GET", "/exchange-rates?sourceCurrency=USD&destinationCurrency=EUR&destinationCurrency=MXN", nil), http.StatusOK, "")
}

// Every route declares the query parameters it reads, and they are exactly
// the ones the OpenAPI document lists for its operation: a parameter cannot
// be read without being declared (it would be refused) nor documented
// without being read.
func TestStrict_RouteQueriesMatchTheDocument(t *testing.T) {
	e := strictEnv(t)
	for _, rt := range e.srv.table {
		method, path, _ := strings.Cut(rt.pattern, " ")
		doc, arrays, ok := openapitest.QueryParameters(method, path)
		if !ok {
			continue // routes the document does not describe are checked by the harness when called
		}
		got, want := slices.Sorted(slices.Values(rt.query)), slices.Sorted(slices.Values(doc))
		if !slices.Equal(got, want) {
			t.Errorf("%s: route declares %v, document lists %v", rt.pattern, got, want)
		}
		if got, want := slices.Sorted(slices.Values(rt.repeatable)), slices.Sorted(slices.Values(arrays)); !slices.Equal(got, want) {
			t.Errorf("%s: route repeats %v, document has arrays %v", rt.pattern, got, want)
		}
	}
}

// R-ERR-02: text that is not UTF-8 in a query value or a multipart text
// field is 400 INVALID_INPUT naming it; it used to reach PostgreSQL, which
// refused it with an error answered as 500 (and SQLite stored it).
func TestStrict_InvalidUTF8OutsideJSON_R_ERR_02(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		for path, name := range map[string]string{"/tokens?name=%FF": "name", "/events?type=%FF": "type",
			"/documents?documentHolder=%FF": "documentHolder", "/transactions?reference=%FF%FE": "reference",
			"/customers?platformCustomerId=%C3": "platformCustomerId", "/tokens?name=a%00b": "name"} {
			r := e.do("GET", path, nil)
			if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)[name] != "format" {
				t.Fatalf("%s: %s", path, r.Body)
			}
		}
		cid := e.custCreate(t, custIndividual("Uta Eight"))["id"].(string)
		r := e.sendForm(t, "POST", "/documents", []string{"documentHolder", cid, "documentType", "PASSPORT", "country", "US",
			"documentNumber", "X\xff1"}, []formFile{{"file", "p.png", testPNG}})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["documentNumber"] != "format" {
			t.Fatalf("%s", r.Body)
		}
		r = e.pdocPost(t, []pdocPart{pdocField("documentType", "INVOICE"), pdocField("customerId", "Customer:\xff"), pdocFile("i.pdf", pdocPDF)})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["customerId"] != "format" {
			t.Fatalf("%s", r.Body)
		}
		if n := blobFiles(t, dir); n != 0 || e.documentRows(t) != 0 {
			t.Fatalf("refused uploads kept %d files", n)
		}
	})
}
