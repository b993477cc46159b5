// Package openapitest checks HTTP responses against the project's own OpenAPI
// document (api/openapi.yaml), so the document cannot drift from the code.
package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/paymentsd/paymentsd/api"
)

// spec is the parsed document and a router over its paths. It is built once
// per test binary: parsing and validating the document is the slow part.
type spec struct {
	doc    *openapi3.T
	router routers.Router
	// bases are the distinct path prefixes of the document's servers
	// ("/2025-10-13" for the API, "" for the public endpoints), longest first.
	bases []string
	// docBase is the prefix of the top-level servers, which operations
	// without their own servers inherit.
	docBase string
	err     error
}

var (
	loadOnce sync.Once
	loaded   spec
)

func load() *spec {
	loadOnce.Do(func() { loaded = build() })
	return &loaded
}

func build() spec {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPI)
	if err != nil {
		return spec{err: fmt.Errorf("api/openapi.yaml does not parse: %w", err)}
	}
	if err := doc.Validate(loader.Context); err != nil {
		return spec{err: fmt.Errorf("api/openapi.yaml is not a valid OpenAPI document: %w", err)}
	}
	s := spec{doc: doc}
	if s.docBase, err = basePath(doc.Servers); err != nil {
		return spec{err: err}
	}
	seen := map[string]bool{s.docBase: true}
	for _, item := range doc.Paths.Map() {
		lists := []openapi3.Servers{item.Servers}
		for _, op := range item.Operations() {
			if op.Servers != nil {
				lists = append(lists, *op.Servers)
			}
		}
		for _, servers := range lists {
			if len(servers) == 0 {
				continue
			}
			b, err := basePath(servers)
			if err != nil {
				return spec{err: err}
			}
			seen[b] = true
		}
	}
	for b := range seen {
		s.bases = append(s.bases, b)
	}
	sort.Slice(s.bases, func(i, j int) bool { return len(s.bases[i]) > len(s.bases[j]) })

	// The router matches document paths only. Test requests seldom carry the
	// documented host (httptest picks its own port, server-side requests
	// have none), so Check strips the server prefix itself instead of
	// letting the router match whole server URLs.
	doc.Servers = nil
	if s.router, err = legacy.NewRouter(doc); err != nil {
		return spec{err: fmt.Errorf("api/openapi.yaml: building router: %w", err)}
	}
	return s
}

// basePath is the path part of the first server URL ("" when none or root).
func basePath(servers openapi3.Servers) (string, error) {
	if len(servers) == 0 {
		return "", nil
	}
	u, err := url.Parse(servers[0].URL)
	if err != nil {
		return "", fmt.Errorf("api/openapi.yaml: server URL %q: %w", servers[0].URL, err)
	}
	return strings.TrimSuffix(u.Path, "/"), nil
}

// serverBase is the prefix under which route is served: the servers of its
// operation or path item if they declare any, otherwise the document's.
func (s *spec) serverBase(route *routers.Route) string {
	if ops := route.Operation.Servers; ops != nil && len(*ops) > 0 {
		b, _ := basePath(*ops)
		return b
	}
	if len(route.PathItem.Servers) > 0 {
		b, _ := basePath(route.PathItem.Servers)
		return b
	}
	return s.docBase
}

// findRoute maps a request path such as /2025-10-13/tokens or /healthz to
// its documented operation, and returns the path without its server prefix.
func (s *spec) findRoute(method, path string) (*routers.Route, map[string]string, string, error) {
	route, params, rest, misplaced := s.match(method, path)
	switch {
	case route != nil:
		return route, params, rest, nil
	case misplaced != "":
		return nil, nil, "", fmt.Errorf("not documented at this path; the document has it at %s", misplaced)
	}
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if r, _, _, _ := s.match(m, path); r != nil {
			return nil, nil, "", errors.New("not documented: the path is, but not with this method")
		}
	}
	return nil, nil, "", errors.New("not documented: no such path in api/openapi.yaml")
}

// match tries each server prefix, longest first, and accepts an operation
// only if it is served under the prefix it was found with, so /healthz under
// the version prefix, or /tokens at the root, does not match. misplaced then
// names where the document has it.
func (s *spec) match(method, path string) (route *routers.Route, params map[string]string, rest, misplaced string) {
	for _, base := range s.bases {
		sub, ok := strings.CutPrefix(path, base)
		if !ok || !strings.HasPrefix(sub, "/") {
			continue
		}
		r, p, err := s.router.FindRoute(&http.Request{Method: method, URL: &url.URL{Path: sub}})
		if err != nil {
			continue
		}
		if want := s.serverBase(r); want != base {
			misplaced = want + r.Path
			continue
		}
		return r, p, sub, ""
	}
	return nil, nil, "", misplaced
}

