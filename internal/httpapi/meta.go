package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/api"
	"github.com/paymentsd/paymentsd/internal/apierr"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 only while the database answers.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		return apierr.New(apierr.CodeNotReady, "The database does not answer")
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "database": string(s.db.Engine())})
	return nil
}

func (s *Server) openapiDoc(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(api.OpenAPI)
	return nil
}

func (s *Server) docsPage(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(api.DocsHTML())
	return nil
}
