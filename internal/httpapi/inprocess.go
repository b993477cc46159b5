package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/internal/auth"
)

// inProcessKey carries a principal that code in this process has already
// authenticated (the dashboard's signed-in session). Only Call sets it: a
// context value cannot arrive over the network, so no request from outside
// can skip Basic credentials with it.
type inProcessKey struct{}

// Call serves one API request in process, as the principal p, through the
// same router, route table, permission checks, rate limit, idempotency and
// error mapping as a request over HTTP. target is the path under the version
// prefix with its query ("/customers?limit=20"); a non-nil body is sent as
// application/json; idemKey, when set, is the Idempotency-Key. It returns the
// status and the response body.
//
// The dashboard is built on it, so a page shows exactly what the API answers
// and an action needs exactly the permission its API route needs.
func (s *Server) Call(ctx context.Context, p auth.Principal, method, target string, body []byte, idemKey string) (int, []byte) {
	if !strings.HasPrefix(target, "/") {
		target = "/" + target
	}
	ctx = context.WithValue(ctx, inProcessKey{}, p)
	r, err := http.NewRequestWithContext(ctx, method, "/"+Version+target, bytes.NewReader(body))
	if err != nil {
		return http.StatusBadRequest, nil
	}
	r.RemoteAddr = "in-process"
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		r.Header.Set("Idempotency-Key", idemKey)
	}
	rec := &callRecorder{header: http.Header{}}
	s.handler.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.status, rec.body.Bytes()
}

// inProcessPrincipal is the principal Call set, if any.
func inProcessPrincipal(r *http.Request) (auth.Principal, bool) {
	p, ok := r.Context().Value(inProcessKey{}).(auth.Principal)
	return p, ok
}

// callRecorder is the ResponseWriter of an in-process call.
type callRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *callRecorder) Header() http.Header { return w.header }

func (w *callRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *callRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(b)
}
