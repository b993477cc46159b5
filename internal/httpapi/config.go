package httpapi

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
)

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) error {
	c, err := s.config.Get(r.Context(), principal(r).Tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) patchConfig(w http.ResponseWriter, r *http.Request) error {
	var p platformconfig.Patch
	if err := decode(r, &p, func(p platformconfig.Patch) error { return p.Validate(principal(r).Tenant.Env) }); err != nil {
		return err
	}
	c, err := s.config.Update(r.Context(), principal(r).Tenant, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
