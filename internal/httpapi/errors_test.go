package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Transport-level errors all answer in the spec's {code, reason, details}
// format and change nothing.
func TestErrors_Transport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{MaxBodyBytes: 1024})
		before := e.snapshot()
		expect(t, e.do("POST", "/tokens", `{"name":`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/tokens", `[]`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("PATCH", "/config", `{"umaDomain":"a.example.com"} trailing`), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/tokens", `{"name":"`+strings.Repeat("x", 2000)+`"}`), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		expect(t, e.do("GET", "/no-such-thing", nil), http.StatusNotFound, "NOT_FOUND")
		expect(t, e.do("GET", "//no-version/tokens", nil), http.StatusNotFound, "NOT_FOUND")
		r := e.do("PUT", "/tokens", `{}`)
		expect(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if allow := r.Header.Get("Allow"); allow != "GET, POST" {
			t.Errorf("Allow %q", allow)
		}
		expect(t, e.do("POST", "/config", `{}`), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if e.snapshot() != before {
			t.Fatal("refused requests changed stored data")
		}
	})
}

// A panic becomes 500 INTERNAL_ERROR without internals; the log has them.
func TestErrors_PanicIs500WithoutInternals(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.srv.handle(route{pattern: "GET /boom", h: func(w http.ResponseWriter, r *http.Request) error {
			panic("secret internal detail 42")
		}})
		e.undocumented["/"+Version+"/boom"] = true
		r := e.do("GET", "/boom", nil)
		expect(t, r, http.StatusInternalServerError, "INTERNAL_ERROR")
		if strings.Contains(string(r.Body), "secret internal detail") || strings.Contains(string(r.Body), "goroutine") {
			t.Fatalf("internals leaked: %s", r.Body)
		}
		if !strings.Contains(e.logs.String(), "secret internal detail 42") {
			t.Fatal("the panic must be logged")
		}
		// Plain errors are 500 too, logged but not shown.
		e.srv.handle(route{pattern: "GET /fail", h: func(w http.ResponseWriter, r *http.Request) error {
			return errFail
		}})
		e.undocumented["/"+Version+"/fail"] = true
		r = e.do("GET", "/fail", nil)
		expect(t, r, http.StatusInternalServerError, "INTERNAL_ERROR")
		if strings.Contains(string(r.Body), "database exploded") {
			t.Fatal("error text leaked")
		}
	})
}

type failErr struct{}

func (failErr) Error() string { return "database exploded" }

var errFail = failErr{}

// Empty-bodied POSTs are accepted (execute, approve…): an empty body decodes
// to the zero value and validation decides.
func TestErrors_EmptyBodyReachesValidation(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("POST", "/tokens", "")
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["name"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		expect(t, e.do("PATCH", "/config", ""), http.StatusOK, "")
	})
}
