package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/idempotency"
)

// handlerFunc is a handler that returns its error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// route declares one endpoint and what it requires.
type route struct {
	pattern     string // "METHOD /path" under the version prefix, or absolute with public
	h           handlerFunc
	need        auth.Need
	public      bool // no credentials, no version prefix (health, metrics, docs)
	sandboxOnly bool // /sandbox/*: sandbox tokens only
	idempotent  bool // honours Idempotency-Key
	requireIdem bool // refuses requests without Idempotency-Key
	// replayStatus, when set, is the status of a replayed success (2xx)
	// instead of the stored one: POST /internal-accounts answers 201 first
	// and 200 on replay (R-IDEM-08). Stored errors replay as they were.
	replayStatus int
	// recordsInTx: every success of the handler records its response with
	// idempotency.Record in the effect's transaction, so the key is not
	// claimed first (an optimistic claim: one commit less, and nothing left
	// locked if the process dies mid-request).
	recordsInTx bool
	maxBody     int64
	// oversize, when set, is the answer to a body over maxBody instead of
	// 413 PAYLOAD_TOO_LARGE (an upload whose file is over its size bound).
	oversize func() error
}

type bodyKey struct{}

// handle registers rt on the mux, wrapped in the checks it declares.
func (s *Server) handle(rt route) {
	pattern := rt.pattern
	if !rt.public {
		method, path, _ := strings.Cut(pattern, " ")
		pattern = method + " /" + Version + path
		if strings.HasPrefix(path, "/sandbox/") {
			rt.sandboxOnly = true
		}
	}
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.serveRoute(rt, w, r); err != nil {
			s.writeError(w, r, err)
		}
	}))
}

func (s *Server) serveRoute(rt route, w http.ResponseWriter, r *http.Request) error {
	if rt.public {
		return rt.h(w, r)
	}
	clientID, secret, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="paymentsd"`)
		return apierr.Unauthorized()
	}
	p, err := s.tokens.Authenticate(r.Context(), clientID, secret)
	if err != nil {
		if _, isAPI := apierr.From(err); isAPI {
			w.Header().Set("WWW-Authenticate", `Basic realm="paymentsd"`)
		}
		return err
	}
	if note, ok := r.Context().Value(tenantNoteKey{}).(*tenantNote); ok {
		note.principal = &p
	}
	if s.limiter != nil {
		if ok, wait := s.limiter.Allow(p.TokenID); !ok {
			secs := int((wait + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			return apierr.Newf(apierr.CodeRateLimited, "Too many requests for this token; retry after %d s", secs)
		}
	}
	if rt.sandboxOnly && !p.Sandbox() {
		return apierr.Forbidden("Sandbox endpoints answer only to sandbox tokens")
	}
	if !p.Allows(rt.need) {
		return apierr.Forbidden(forbiddenReason(rt.need))
	}
	// A malformed Idempotency-Key is refused wherever it is sent, so a client
	// never mistakes an ignored key for protection (R-IDEM-01).
	if len(r.Header.Get("Idempotency-Key")) > idempotency.MaxKeyLength {
		return idemKeyError(apierr.MaxLength, fmt.Sprintf("must be at most %d characters", idempotency.MaxKeyLength))
	}
	ctx := auth.WithPrincipal(r.Context(), p)
	if r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut {
		limit := rt.maxBody
		if limit == 0 {
			limit = s.opts.MaxBodyBytes
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			if rt.oversize != nil {
				return rt.oversize()
			}
			return apierr.Newf(apierr.CodePayloadTooLarge, "Request body exceeds %d bytes", limit)
		}
		if err != nil {
			return apierr.InvalidInput("Could not read the request body")
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ctx = context.WithValue(ctx, bodyKey{}, body)
	}
	r = r.WithContext(ctx)
	if rt.idempotent {
		return s.idempotent(rt, w, r)
	}
	return rt.h(w, r)
}

func forbiddenReason(n auth.Need) string {
	switch n {
	case auth.NeedMoney:
		return "This endpoint moves money and needs a token with TRANSACT permission"
	case auth.NeedWrite:
		return "This endpoint changes data and needs a token with TRANSACT or MANAGE permission"
	}
	return "This token may not call this endpoint"
}

// bodyOf returns the request body read by the route wrapper.
func bodyOf(r *http.Request) []byte {
	b, _ := r.Context().Value(bodyKey{}).([]byte)
	return b
}

// principal returns the authenticated caller.
func principal(r *http.Request) auth.Principal {
	p, _ := auth.FromContext(r.Context())
	return p
}

// notFound answers unmatched paths with JSON, and paths that exist under other
// methods with 405 and an Allow header.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pat := s.mux.Handler(probe); pat != "" && pat != "/" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(w, r, apierr.Newf(apierr.CodeMethodNotAllowed, "%s is not allowed on %s; allowed: %s",
			r.Method, r.URL.Path, strings.Join(allowed, ", ")))
		return
	}
	s.writeError(w, r, apierr.Newf(apierr.CodeNotFound, "No endpoint at %s %s", r.Method, r.URL.Path))
}
