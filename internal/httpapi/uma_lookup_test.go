package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// umaInst is one installation of the service listening on loopback, its
// UMA domain the listener's host:port. Its listener lets a test tamper with
// what goes in and out (tamperReq, tamperRes; nil passes through).
type umaInst struct {
	*env
	srv       *httptest.Server
	domain    string
	mu        sync.Mutex
	tamperReq func(*http.Request)
	tamperRes func(path string, body []byte) []byte
}

func newUmaInst(t *testing.T, db *store.DB) *umaInst {
	t.Helper()
	e := newEnv(t, db, Options{})
	in := &umaInst{env: e}
	in.srv = httptest.NewServer(http.HandlerFunc(in.serve))
	t.Cleanup(in.srv.Close)
	u, _ := url.Parse(in.srv.URL)
	in.domain = u.Host
	e.umaDomain(t, in.domain)
	return in
}

// tamper sets (or, with nils, clears) the listener's hooks.
func (in *umaInst) tamper(req func(*http.Request), res func(path string, body []byte) []byte) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.tamperReq, in.tamperRes = req, res
}

func (in *umaInst) serve(w http.ResponseWriter, r *http.Request) {
	in.mu.Lock()
	req, res := in.tamperReq, in.tamperRes
	in.mu.Unlock()
	if req != nil {
		req(r)
	}
	if res == nil {
		in.env.srv.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	in.env.srv.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	body := res(r.URL.Path, rec.Body.Bytes())
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(body)
}

// eachUmaPair runs fn with two installations (separate stores) on every
// engine: a sends, b receives.
func eachUmaPair(t *testing.T, fn func(t *testing.T, a, b *umaInst)) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) { fn(t, newUmaInst(t, eng.Open(t)), newUmaInst(t, eng.Open(t))) })
	}
}

// umaCustomer makes a customer holding an account in cur with the address
// $user@domain, and returns its id.
func (in *umaInst) umaCustomer(t *testing.T, user string, cur string) string {
	t.Helper()
	in.acSupport(t, cur)
	in.qtWebhook(t)
	typ, version := in.custTerms(t)
	c := in.custCreate(t, cwith(custIndividual("UMA "+user), "umaAddress", "$"+user+"@"+in.domain,
		"agreementConsents", []any{custConsent(typ, version)}))
	return c["id"].(string)
}

// A customer of one installation looks up a customer of another over UMA:
// signed discovery both ways, keys and chains checked, the receiver's
// currency with an estimated rate from the receiver's multiplier and ours,
// and a lookupId (R-RATE-09, R-RATE-10).
func TestUma_LookupAcrossInstallations(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, a, b *umaInst) {
		alice := a.umaCustomer(t, "alice", "USD")
		b.umaCustomer(t, "bob", "MXN")
		// R-RATE-09: lookup of a UMA address returns the receiver lookup result.
		r := a.do("GET", "/receiver/uma/$bob@"+b.domain+"?customerId="+alice+"&sendingCurrency=USD", nil)
		expect(t, r, http.StatusOK, "")
		m := r.JSON(t)
		// R-RATE-10: receiverUmaAddress, lookupId, sendingCurrency, supportedCurrencies, requiredPayerDataFields.
		if m["receiverUmaAddress"] != "$bob@"+b.domain || !strings.HasPrefix(m["lookupId"].(string), "Lookup:") || m["sendingCurrency"] != "USD" {
			t.Fatalf("%v", m)
		}
		if _, ok := m["requiredPayerDataFields"].([]any); !ok {
			t.Fatalf("requiredPayerDataFields: %v", m)
		}
		scs := m["supportedCurrencies"].([]any)
		sc := scs[0].(map[string]any)
		rate := sc["estimatedExchangeRate"].(float64)
		// One peso costs 0.058 dollars in the sandbox rates of both sides.
		if sc["currency"].(map[string]any)["code"] != "MXN" || rate < 0.057 || rate > 0.059 ||
			sc["min"].(float64) < 1 || sc["max"].(float64) <= sc["min"].(float64) || sc["maxSendingAmount"].(float64) < 1 {
			t.Fatalf("%v", sc)
		}
		// The sender by address works the same.
		expect(t, a.do("GET", "/receiver/uma/$bob@"+b.domain+"?senderUmaAddress=$alice@"+a.domain, nil), http.StatusOK, "")
	})
}

