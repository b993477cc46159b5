package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/paymentdocs"
)

func init() { routeGroups = append(routeGroups, (*Server).paymentDocumentRoutes) }

// paymentDocumentRoutes: documents supporting a CNY business payout
// (R-PDOC-01..12). Attaching them is the quote service's step (see
// PaymentDocuments).
func (s *Server) paymentDocumentRoutes() {
	h := &paymentDocumentHandlers{s: s}
	// A body over the upload limit carries a file over MaxFileBytes: 400 like
	// any file outside the bounds (R-PDOC-04), without reading the rest.
	s.handle(route{pattern: "POST /payment-documents", need: auth.NeedWrite, idempotent: true, maxBody: paymentdocs.MaxUploadBody,
		oversize: paymentdocs.FileTooLarge, h: h.upload})
	s.handle(route{pattern: "GET /payment-documents/{paymentDocumentId}", need: auth.NeedView, h: h.get})
}

type paymentDocumentEntry struct {
	once sync.Once
	svc  *paymentdocs.Service
	err  error
}

// paymentDocumentServices holds each server's payment documents service.
var paymentDocumentServices sync.Map // *Server → *paymentDocumentEntry

// PaymentDocuments returns the server's payment documents service (made on
// first use, over the server's blob store). The quote service calls its
// AttachRequired inside the quote's transaction and ReleaseFiles after it
// commits.
func (s *Server) PaymentDocuments() (*paymentdocs.Service, error) {
	v, _ := paymentDocumentServices.LoadOrStore(s, &paymentDocumentEntry{})
	e := v.(*paymentDocumentEntry)
	e.once.Do(func() {
		parts, err := s.fileParts()
		if err != nil {
			e.err = err
			return
		}
		e.svc = &paymentdocs.Service{DB: s.db, Blobs: parts.blobs, Log: s.log}
	})
	return e.svc, e.err
}

// RunPaymentDocumentWork deletes the files of attached, expired and
// abandoned payment documents every minute until ctx ends (see
// paymentdocs.Service.Sweep). Every node may run it.
func (s *Server) RunPaymentDocumentWork(ctx context.Context) {
	svc, err := s.PaymentDocuments()
	if err != nil {
		s.log.Error("payment documents disabled: blob store", "error", err.Error())
		return
	}
	svc.RunMaintenance(ctx, paymentdocs.DefaultMaintenanceInterval)
}

type paymentDocumentHandlers struct{ s *Server }

func (h *paymentDocumentHandlers) upload(w http.ResponseWriter, r *http.Request) error {
	u, err := paymentdocs.ParseUpload(r.Header.Get("Content-Type"), bodyOf(r))
	if err != nil {
		return err
	}
	svc, err := h.s.PaymentDocuments()
	if err != nil {
		return err
	}
	created(r)
	d, err := svc.Upload(r.Context(), principal(r).Tenant, u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

func (h *paymentDocumentHandlers) get(w http.ResponseWriter, r *http.Request) error {
	svc, err := h.s.PaymentDocuments()
	if err != nil {
		return err
	}
	d, err := svc.Get(r.Context(), principal(r).Tenant, r.PathValue("paymentDocumentId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}
