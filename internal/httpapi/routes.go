package httpapi

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/auth"
)

// routes is the table of every endpoint. Paths without `public` live under
// /2025-10-13 and need credentials.
func (s *Server) routes() {
	// Operations and documentation.
	s.handle(route{pattern: "GET /healthz", public: true, h: s.healthz})
	s.handle(route{pattern: "GET /readyz", public: true, h: s.readyz})
	s.handle(route{pattern: "GET /metrics", public: true, h: adapt(s.metrics.handler())})
	s.handle(route{pattern: "GET /openapi.yaml", public: true, h: s.openapiDoc})
	s.handle(route{pattern: "GET /docs", public: true, h: s.docsPage})

	// API tokens (R-TOKCFG-01..04).
	s.handle(route{pattern: "POST /tokens", need: auth.NeedWrite, idempotent: true, storedBody: withoutClientSecret, h: s.createToken})
	s.handle(route{pattern: "GET /tokens", need: auth.NeedView, query: listQuery("name", "createdAfter", "createdBefore", "updatedAfter", "updatedBefore"), h: s.listTokens})
	s.handle(route{pattern: "GET /tokens/{tokenId}", need: auth.NeedView, h: s.getToken})
	s.handle(route{pattern: "DELETE /tokens/{tokenId}", need: auth.NeedWrite, h: s.deleteToken})

	// Platform configuration (R-TOKCFG-05..08).
	s.handle(route{pattern: "GET /config", need: auth.NeedView, h: s.getConfig})
	s.handle(route{pattern: "PATCH /config", need: auth.NeedWrite, h: s.patchConfig})

	// Capabilities register their own routes (see routeGroups).
	for _, group := range routeGroups {
		group(s)
	}

	s.mux.HandleFunc("/", s.notFound)
}

// routeGroups lets each capability keep its routes, handlers and service
// wiring in its own file: the file appends a function from init, e.g.
//
//	func init() { routeGroups = append(routeGroups, (*Server).customerRoutes) }
//
// Registration order does not matter: ServeMux picks the most specific
// pattern.
var routeGroups []func(*Server)

// adapt turns a plain handler into a route handler.
func adapt(h http.Handler) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	}
}
