package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/openapitest"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// fuzzServer is one server for a fuzz target, built the way newEnv builds
// it, with the sandbox token's Authorization header. It runs over
// PostgreSQL when the tests have one (its text type is the stricter: no
// NUL, only UTF-8), otherwise over SQLite.
func fuzzServer(f *testing.F) (*Server, string) {
	f.Helper()
	ctx := context.Background()
	engines := storetest.Engines(f)
	db := engines[len(engines)-1].Open(f)
	_, created, err := platforms.Bootstrap(ctx, db)
	if err != nil || created == nil {
		f.Fatalf("bootstrap: %v", err)
	}
	srv, err := New(ctx, db, nil, Options{RateLimit: -1, BlobDir: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	return srv, "Basic " + base64.StdEncoding.EncodeToString([]byte(created.SandboxToken))
}

// fuzzSend sends one request and checks what every answer must be: never
// a 500, every error a JSON {code, reason} whose code belongs to its status
// (malformed input: 400 INVALID_INPUT, 415 UNSUPPORTED_MEDIA_TYPE), and
// every status documented.
func fuzzSend(t *testing.T, srv *Server, auth, method, target, contentType string, body []byte) {
	req := httptest.NewRequest(method, "/", strings.NewReader(string(body)))
	req.URL.RawQuery = ""
	path, rawQuery, _ := strings.Cut(target, "?")
	req.URL.Path, req.URL.RawQuery, req.RequestURI = path, rawQuery, ""
	req.Header.Set("Authorization", auth)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code >= 500 {
		t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && rec.Code != http.StatusMethodNotAllowed {
		var e struct{ Code, Reason string }
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" || e.Reason == "" {
			t.Fatalf("%s %s: %d error is not {code, reason}: %s", method, target, rec.Code, rec.Body)
		}
		if status, ok := apierr.StatusOf(e.Code); !ok || status != rec.Code {
			t.Fatalf("%s %s: %d with a code of another status: %s", method, target, rec.Code, rec.Body)
		}
	}
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
}

// jsonRoutes are operations that read a JSON body.
var jsonRoutes = []struct{ method, path string }{
	{"POST", "/tokens"}, {"PATCH", "/config"}, {"POST", "/customers"}, {"POST", "/beneficial-owners"},
	{"POST", "/customers/external-accounts"}, {"POST", "/platform/external-accounts"}, {"POST", "/internal-accounts"},
	{"POST", "/quotes"}, {"POST", "/transfer-out"}, {"POST", "/transfer-in"}, {"POST", "/verifications"},
	{"POST", "/webhooks/secret/rotate"}, {"POST", "/sandbox/send"}, {"POST", "/sandbox/incoming-payments"},
}

// FuzzJSONRequests drives the JSON decoders of real routes (jsonx and each
// request type's validation) with arbitrary bodies and Content-Types,
// seeded with issue 16's cases: duplicate keys at any depth, invalid UTF-8,
// lone surrogates, JSON as text/plain or without a Content-Type.
func FuzzJSONRequests(f *testing.F) {
	srv, auth := fuzzServer(f)
	for i, seed := range []string{`{"name":"a","name":"b","permissions":["VIEW"]}`, "{\"name\":\"caf\xe9\"}", `{"name":"\ud800"}`,
		`{"cardConfigs":{"maxSpendPerDay":1,"maxSpendPerDay":2}}`, `{"name":"Dashboard","permissions":["VIEW"]}`,
		`{"customerType":"INDIVIDUAL","platformCustomerId":"x","fullName":"A B","birthDate":"1990-01-01","nationality":"US"}`,
		`{"lockedCurrencySide":"SENDING","lockedCurrencyAmount":-1,"source":{"sourceType":"ACCOUNT"}}`, `[]`, `{`, ``, `null`,
		`{"amount":9223372036854775807,"currency":"USD"}`} {
		for _, ct := range []string{"application/json", "text/plain", ""} {
			f.Add(uint8(i), ct, []byte(seed))
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, contentType string, body []byte) {
		rt := jsonRoutes[int(route)%len(jsonRoutes)]
		fuzzSend(t, srv, auth, rt.method, "/"+Version+rt.path, contentType, body)
	})
}

// queryRoutes are operations that read a query string.
var queryRoutes = []string{"/tokens", "/customers", "/verifications", "/beneficial-owners", "/documents", "/events",
	"/exchange-rates", "/transactions", "/customers/internal-accounts", "/platform/internal-accounts",
	"/customers/external-accounts", "/platform/external-accounts", "/internal-accounts/InternalAccount:x/balance-changes",
	"/receiver/external-account/ExternalAccount:x"}

// FuzzQueries drives query parsing (unknown parameters, filters, limits,
// cursors) of every route that reads a query string.
func FuzzQueries(f *testing.F) {
	srv, auth := fuzzServer(f)
	for i, seed := range []string{"nmae=x", "limit=1&include-deleted=true", "limit=%zz", "cursor=abc", "limit=0", "limit=101",
		"limit=1&cursor=eyJhIjoiYiJ9.AAAA", "sourceCurrency=USD&destinationCurrency=EUR&sendingAmount=99999999999999999999",
		"startDate=2025-01-01T00:00:00Z&endDate=2024-01-01T00:00:00Z", "type=CARD&status=PENDING", "customerId=&currency=usd", ""} {
		f.Add(uint8(i), seed)
	}
	f.Fuzz(func(t *testing.T, route uint8, rawQuery string) {
		fuzzSend(t, srv, auth, "GET", "/"+Version+queryRoutes[int(route)%len(queryRoutes)]+"?"+rawQuery, "", nil)
	})
}

// multipartRoutes are operations that read multipart/form-data.
var multipartRoutes = []struct{ method, path string }{
	{"POST", "/documents"}, {"PUT", "/documents/Document:0195a2f5-b3e7-7d02-8000-000000000009"},
	{"POST", "/customers/bulk/csv"}, {"POST", "/customer"}, {"POST", "/payment-documents"},
}

// FuzzMultipartRequests drives the multipart readers of every upload route
// with arbitrary bodies, seeded with whole and truncated forms.
func FuzzMultipartRequests(f *testing.F) {
	srv, auth := fuzzServer(f)
	const head = "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n"
	for i := range multipartRoutes {
		for _, seed := range []string{head + bulkCSV + "\r\n--b--\r\n", head + bulkCSV[:40], head + string(testPNG) + "\r\n--b\r\nContent-Disposition: form-data; name=\"documentType\"\r\n\r\nINVOICE\r\n--b--",
			head + string(testPDF), "--b\r\nContent-Disposition: form-da", "--b--", ""} {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, route uint8, body string) {
		rt := multipartRoutes[int(route)%len(multipartRoutes)]
		fuzzSend(t, srv, auth, rt.method, "/"+Version+rt.path, "multipart/form-data; boundary=b", []byte(body))
	})
}
