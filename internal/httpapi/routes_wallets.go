package httpapi

import (
	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/customers"
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

func init() { routeGroups = append(routeGroups, (*Server).walletRoutes) }

// walletServices holds each server's embedded-wallet service, so the
// accounts service (provisioning) and the wallet routes reach the same one.
var walletServices sync.Map // *Server → *wallets.Service

// walletService returns the server's embedded-wallet service, creating it
// on first use with the sealer of the server's options.
func (s *Server) walletService() *wallets.Service {
	if svc, ok := walletServices.Load(s); ok {
		return svc.(*wallets.Service)
	}
	fresh := wallets.New(s.db, s.opts.WalletSealer, s.log)
	fresh.OIDC.Sandbox = s.sandboxIssuer()
	fresh.Sender = s.opts.OTPSender
	if s.guard != nil { // configured issuers are fetched under the outbound address policy
		fresh.OIDC.CheckIssuer = s.guard.CheckEndpoint
	}
	svc, _ := walletServices.LoadOrStore(s, fresh)
	return svc.(*wallets.Service)
}

// withWallets wires embedded wallets into a customers service: a contact
// change tied to wallet OTP credentials is signed (wallets.ContactChange).
func (s *Server) withWallets(svc *customers.Service) *customers.Service {
	svc.ContactChange = s.walletService().ContactChange
	return svc
}

// walletRoutes: embedded-wallet credentials and sessions (R-EWA-*), with
// the signed retry of package signedretry (R-AUTH-10..17).
func (s *Server) walletRoutes() {
	h := &walletHandlers{svc: s.walletService(), accounts: s.accountService}
	s.handle(route{pattern: "POST /auth/credentials", need: auth.NeedWrite, h: h.createCredential})
	s.handle(route{pattern: "GET /auth/credentials", need: auth.NeedView, query: []string{"accountId"}, h: h.listCredentials})
	s.handle(route{pattern: "DELETE /auth/credentials/{id}", need: auth.NeedWrite, h: h.revokeCredential})
	s.handle(route{pattern: "POST /auth/credentials/{id}/challenge", need: auth.NeedWrite, h: h.challenge})
	s.handle(route{pattern: "POST /auth/credentials/{id}/verify", need: auth.NeedWrite, h: h.verify})
	s.handle(route{pattern: "GET /auth/sessions", need: auth.NeedView, query: []string{"accountId"}, h: h.listSessions})
	s.handle(route{pattern: "DELETE /auth/sessions/{id}", need: auth.NeedWrite, h: h.revokeSession})
	s.handle(route{pattern: "POST /auth/sessions/{id}/refresh", need: auth.NeedWrite, h: h.refreshSession})
	s.handle(route{pattern: "PATCH /internal-accounts/{id}", need: auth.NeedWrite, h: h.setPrivacy})
	s.handle(route{pattern: "POST /internal-accounts/{id}/export", need: auth.NeedWrite, h: h.export})
	s.handle(route{pattern: "POST /internal-accounts/{id}/export/approve", need: auth.NeedWrite, h: h.approveExport})
	s.handle(route{pattern: "POST /auth/delegated-keys", need: auth.NeedWrite, h: h.createDelegatedKey})
	s.handle(route{pattern: "GET /auth/delegated-keys", need: auth.NeedView, query: []string{"accountId", "fundingSourceId"}, h: h.listDelegatedKeys})
	s.handle(route{pattern: "GET /auth/delegated-keys/{id}", need: auth.NeedView, h: h.getDelegatedKey})
	s.handle(route{pattern: "DELETE /auth/delegated-keys/{id}", need: auth.NeedWrite, h: h.revokeDelegatedKey})
}

type walletHandlers struct {
	svc      *wallets.Service
	accounts func() *accounts.Service
}

// incoming is the signed-retry view of a request.
func incoming(r *http.Request) signedretry.Incoming {
	return signedretry.Incoming{TokenID: principal(r).TokenID, Method: r.Method, Path: r.URL.Path, Body: bodyOf(r),
		Signature: r.Header.Get(signedretry.HeaderSignature), RequestID: r.Header.Get(signedretry.HeaderRequestID)}
}

// writeOutcome answers a signed-retry operation: 202 with the challenge, or
// the result with status (204 without a body).
func writeOutcome[T any](w http.ResponseWriter, o wallets.Outcome[T], status int) {
	switch {
	case o.Challenge != nil:
		writeJSON(w, http.StatusAccepted, o.Challenge)
	case status == http.StatusNoContent:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, status, o.Result)
	}
}

// accountIDQuery reads the required accountId filter of the auth lists.
func accountIDQuery(r *http.Request) (string, error) {
	v := r.URL.Query().Get("accountId")
	if v == "" {
		var f apierr.Fields
		f.Add("accountId", apierr.Required, "is required: the EMBEDDED_WALLET internal account")
		return "", f.Err()
	}
	return v, nil
}

