package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/sca"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

func init() { routeGroups = append(routeGroups, (*Server).scaRoutes) }

// scaServices holds each server's SCA service (quotes reach the same one).
var scaServices sync.Map // *Server → *sca.Service

// scaService returns the server's SCA service, creating it on first use.
// TOTP secrets are sealed like wallet secrets: under a data key kept in
// server_secrets ("sca-sealing"), which the store seals under the
// operator's key ring (internal/keyring).
func (s *Server) scaService() *sca.Service {
	if svc, ok := scaServices.Load(s); ok {
		return svc.(*sca.Service)
	}
	var sealer sca.Sealer
	secret, err := s.db.ServerSecret(context.Background(), "sca-sealing")
	if err == nil {
		sealer, err = wallets.NewLocalSealer(secret)
	}
	if err != nil {
		s.log.Error("sca: no sealer; TOTP enrolment will fail", "err", err)
		sealer = refusingSealer{err: err}
	}
	svc, _ := scaServices.LoadOrStore(s, sca.New(s.db, sealer, s.log))
	return svc.(*sca.Service)
}

// refusingSealer stands in when the sealing key cannot be read: every
// secret operation fails (500), nothing is stored in clear.
type refusingSealer struct{ err error }

func (r refusingSealer) Seal([]byte, []byte) ([]byte, error) { return nil, r.err }
func (r refusingSealer) Open([]byte, []byte) ([]byte, error) { return nil, r.err }

// scaRoutes: strong customer authentication (R-SCA-01..08, R-AUTH-03).
// Every /sca endpoint names its customer with ?customerId= and answers 409
// for a customer who does not need SCA. Enrolling, logging in and
// authorizing change state (MANAGE; authorizing a payout moves money,
// TRANSACT).
func (s *Server) scaRoutes() {
	h := &scaHandlers{s: s, svc: s.scaService()}
	c := []string{"customerId"}
	s.handle(route{pattern: "GET /sca/factors", need: auth.NeedView, query: c, h: h.listFactors})
	s.handle(route{pattern: "POST /sca/factors", need: auth.NeedWrite, query: c, h: h.enrol})
	s.handle(route{pattern: "POST /sca/factors/confirm", need: auth.NeedWrite, query: c, h: h.confirm})
	s.handle(route{pattern: "DELETE /sca/factors/{credentialId}", need: auth.NeedWrite, query: c, h: h.deleteFactor})
	s.handle(route{pattern: "POST /sca/login/start", need: auth.NeedWrite, query: c, h: h.loginStart})
	s.handle(route{pattern: "POST /sca/login/complete", need: auth.NeedWrite, query: c, h: h.loginComplete})
	s.handle(route{pattern: "POST /sca/record-event", need: auth.NeedWrite, query: c, h: h.recordEvent})
	s.handle(route{pattern: "POST /sca/factors/reset", need: auth.NeedWrite, idempotent: true, query: c, h: h.resetStart})
	s.handle(route{pattern: "GET /sca/factors/reset/{resetId}", need: auth.NeedView, query: c, h: h.resetGet})
	s.handle(route{pattern: "POST /sca/factors/reset/{resetId}/complete", need: auth.NeedWrite, query: c, h: h.resetComplete})
	s.handle(route{pattern: "POST /sandbox/sca/factors/reset/{resetId}/liveness", need: auth.NeedWrite, sandboxOnly: true,
		query: c, h: h.simulateLiveness})
	s.handle(route{pattern: "GET /sca/decisions", need: auth.NeedView, query: c, h: h.decisions})
	s.handle(route{pattern: "GET /sca/settings", need: auth.NeedView, h: h.getSettings})
	s.handle(route{pattern: "PATCH /sca/settings", need: auth.NeedWrite, h: h.patchSettings})
	s.handle(route{pattern: "POST /quotes/{quoteId}/authorize", need: auth.NeedMoney, idempotent: true, h: h.authorize})
	s.handle(route{pattern: "POST /quotes/{quoteId}/authorize/resend", need: auth.NeedMoney, h: h.resend})
}

type scaHandlers struct {
	s   *Server
	svc *sca.Service
}

// customerOf is the required ?customerId=.
func customerOf(r *http.Request) (string, error) {
	c := r.URL.Query().Get("customerId")
	if c == "" {
		var f apierr.Fields
		f.Add("customerId", apierr.Required, "is required: the customer whose SCA this is")
		return "", f.Err()
	}
	return c, nil
}

// scaCall decodes the body (when req is not nil), reads the customer and
// calls fn.
func scaCall[Req, Out any](w http.ResponseWriter, r *http.Request, status int, fn func(ctx context.Context, t store.Tenant, c string, req Req) (Out, error)) error {
	var req Req
	if err := decode(r, &req, nil); err != nil {
		return err
	}
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	out, err := fn(r.Context(), principal(r).Tenant, c, req)
	if err != nil {
		return err
	}
	writeJSON(w, status, out)
	return nil
}

