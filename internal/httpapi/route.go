package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
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
	// storedBody, when set, is what of a response is stored for replay
	// (default: all of it). POST /tokens stores its token without the
	// secret, which is never kept in clear.
	storedBody func([]byte) []byte
	maxBody    int64
	// oversized, when set, answers a body longer than maxBody instead of
	// 413: it receives the body's first maxBody bytes (memory stays bounded)
	// and names what is too large, e.g. a file over its limit is 400
	// INVALID_INPUT (R-PDOC-04).
	oversized func(r *http.Request, prefix []byte) error
	// readAhead, when set, names the internal accounts a body asks about:
	// the credential's statement reads them (store.TokenByClientIDSeeing)
	// for the handler's read of them (InternalAccountsWithOwners). It only
	// saves a statement: a body it misreads is read as usual.
	readAhead func(body []byte) []string
	// query names every query parameter the route reads; any other is 400
	// INVALID_INPUT, so a misspelt filter never lists everything. Lists
	// declare theirs with listQuery.
	query []string
	// repeatable names the parameters of query that may be given more than
	// once; any other given twice is 400 INVALID_INPUT, never "first wins".
	repeatable []string
	// anyQuery: pages people open from links (which trackers decorate)
	// ignore parameters they do not read instead.
	anyQuery bool
	// agent: the caller is an agent with `Authorization: Bearer` (R-AUTH-07),
	// never platform credentials; agentNeeds is the policy permission the
	// route needs ("" for none). Platform routes never accept a bearer
	// token, and agent routes never accept Basic credentials.
	agent      bool
	agentNeeds string
	// open: under the version prefix but without credentials (POST
	// /agents/device-codes/redeem, R-AUTH-09).
	open bool
}

// badText: not UTF-8, or holding a NUL, which PostgreSQL text cannot store.
func badText(s string) bool { return !utf8.ValidString(s) || strings.ContainsRune(s, 0) }

// listQuery is the query of a list: limit, cursor and its filters.
func listQuery(filters ...string) []string { return append([]string{"limit", "cursor"}, filters...) }

// checkQuery refuses a query string that does not parse, any parameter the
// route does not declare, any repeated one it does not allow to repeat and
// any value that is not UTF-8 or holds a NUL, each named in details.errors[].
func checkQuery(r *http.Request, rt route) error {
	if r.URL.RawQuery == "" || rt.anyQuery {
		return nil
	}
	var f apierr.Fields
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		f.Add("(query)", apierr.Format, "is not a valid query string: %s", strings.TrimPrefix(err.Error(), "invalid "))
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if slices.Contains(rt.query, name) {
			if len(q[name]) > 1 && !slices.Contains(rt.repeatable, name) {
				f.Add(name, apierr.MaxItems, "must be given once")
			}
			if slices.ContainsFunc(q[name], badText) {
				f.Add(name, apierr.Format, "must be UTF-8 text without NUL (percent-encode its UTF-8 bytes)")
			}
			continue
		}
		accepted := "none"
		if len(rt.query) > 0 {
			accepted = strings.Join(rt.query, ", ")
		}
		f.Add(name, apierr.AdditionalProperties, "is not a query parameter of this endpoint (accepted: %s)", accepted)
	}
	return f.Err()
}

type bodyKey struct{}

// maxDrain bounds how much of an oversized body is read (and discarded)
// after its prefix, so the client, still sending, reads the answer instead
// of a reset connection.
const maxDrain = 64 << 20

// handle registers rt on the mux, wrapped in the checks it declares.
func (s *Server) handle(rt route) {
	s.table = append(s.table, rt)
	pattern := rt.pattern
	if !rt.public {
		method, path, _ := strings.Cut(pattern, " ")
		pattern = method + " /" + Version + path
		if strings.HasPrefix(path, "/sandbox/") {
			rt.sandboxOnly = true
		}
	}
	s.table = append(s.table, rt)
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.serveRoute(rt, w, r); err != nil {
			s.writeError(w, r, err)
		}
	}))
}