func (h *walletHandlers) createCredential(w http.ResponseWriter, r *http.Request) error {
	var req wallets.CreateCredentialRequest
	if err := decode(r, &req, func(req wallets.CreateCredentialRequest) error { return req.Validate() }); err != nil {
		return err
	}
	out, err := h.svc.CreateCredential(r.Context(), principal(r).Tenant, incoming(r), req)
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusCreated)
	return nil
}

func (h *walletHandlers) listCredentials(w http.ResponseWriter, r *http.Request) error {
	accountID, err := accountIDQuery(r)
	if err != nil {
		return err
	}
	list, err := h.svc.ListCredentials(r.Context(), principal(r).Tenant, accountID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list})
	return nil
}

func (h *walletHandlers) revokeCredential(w http.ResponseWriter, r *http.Request) error {
	out, err := h.svc.RevokeCredential(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusNoContent)
	return nil
}

func (h *walletHandlers) challenge(w http.ResponseWriter, r *http.Request) error {
	var req wallets.ClientKeyRequest
	if err := decode(r, &req, func(req wallets.ClientKeyRequest) error { return req.ValidateOptional() }); err != nil {
		return err
	}
	out, err := h.svc.ChallengeCredential(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *walletHandlers) verify(w http.ResponseWriter, r *http.Request) error {
	var req wallets.VerifyRequest
	if err := decode(r, &req, func(req wallets.VerifyRequest) error { return req.Validate() }); err != nil {
		return err
	}
	out, err := h.svc.VerifyCredential(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusOK)
	return nil
}

func (h *walletHandlers) listSessions(w http.ResponseWriter, r *http.Request) error {
	accountID, err := accountIDQuery(r)
	if err != nil {
		return err
	}
	list, err := h.svc.ListSessions(r.Context(), principal(r).Tenant, accountID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list})
	return nil
}

func (h *walletHandlers) revokeSession(w http.ResponseWriter, r *http.Request) error {
	out, err := h.svc.RevokeSession(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusNoContent)
	return nil
}

func (h *walletHandlers) refreshSession(w http.ResponseWriter, r *http.Request) error {
	var req wallets.ClientKeyRequest
	if err := decode(r, &req, func(req wallets.ClientKeyRequest) error { return req.ValidateRequired() }); err != nil {
		return err
	}
	out, err := h.svc.RefreshSession(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusOK)
	return nil
}

func (h *walletHandlers) setPrivacy(w http.ResponseWriter, r *http.Request) error {
	var req wallets.PrivacyRequest
	if err := decode(r, &req, func(req wallets.PrivacyRequest) error { return req.Validate() }); err != nil {
		return err
	}
	out, err := h.svc.SetPrivacy(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"), req)
	if err != nil || out.Challenge != nil {
		if err == nil {
			writeOutcome(w, out, http.StatusOK)
		}
		return err
	}
	a, err := h.accounts().Get(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *walletHandlers) export(w http.ResponseWriter, r *http.Request) error {
	var req wallets.ClientKeyRequest
	if err := decode(r, &req, func(req wallets.ClientKeyRequest) error { return req.ValidateRequired() }); err != nil {
		return err
	}
	out, err := h.svc.Export(r.Context(), principal(r).Tenant, incoming(r), r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusOK)
	return nil
}

func (h *walletHandlers) approveExport(w http.ResponseWriter, r *http.Request) error {
	var req wallets.ExportApproval
	if err := decode(r, &req, func(req wallets.ExportApproval) error { return req.Validate() }); err != nil {
		return err
	}
	if err := h.svc.ApproveExport(r.Context(), principal(r).Tenant, r.PathValue("id"), req); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *walletHandlers) createDelegatedKey(w http.ResponseWriter, r *http.Request) error {
	var req wallets.DelegatedKeyRequest
	if err := decode(r, &req, func(req wallets.DelegatedKeyRequest) error { return req.Validate() }); err != nil {
		return err
	}
	out, err := h.svc.CreateDelegatedKey(r.Context(), principal(r).Tenant, incoming(r), req)
	if err != nil {
		return err
	}
	writeOutcome(w, out, http.StatusCreated)
	return nil
}

func (h *walletHandlers) listDelegatedKeys(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	list, err := h.svc.ListDelegatedKeys(r.Context(), principal(r).Tenant, q.Get("accountId"), q.Get("fundingSourceId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": list})
	return nil
}

func (h *walletHandlers) getDelegatedKey(w http.ResponseWriter, r *http.Request) error {
	k, err := h.svc.GetDelegatedKey(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

func (h *walletHandlers) revokeDelegatedKey(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.RevokeDelegatedKey(r.Context(), principal(r).Tenant, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
