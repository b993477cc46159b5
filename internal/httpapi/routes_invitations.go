package httpapi

import (
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/invitations"
)

func init() { routeGroups = append(routeGroups, (*Server).invitationRoutes) }

// invitationRoutes: UMA invitations (R-INV-*).
func (s *Server) invitationRoutes() {
	h := &invitationHandlers{svc: s.invitationService()}
	s.handle(route{pattern: "POST /invitations", need: auth.NeedWrite, idempotent: true, recordsInTx: true, h: h.create})
	s.handle(route{pattern: "GET /invitations/{invitationCode}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "POST /invitations/{invitationCode}/claim", need: auth.NeedWrite, idempotent: true, recordsInTx: true, h: h.claim})
	s.handle(route{pattern: "POST /invitations/{invitationCode}/cancel", need: auth.NeedWrite, idempotent: true, recordsInTx: true, h: h.cancel})
}

var invitationServices sync.Map // *Server → *invitations.Service

func (s *Server) invitationService() *invitations.Service {
	if svc, ok := invitationServices.Load(s); ok {
		return svc.(*invitations.Service)
	}
	v, _ := invitationServices.LoadOrStore(s, &invitations.Service{DB: s.db, UMA: s.umaService()})
	return v.(*invitations.Service)
}

type invitationHandlers struct{ svc *invitations.Service }

func (h *invitationHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req invitations.CreateRequest
	if err := decode(r, &req, invitations.CreateRequest.Validate); err != nil {
		return err
	}
	created(r)
	inv, err := h.svc.Create(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, inv)
	return nil
}

func (h *invitationHandlers) get(w http.ResponseWriter, r *http.Request) error {
	inv, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("invitationCode"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inv)
	return nil
}

func (h *invitationHandlers) claim(w http.ResponseWriter, r *http.Request) error {
	var req invitations.ClaimRequest
	if err := decode(r, &req, invitations.ClaimRequest.Validate); err != nil {
		return err
	}
	inv, err := h.svc.Claim(r.Context(), principal(r).Tenant, r.PathValue("invitationCode"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inv)
	return nil
}

func (h *invitationHandlers) cancel(w http.ResponseWriter, r *http.Request) error {
	inv, err := h.svc.Cancel(r.Context(), principal(r).Tenant, r.PathValue("invitationCode"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inv)
	return nil
}
