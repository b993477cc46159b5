package httpapi

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/auth"
)

func init() { routeGroups = append(routeGroups, (*Server).receiverRoutes) }

// receiverRoutes: receiver lookup for external accounts (Part B "Quotes and
// transfers"; the UMA lookup, GET /receiver/uma/{receiverUmaAddress}, is in
// routes_uma.go).
func (s *Server) receiverRoutes() {
	s.handle(route{pattern: "GET /receiver/external-account/{accountId}", need: auth.NeedView, query: []string{"customerId", "sendingCurrency"}, h: s.lookupExternalAccount})
}

func (s *Server) lookupExternalAccount(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	l, err := s.quoteService().LookupExternalAccount(r.Context(), principal(r).Tenant, r.PathValue("accountId"),
		q.Get("customerId"), q.Get("sendingCurrency"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}