func (s *Server) serveRoute(rt route, w http.ResponseWriter, r *http.Request) error {
	if rt.public {
		if err := checkQuery(r, rt); err != nil {
			return err
		}
		return rt.h(w, r)
	}
	early := s.readEarly(w, r, rt)
	var ctx context.Context
	var err error
	switch {
	case rt.agent:
		ctx, err = s.authenticateAgent(w, r, rt)
	case rt.open:
		ctx = r.Context()
	default:
		ctx, err = s.authenticatePlatform(w, r, rt, early.accountIDs)
	}
	if err != nil {
		return err
	}
	// A malformed Idempotency-Key is refused wherever it is sent, so a client
	// never mistakes an ignored key for protection (R-IDEM-01).
	if utf8.RuneCountInString(r.Header.Get("Idempotency-Key")) > idempotency.MaxKeyLength {
		return idemKeyError(apierr.MaxLength, fmt.Sprintf("must be at most %d characters", idempotency.MaxKeyLength))
	}
	if err := checkQuery(r, rt); err != nil {
		return err
	}
	if hasBody(r) {
		body, bodyErr := early.body, early.err
		if !early.read {
			body, bodyErr = s.routeBody(w, r, rt)
		}
		if bodyErr != nil {
			return bodyErr
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

// earlyBody is a request's body read before authenticating (readEarly).
type earlyBody struct {
	read       bool
	body       []byte
	err        error // answered after authentication, as for every other route
	accountIDs []string
}

// readEarly reads the body of a route that reads ahead with the credential
// (readAhead) before authenticating, when it is small and declared and the
// client does not wait to be told to send it (Expect: 100-continue), and
// names the accounts it asks about. Otherwise it reads nothing.
func (s *Server) readEarly(w http.ResponseWriter, r *http.Request, rt route) earlyBody {
	if rt.readAhead == nil || rt.agent || rt.open || !hasBody(r) || r.ContentLength < 0 ||
		r.ContentLength > readAheadMaxBody || r.Header.Get("Expect") != "" {
		return earlyBody{}
	}
	e := earlyBody{read: true}
	e.body, e.err = s.routeBody(w, r, rt)
	if e.err == nil {
		e.accountIDs = rt.readAhead(e.body)
	}
	return e
}

// readAheadMaxBody bounds the body a route with readAhead reads before
// authenticating: a larger one (or one of unknown length) is read after, as
// on every other route, and nothing is read ahead.
const readAheadMaxBody = 16 << 10

func hasBody(r *http.Request) bool {
	return r.Method == http.MethodPost || r.Method == http.MethodPatch || r.Method == http.MethodPut
}

// routeBody reads the request's body within the route's limit, as the API
// error a failure answers.
func (s *Server) routeBody(w http.ResponseWriter, r *http.Request, rt route) ([]byte, error) {
	limit := rt.maxBody
	if limit == 0 {
		limit = s.opts.MaxBodyBytes
	}
	body, err := readBody(w, r, limit, rt.oversized != nil)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) && rt.oversized != nil:
		return nil, rt.oversized(r, body)
	case errors.As(err, &tooBig):
		return nil, apierr.Newf(apierr.CodePayloadTooLarge, "Request body exceeds %d bytes", limit)
	case err != nil:
		return nil, apierr.InvalidInput("Could not read the request body")
	}
	return body, nil
}

// authenticatePlatform checks HTTP Basic platform credentials, the token's
// rate, the sandbox restriction and the route's permission need. accountIDs
// are the internal accounts the route's body names (readAhead), read with
// the credential for the route's own read of them.
func (s *Server) authenticatePlatform(w http.ResponseWriter, r *http.Request, rt route, accountIDs []string) (context.Context, error) {
	// A route that records its key in its transaction asks next whether the
	// key is taken (idempotentInTx): the credential's statement answers it.
	ahead := store.ReadAhead{AccountIDs: accountIDs}
	if rt.recordsInTx {
		ahead.Key = r.Header.Get("Idempotency-Key")
	}
	p, seen, read, err := s.platformPrincipal(w, r, ahead)
	if err != nil {
		return nil, err
	}
	ctx := store.WithAccountsRead(r.Context(), seen.Accounts)
	if ahead.Key != "" {
		// Set even when not read (an in-process call: the zero keySeen,
		// whose key matches none), so that a call made from inside another
		// request never takes that request's look.
		var k keySeen
		if read {
			k = keySeen{key: ahead.Key, seen: seen.Key}
		}
		ctx = context.WithValue(ctx, keySeenKey{}, k)
	}
	r = r.WithContext(ctx)
	if err := s.admit(w, r, p); err != nil {
		return nil, err
	}
	if rt.sandboxOnly && !p.Sandbox() {
		return nil, apierr.Forbidden("Sandbox endpoints answer only to sandbox tokens")
	}
	if !p.Allows(rt.need) {
		return nil, apierr.Forbidden(forbiddenReason(rt.need))
	}
	return auth.WithPrincipal(r.Context(), p), nil
}

// platformPrincipal resolves platform credentials: the principal of an
// in-process call (Call), else the request's Basic credentials. Those are
// read with what ahead asks (store.TokenByClientIDSeeing), and read
// reports that they were; an in-process call reads nothing (the caller
// then looks things up itself).
func (s *Server) platformPrincipal(w http.ResponseWriter, r *http.Request, ahead store.ReadAhead) (p auth.Principal, seen store.Seen, read bool, err error) {
	if p, ok := inProcessPrincipal(r); ok {
		return p, store.Seen{}, false, nil
	}
	clientID, secret, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="paymentsd"`)
		return auth.Principal{}, store.Seen{}, false, apierr.Unauthorized()
	}
	if ahead.Key == "" && len(ahead.AccountIDs) == 0 {
		p, err = s.tokens.Authenticate(r.Context(), clientID, secret)
	} else {
		p, seen, err = s.tokens.AuthenticateSeeing(r.Context(), clientID, secret, ahead)
	}
	if err != nil {
		if _, isAPI := apierr.From(err); isAPI {
			w.Header().Set("WWW-Authenticate", `Basic realm="paymentsd"`)
		}
		return auth.Principal{}, store.Seen{}, false, err
	}
	return p, seen, true, nil
}

// keySeen is what the credential's statement found of a request's
// Idempotency-Key (authenticatePlatform), for idempotentInTx's first look.
type keySeen struct {
	key  string
	seen bool
}

type keySeenKey struct{}

// admit notes the caller for the access log and applies its request rate.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
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
	return nil
}

// readBody reads up to limit bytes of the body. A longer body is a
// *http.MaxBytesError; with keepPrefix the first limit bytes come with it
// and up to maxDrain more are read and discarded.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, keepPrefix bool) ([]byte, error) {
	if !keepPrefix {
		return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || int64(len(body)) <= limit {
		return body, err
	}
	_, _ = io.CopyN(io.Discard, r.Body, maxDrain)
	return body[:limit], &http.MaxBytesError{Limit: limit}
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
