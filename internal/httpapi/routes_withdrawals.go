package httpapi

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/withdrawals"
)

func init() { routeGroups = append(routeGroups, (*Server).withdrawalRoutes) }

// withdrawalRoutes: crypto withdrawal fee estimates (R-QUOTE-42).
func (s *Server) withdrawalRoutes() {
	svc := &withdrawals.Service{DB: s.db, Pricing: s.pricingEngine, Config: s.config.Get}
	s.handle(route{pattern: "POST /crypto/estimate-withdrawal-fee", need: auth.NeedView,
		h: func(w http.ResponseWriter, r *http.Request) error {
			var req withdrawals.Request
			if err := decode(r, &req, func(req withdrawals.Request) error { return req.Validate() }); err != nil {
				return err
			}
			est, err := svc.Estimate(r.Context(), principal(r).Tenant, req)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, est)
			return nil
		}})
}