// Bodies of these media types are not JSON and have no schema worth
// checking; only their media type is compared with the document.
var opaqueMedia = []string{"text/html", "text/plain", "application/yaml"}

// Check fails t when the response (status, headers, body) to req does not
// match the document: unknown path or method, undocumented status, or a body
// that violates the response schema.
func Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	s := load()
	if s.err != nil {
		t.Fatalf("openapitest: %v", s.err)
		return // a fake TB's Fatalf may return
	}
	what := fmt.Sprintf("%s %s → %d", req.Method, req.URL.Path, status)
	route, params, rest, err := s.findRoute(req.Method, req.URL.Path)
	if err != nil {
		t.Errorf("openapitest: %s: %v", what, err)
		return
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil {
		resp = route.Operation.Responses.Default()
	}
	if resp == nil || resp.Value == nil {
		t.Errorf("openapitest: %s: status %d is not documented for %s %s (documented: %s)",
			what, status, route.Method, route.Path, strings.Join(documentedStatuses(route.Operation), ", "))
		return
	}

	ct := header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	switch {
	case len(resp.Value.Content) == 0 && len(body) > 0:
		t.Errorf("openapitest: %s: the document describes no body for this status, got %d bytes (%s)", what, len(body), ct)
		return
	case len(resp.Value.Content) > 0 && resp.Value.Content.Get(ct) == nil:
		t.Errorf("openapitest: %s: Content-Type %q is not documented (documented: %s)",
			what, ct, strings.Join(slices.Sorted(maps.Keys(resp.Value.Content)), ", "))
		return
	}

	// The path without its server prefix, as the router saw it.
	routed := req.Clone(context.Background())
	routed.URL.Path, routed.URL.RawPath = rest, ""
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    routed,
			PathParams: params,
			Route:      route,
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
			ExcludeResponseBody:   slices.Contains(opaqueMedia, media) || len(resp.Value.Content) == 0,
			// Credentials are the server's concern, not the document's;
			// the scheme is only named here.
			AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			// The body is printed with the failure; kin-openapi's schema
			// dumps would only bury the one line that matters.
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		t.Errorf("openapitest: %s: response does not match api/openapi.yaml: %s\nbody: %s", what, describe(err), truncate(body, 2000))
	}
}

func documentedStatuses(op *openapi3.Operation) []string {
	return slices.Sorted(maps.Keys(op.Responses.Map()))
}

// describe puts each problem kin-openapi found on its own line; by default
// it joins them with " | ".
func describe(err error) string {
	var re *openapi3filter.ResponseError
	if !errors.As(err, &re) || re.Err == nil {
		return err.Error()
	}
	var lines []string
	var me openapi3.MultiError
	if errors.As(re.Err, &me) {
		for _, e := range me {
			lines = append(lines, e.Error())
		}
	} else {
		lines = []string{re.Err.Error()}
	}
	return re.Reason + ":\n  " + strings.Join(lines, "\n  ")
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "… (" + strconv.Itoa(len(b)) + " bytes)"
}

// QueryParameters lists the query parameters the document gives the
// operation at method and path (a pattern such as /tokens/{tokenId}, without
// the version prefix), and those of them that are arrays (repeatable), or
// reports false when it has no such operation.
func QueryParameters(method, path string) (names, arrays []string, ok bool) {
	s := load()
	if s.err != nil || s.doc.Paths.Find(path) == nil {
		return nil, nil, false
	}
	item := s.doc.Paths.Find(path)
	op := item.GetOperation(strings.ToUpper(method))
	if op == nil {
		return nil, nil, false
	}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, p := range list {
			if p.Value == nil || p.Value.In != openapi3.ParameterInQuery || slices.Contains(names, p.Value.Name) {
				continue
			}
			names = append(names, p.Value.Name)
			if sc := p.Value.Schema; sc != nil && sc.Value != nil && sc.Value.Type.Is(openapi3.TypeArray) {
				arrays = append(arrays, p.Value.Name)
			}
		}
	}
	return names, arrays, true
}