func (h *scaHandlers) listFactors(w http.ResponseWriter, r *http.Request) error {
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	out, err := h.svc.ListFactors(r.Context(), principal(r).Tenant, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *scaHandlers) enrol(w http.ResponseWriter, r *http.Request) error {
	return scaCall(w, r, http.StatusOK, h.svc.StartEnrolment)
}

func (h *scaHandlers) confirm(w http.ResponseWriter, r *http.Request) error {
	return scaCall(w, r, http.StatusOK, h.svc.ConfirmEnrolment)
}

func (h *scaHandlers) deleteFactor(w http.ResponseWriter, r *http.Request) error {
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteFactor(r.Context(), principal(r).Tenant, c, r.PathValue("credentialId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *scaHandlers) loginStart(w http.ResponseWriter, r *http.Request) error {
	return scaCall(w, r, http.StatusOK, h.svc.StartLogin)
}

func (h *scaHandlers) loginComplete(w http.ResponseWriter, r *http.Request) error {
	return scaCall(w, r, http.StatusOK, h.svc.CompleteLogin)
}

func (h *scaHandlers) recordEvent(w http.ResponseWriter, r *http.Request) error {
	return scaCall(w, r, http.StatusOK, h.svc.RecordEvent)
}

func (h *scaHandlers) resetStart(w http.ResponseWriter, r *http.Request) error {
	return scaCall(w, r, http.StatusCreated, h.svc.StartReset)
}

func (h *scaHandlers) resetGet(w http.ResponseWriter, r *http.Request) error {
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	out, err := h.svc.GetReset(r.Context(), principal(r).Tenant, c, r.PathValue("resetId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *scaHandlers) resetComplete(w http.ResponseWriter, r *http.Request) error {
	var req sca.ResetCompleteRequest
	if len(bytes.TrimSpace(bodyOf(r))) > 0 {
		if err := decode(r, &req, nil); err != nil {
			return err
		}
	}
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	if err := h.svc.CompleteReset(r.Context(), principal(r).Tenant, c, r.PathValue("resetId"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// livenessRequest is the body of the sandbox's liveness simulation.
type livenessRequest struct {
	Outcome *string `json:"outcome"`
}

func (h *scaHandlers) simulateLiveness(w http.ResponseWriter, r *http.Request) error {
	var req livenessRequest
	if err := decode(r, &req, func(req livenessRequest) error {
		if req.Outcome == nil || (*req.Outcome != "PASSED" && *req.Outcome != "REJECTED") {
			var f apierr.Fields
			f.Add("outcome", apierr.Enum, "must be PASSED or REJECTED")
			return f.Err()
		}
		return nil
	}); err != nil {
		return err
	}
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	out, err := h.svc.SimulateLiveness(r.Context(), principal(r).Tenant, c, r.PathValue("resetId"), *req.Outcome == "PASSED")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// decisionList is GET /sca/decisions.
type decisionList struct {
	Data []sca.Decision `json:"data"`
}

func (h *scaHandlers) decisions(w http.ResponseWriter, r *http.Request) error {
	c, err := customerOf(r)
	if err != nil {
		return err
	}
	out, err := h.svc.Decisions(r.Context(), principal(r).Tenant, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, decisionList{Data: out})
	return nil
}

func (h *scaHandlers) getSettings(w http.ResponseWriter, r *http.Request) error {
	out, err := h.svc.Settings(r.Context(), h.s.db.Read(), principal(r).Tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *scaHandlers) patchSettings(w http.ResponseWriter, r *http.Request) error {
	var req sca.SettingsPatch
	if err := decode(r, &req, func(p sca.SettingsPatch) error { return p.Validate() }); err != nil {
		return err
	}
	out, err := h.svc.PatchSettings(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *scaHandlers) authorize(w http.ResponseWriter, r *http.Request) error {
	var req sca.Proof
	if err := decode(r, &req, func(p sca.Proof) error { return p.Validate() }); err != nil {
		return err
	}
	quoteRecordStatus(r, http.StatusOK)
	q, err := h.s.quoteService().Authorize(r.Context(), principal(r).Tenant, r.PathValue("quoteId"), req,
		r.Header.Get(signedretry.HeaderSignature))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

func (h *scaHandlers) resend(w http.ResponseWriter, r *http.Request) error {
	if err := h.s.quoteService().Resend(r.Context(), principal(r).Tenant, r.PathValue("quoteId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// withSca shows on customers whether they need SCA (scaRequired).
func (s *Server) withSca(ctx context.Context, t store.Tenant, cs ...*customers.Customer) error {
	settings, err := s.scaService().Settings(ctx, s.db.Read(), t)
	if err != nil {
		return err
	}
	for _, c := range cs {
		need := sca.RequiredFor(c.Profile, settings)
		c.ScaRequired = &need
	}
	return nil
}
