package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).accountRoutes) }

// accountRoutes: internal accounts of customers and of the platform,
// rule-based accounts and sandbox deposits (R-IACCT-01..07, R-IACCT-16,
// R-IACCT-17, R-IDEM-08, R-IDEM-09, R-SBX-01, R-SBX-02). Statements are in
// routes_statements.go.
func (s *Server) accountRoutes() {
	h := &accountHandlers{s: s, svc: s.accountService()}
	s.handle(route{pattern: "GET /customers/internal-accounts", need: auth.NeedView, query: listQuery("type", "currency", "customerId"), h: h.list(false)})
	s.handle(route{pattern: "GET /platform/internal-accounts", need: auth.NeedView, query: listQuery("type", "currency"), h: h.list(true)})
	s.handle(route{pattern: "POST /internal-accounts", need: auth.NeedWrite, idempotent: true, replayStatus: http.StatusOK, h: h.create})
	s.handle(route{pattern: "POST /sandbox/internal-accounts/{accountId}/fund", need: auth.NeedMoney, idempotent: true, h: h.fund})
}

// accountServices holds each server's accounts service, so the customers
// service (provisioning, closing), money movement and tests reach the
// same instance.
var accountServices sync.Map // *Server → *accounts.Service

// accountService returns the server's accounts service, creating it on
// first use.
func (s *Server) accountService() *accounts.Service {
	if svc, ok := accountServices.Load(s); ok {
		return svc.(*accounts.Service)
	}
	fresh := accounts.New(s.db, s.log)
	fresh.NewWalletTx = s.walletService().NewWalletTx
	svc, _ := accountServices.LoadOrStore(s, fresh)
	return svc.(*accounts.Service)
}

// withAccounts wires the accounts capability into a customers service: a
// new customer's internal accounts are provisioned in the transaction that
// creates it, and deleting a customer closes them (refused while they hold
// money).
func (s *Server) withAccounts(svc *customers.Service) *customers.Service {
	acc := s.accountService()
	svc.OnCreate = func(ctx context.Context, tx *store.Tx, t store.Tenant, c customers.Customer) error {
		return acc.ProvisionTx(ctx, tx, t, c.ID)
	}
	svc.CloseAccounts = acc.CloseOwnerTx
	return svc
}

type accountHandlers struct {
	s   *Server
	svc *accounts.Service
}

func (h *accountHandlers) list(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var f apierr.Fields
		filter := store.InternalAccountFilter{
			Platform: platform,
			Type:     queryEnum(&f, q, "type", accounts.Types),
		}
		filter.Currency = queryCurrency(&f, q)
		scope, customerID := ownerListScope(&f, q, platform, "internal-accounts")
		filter.CustomerID = customerID
		return writeListPage(w, r, h.s.cursors, &f, scope, func(after string, limit int) ([]accounts.InternalAccount, int, error) {
			return h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
		}, func(a accounts.InternalAccount) string { return a.ID })
	}
}

func (h *accountHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req accounts.CreateRequest
	if err := decode(r, &req, func(req accounts.CreateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	// Recorded as 201; a replay answers 200 (the route's replayStatus).
	created(r)
	a, err := h.svc.CreateRuleBased(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (h *accountHandlers) fund(w http.ResponseWriter, r *http.Request) error {
	var req accounts.FundRequest
	if err := decode(r, &req, func(req accounts.FundRequest) error { return req.Validate() }); err != nil {
		return err
	}
	recordIdemStatus(r, http.StatusOK)
	a, err := h.svc.Fund(r.Context(), principal(r).Tenant, r.PathValue("accountId"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// recordIdemStatus sets the status the service records, with its response, under
// the request's Idempotency-Key.
func recordIdemStatus(r *http.Request, status int) {
	if c := idempotency.FromContext(r.Context()); c != nil {
		c.Status = status
	}
}
