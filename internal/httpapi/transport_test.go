package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// rawExchange writes req on a fresh TCP connection to addr and reads the
// response.
func rawExchange(t *testing.T, addr, req string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() { _, _ = io.WriteString(conn, req) }() // an oversized request may not be read whole
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// checkJSONError asserts an error response in the spec's format, with the
// message and status real clients read.
func checkJSONError(t *testing.T, res *http.Response, body []byte, status int, code string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q: not a JSON error: %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	// R-ERR-01: code and reason are strings.
	if res.StatusCode != status || m["code"] != code || m["reason"] == "" || m["message"] != m["reason"] ||
		m["status"] != float64(status) || res.Header.Get("X-Request-Id") == "" {
		t.Fatalf("%d %v, want %d %s", res.StatusCode, m, status, code)
	}
}

// Serves the API over real TCP the way cmd/paymentsd does (WrapListener).
func serveTCP(t *testing.T, e *env) string {
	ts := httptest.NewUnstartedServer(e.srv)
	ts.Listener = WrapListener(ts.Listener)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String()
}

// Issue 16, item 9: the answers Go's server gives before routing (a bad
// %-escape in the path, oversized headers, an unknown transfer coding or
// protocol version) are JSON errors like every other (R-ERR-01), and
// ordinary requests on the same listener are untouched.
func TestTransport_ServerRefusalsAreJSON_R_ERR_01(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite(t), Options{})
	addr := serveTCP(t, e)
	for _, c := range []struct {
		name, req string
		status    int
		code      string
	}{
		{"bad percent escape", "GET /2025-10-13/tokens/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "INVALID_INPUT"},
		{"bad escape in the version", "GET /%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n", 400, "INVALID_INPUT"},
		{"malformed header", "GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", 400, "INVALID_INPUT"},
		{"missing Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "INVALID_INPUT"},
		{"oversized header", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20+8192) + "\r\n\r\n",
			431, "REQUEST_HEADERS_TOO_LARGE"},
		{"unknown transfer coding", "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "NOT_IMPLEMENTED"},
		{"unsupported version", "GET /healthz HTTP/2.7\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, body := rawExchange(t, addr, c.req)
			checkJSONError(t, res, body, c.status, c.code)
		})
	}
	res, body := rawExchange(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ok"`) {
		t.Fatalf("healthz: %d %s", res.StatusCode, body)
	}
	res, body = rawExchange(t, addr, "GET /2025-10-13/tokens HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	checkJSONError(t, res, body, http.StatusUnauthorized, "UNAUTHORIZED")
}
