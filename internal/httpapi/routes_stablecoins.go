package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/stablecoins"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

func init() { routeGroups = append(routeGroups, (*Server).stablecoinRoutes) }

// stablecoinServices holds each server's stablecoin service, so the routes
// and the node's background runner share one.
var stablecoinServices sync.Map // *Server → *stablecoins.Service

// stablecoinService returns the server's stablecoin service. Provider
// secrets are sealed under a data key kept in server_secrets
// ("stablecoin-sealing"), which the store seals under the key ring.
func (s *Server) stablecoinService() *stablecoins.Service {
	if svc, ok := stablecoinServices.Load(s); ok {
		return svc.(*stablecoins.Service)
	}
	fresh := stablecoins.New(s.db, accounts.NewLedger(s.db), &lazySealer{db: s.db, name: "stablecoin-sealing"})
	svc, _ := stablecoinServices.LoadOrStore(s, fresh)
	return svc.(*stablecoins.Service)
}

// lazySealer is a wallets local sealer keyed by a server secret read on
// first use (the routes are built without a context to read it with).
type lazySealer struct {
	db     *store.DB
	name   string
	mu     sync.Mutex
	sealer wallets.Sealer
}

func (l *lazySealer) get() (wallets.Sealer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sealer != nil {
		return l.sealer, nil
	}
	secret, err := l.db.ServerSecret(context.Background(), l.name)
	if err != nil {
		return nil, err
	}
	if l.sealer, err = wallets.NewLocalSealer(secret); err != nil {
		return nil, err
	}
	return l.sealer, nil
}

func (l *lazySealer) Seal(plaintext, ad []byte) ([]byte, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.Seal(plaintext, ad)
}

func (l *lazySealer) Open(sealed, ad []byte) ([]byte, error) {
	s, err := l.get()
	if err != nil {
		return nil, err
	}
	return s.Open(sealed, ad)
}