// Every counterparty failure of a lookup has its code (Part B).
func TestUma_LookupFailures(t *testing.T) {
	eachUmaPair(t, func(t *testing.T, a, b *umaInst) {
		alice := a.umaCustomer(t, "alice", "USD")
		b.umaCustomer(t, "bob", "MXN")
		look := func(addr string) resp {
			return a.do("GET", "/receiver/uma/"+url.PathEscape(addr)+"?customerId="+alice, nil)
		}
		// R-RATE-16: a malformed address is 400 INVALID_UMA_ADDRESS.
		expect(t, look("bob"), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		expect(t, look("$bob@"), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		// R-RATE-15: a domain that does not exist is 404 USER_NOT_FOUND.
		expect(t, look("$bob@nowhere.invalid"), http.StatusNotFound, "USER_NOT_FOUND")
		// A well-formed address with no receiver at the institution.
		expect(t, look("$nobody@"+b.domain), http.StatusNotFound, "UMA_NOT_FOUND")
		// A stopped counterparty: 504 LOOKUP_REQUEST_FAILED, retryable.
		stopped := httptest.NewServer(http.NotFoundHandler())
		host := strings.TrimPrefix(stopped.URL, "http://")
		stopped.Close()
		r := look("$bob@" + host)
		expect(t, r, http.StatusGatewayTimeout, "LOOKUP_REQUEST_FAILED")
		if r.JSON(t)["details"].(map[string]any)["retryable"] != true {
			t.Fatalf("%s", r.Body)
		}
		// A counterparty failing: 502 COUNTERPARTY_SERVER_ERROR.
		failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "down", 503) }))
		defer failing.Close()
		expect(t, look("$bob@"+strings.TrimPrefix(failing.URL, "http://")), http.StatusBadGateway, "COUNTERPARTY_SERVER_ERROR")
		lnurlp := func(path string) bool { return strings.HasPrefix(path, "/.well-known/lnurlp/") }
		// Not a UMA answer.
		b.tamper(nil, func(path string, body []byte) []byte {
			if lnurlp(path) {
				return []byte(`{"tag":"payRequest"}`)
			}
			return body
		})
		expect(t, look("$bob@"+b.domain), http.StatusBadRequest, "PARSE_LNURLP_RESPONSE_ERROR")
		// Keys that do not parse.
		b.tamper(nil, func(path string, body []byte) []byte {
			if path == "/.well-known/lnurlpubkey" {
				return []byte(`{"signingCertChain":["zz"],"encryptionCertChain":["zz"]}`)
			}
			return body
		})
		expect(t, look("$bob@"+b.domain), http.StatusBadRequest, "INVALID_PUBKEY_FORMAT")
		// A tampered response signature: 400 INVALID_RECEIVER.
		b.tamper(nil, func(path string, body []byte) []byte {
			if !lnurlp(path) {
				return body
			}
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			c := m["compliance"].(map[string]any)
			c["signature"] = flipHex(c["signature"].(string))
			out, _ := json.Marshal(m)
			return out
		})
		r = look("$bob@" + b.domain)
		expect(t, r, http.StatusBadRequest, "INVALID_RECEIVER")
		if !strings.Contains(r.JSON(t)["reason"].(string), "signature") {
			t.Fatalf("%s", r.Body)
		}
		// A tampered request signature: the receiver refuses the sender.
		b.tamper(func(r *http.Request) {
			q := r.URL.Query()
			if sig := q.Get("signature"); sig != "" {
				q.Set("signature", flipHex(sig))
				r.URL.RawQuery = q.Encode()
			}
		}, nil)
		expect(t, look("$bob@"+b.domain), http.StatusBadRequest, "SENDER_NOT_ACCEPTED")
		b.tamper(nil, nil)
		expect(t, look("$bob@"+b.domain), http.StatusOK, "")
	})
}

// flipHex changes the last digit of a hex string.
func flipHex(s string) string {
	n, _ := strconv.ParseUint(s[len(s)-1:], 16, 8)
	return s[:len(s)-1] + strconv.FormatUint((n+1)%16, 16)
}