// stablecoinRoutes: stablecoin issuance (R-STBL-*).
func (s *Server) stablecoinRoutes() {
	h := &stablecoinHandlers{s: s, svc: s.stablecoinService()}
	s.handle(route{pattern: "POST /stablecoin-provider-accounts", need: auth.NeedWrite, idempotent: true, requireIdem: true, h: h.link})
	s.handle(route{pattern: "GET /stablecoin-provider-accounts", need: auth.NeedView, query: listQuery("provider", "status"), h: h.listAccounts})
	s.handle(route{pattern: "GET /stablecoin-provider-accounts/{id}", need: auth.NeedView, h: h.getAccount})
	s.handle(route{pattern: "DELETE /stablecoin-provider-accounts/{id}", need: auth.NeedWrite, h: h.revoke})
	s.handle(route{pattern: "POST /stablecoins", need: auth.NeedWrite, idempotent: true, requireIdem: true, h: h.register})
	s.handle(route{pattern: "GET /stablecoins", need: auth.NeedView,
		query: listQuery("issuanceStatus", "gridOperationsStatus", "provider"), h: h.list})
	s.handle(route{pattern: "GET /stablecoins/{id}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "POST /stablecoins/{id}/grid-operations-enablement", need: auth.NeedWrite, idempotent: true, h: h.enable})
	s.handle(route{pattern: "POST /stablecoins/{id}/mints", need: auth.NeedMoney, idempotent: true, requireIdem: true, h: h.mint})
	s.handle(route{pattern: "POST /stablecoins/{id}/burns", need: auth.NeedMoney, idempotent: true, requireIdem: true, h: h.burn})
	s.handle(route{pattern: "GET /stablecoins/{id}/operations", need: auth.NeedView, query: listQuery("operationType"), h: h.operations})
	s.handle(route{pattern: "GET /stablecoin-operations/{id}", need: auth.NeedView, h: h.operation})
}

type stablecoinHandlers struct {
	s   *Server
	svc *stablecoins.Service
}

func (h *stablecoinHandlers) link(w http.ResponseWriter, r *http.Request) error {
	var req stablecoins.LinkRequest
	if err := decode(r, &req, func(req stablecoins.LinkRequest) error { return req.Validate() }); err != nil {
		return err
	}
	a, err := h.svc.Link(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (h *stablecoinHandlers) listAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	provider := queryEnum(&f, q, "provider", []string{stablecoins.ProviderBrale})
	status := queryEnum(&f, q, "status", []string{stablecoins.AccountActive, stablecoins.AccountInvalid, stablecoins.AccountRevoked})
	return writeListPage(w, r, h.s.cursors, &f, "stablecoin-provider-accounts", func(after string, limit int) ([]stablecoins.ProviderAccount, int, error) {
		return h.svc.ListAccounts(r.Context(), principal(r).Tenant, provider, status, after, limit)
	}, func(a stablecoins.ProviderAccount) string { return a.ID })
}

func (h *stablecoinHandlers) getAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := h.svc.GetAccount(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *stablecoinHandlers) revoke(w http.ResponseWriter, r *http.Request) error {
	a, err := h.svc.Revoke(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *stablecoinHandlers) register(w http.ResponseWriter, r *http.Request) error {
	var req stablecoins.RegisterRequest
	if err := decode(r, &req, func(req stablecoins.RegisterRequest) error { return req.Validate() }); err != nil {
		return err
	}
	c, err := h.svc.Register(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

func (h *stablecoinHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.StablecoinFilter{
		IssuanceStatus: queryEnum(&f, q, "issuanceStatus", []string{stablecoins.IssuancePendingReview,
			stablecoins.IssuanceProvisioning, stablecoins.IssuanceProvisioned, stablecoins.IssuanceRejected, stablecoins.IssuanceFailed}),
		GridOperationsStatus: queryEnum(&f, q, "gridOperationsStatus", []string{stablecoins.GridNotEnabled,
			stablecoins.GridPendingApproval, stablecoins.GridEnabling, stablecoins.GridEnabled, stablecoins.GridDisabled}),
		Provider: queryEnum(&f, q, "provider", []string{stablecoins.ProviderBrale}),
	}
	return writeListPage(w, r, h.s.cursors, &f, "stablecoins", func(after string, limit int) ([]stablecoins.Stablecoin, int, error) {
		return h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(c stablecoins.Stablecoin) string { return c.ID })
}

func (h *stablecoinHandlers) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *stablecoinHandlers) enable(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.RequestEnablement(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *stablecoinHandlers) mint(w http.ResponseWriter, r *http.Request) error {
	var req stablecoins.MintRequest
	if err := decode(r, &req, func(req stablecoins.MintRequest) error { return req.Validate() }); err != nil {
		return err
	}
	op, err := h.svc.Mint(r.Context(), principal(r).Tenant, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, op)
	return nil
}

func (h *stablecoinHandlers) burn(w http.ResponseWriter, r *http.Request) error {
	var req stablecoins.BurnRequest
	if err := decode(r, &req, func(req stablecoins.BurnRequest) error { return req.Validate() }); err != nil {
		return err
	}
	op, err := h.svc.Burn(r.Context(), principal(r).Tenant, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, op)
	return nil
}

func (h *stablecoinHandlers) operations(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	typ := queryEnum(&f, q, "operationType", []string{stablecoins.TypeMint, stablecoins.TypeBurn})
	coinID := r.PathValue("id")
	if _, err := h.svc.Get(r.Context(), principal(r).Tenant, coinID); err != nil {
		return err
	}
	return writeListPage(w, r, h.s.cursors, &f, "stablecoin-operations:"+coinID, func(after string, limit int) ([]stablecoins.Operation, int, error) {
		return h.svc.ListOperations(r.Context(), principal(r).Tenant, coinID, typ, after, limit)
	}, func(o stablecoins.Operation) string { return o.ID })
}

func (h *stablecoinHandlers) operation(w http.ResponseWriter, r *http.Request) error {
	op, err := h.svc.GetOperation(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, op)
	return nil
}
