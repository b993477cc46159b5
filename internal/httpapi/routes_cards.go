package httpapi

import (
	"context"
	"net/http"
	"sync"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).cardRoutes) }

// cardServices holds each server's cards service, so the wallet service
// (delegated keys), the background work and package carddata reach the
// same one.
var cardServices sync.Map // *Server → *cards.Service

// CardService returns the server's cards service, creating it on first use.
func (s *Server) CardService() *cards.Service {
	if svc, ok := cardServices.Load(s); ok {
		return svc.(*cards.Service)
	}
	fresh := cards.New(s.db, s.log)
	if s.opts.MaxLiveCards > 0 {
		fresh.MaxLiveCards = s.opts.MaxLiveCards
	}
	svc, _ := cardServices.LoadOrStore(s, fresh)
	return svc.(*cards.Service)
}

// RunCardWork provisions issued cards with the issuer and expires card
// authorizations in the background until ctx ends. Every node may run it.
func (s *Server) RunCardWork(ctx context.Context) { s.CardService().Run(ctx) }

// cardRoutes: issuing and lifecycle (R-CARD-01..37, R-IDEM-03, R-IDEM-04).
func (s *Server) cardRoutes() {
	svc := s.CardService()
	s.accountService().CardSettlement = svc.CardSettlement
	h := &cardHandlers{s: s, svc: svc}
	s.handle(route{pattern: "POST /cards", need: auth.NeedWrite, idempotent: true, requireIdem: true, h: h.issue})
	s.handle(route{pattern: "GET /cards", need: auth.NeedView,
		query: listQuery("customerId", "cardholderId", "accountId", "status", "platformCardId"), h: h.list})
	s.handle(route{pattern: "GET /cards/{id}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "PATCH /cards/{id}", need: auth.NeedWrite, h: h.update})

	// The sandbox card network (R-SBX): each message is checked and
	// recorded, answered 202 with the network's token, and applied by the
	// card runner (RunCardWork) in the card's arrival order; the message's
	// outcome is GET /sandbox/cards/{id}/messages/{messageId}, the card
	// transaction's GET /transactions/{id} and its CARD_TRANSACTION.* events.
	authz := func(op string) handlerFunc {
		return simulate(func(r *http.Request, req cards.SimAuthorization) (cards.SimResult, error) {
			return svc.SubmitAuthorization(r.Context(), principal(r).Tenant, r.PathValue("id"), op, req)
		})
	}
	onTx := func(op string) handlerFunc {
		return simulate(func(r *http.Request, req cards.SimOnTransaction) (cards.SimResult, error) {
			return svc.SubmitOnTransaction(r.Context(), principal(r).Tenant, r.PathValue("id"), op, req)
		})
	}
	balance := simulate(func(r *http.Request, req cards.SimAuthorization) (cards.SimResult, error) {
		return svc.BalanceInquiry(r.Context(), principal(r).Tenant, r.PathValue("id"), req)
	})
	// One line per route, so the route table can be read (and checked
	// against the OpenAPI document) as written. /sandbox/* is sandbox only.
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/authorization", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: authz(cards.OpAuthorization)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/financial_authorization", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: authz(cards.OpFinancialAuthorization)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/credit_authorization", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: authz(cards.OpCreditAuthorization)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/credit_authorization_advice", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: authz(cards.OpCreditAuthorizationAdvice)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/financial_credit_authorization", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: authz(cards.OpFinancialCreditAuthorization)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/balance_inquiry", need: auth.NeedMoney, idempotent: true, h: balance})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/authorization_advice", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: onTx(cards.OpAuthorizationAdvice)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/clearing", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: onTx(cards.OpClearing)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/reversal", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: onTx(cards.OpReversal)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/return", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: onTx(cards.OpReturn)})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/return_reversal", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: onTx(cards.OpReturnReversal)})
	s.handle(route{pattern: "GET /sandbox/cards/{id}/messages/{messageId}", need: auth.NeedView, h: h.message})
}

// simulate decodes a simulation body and answers 202 with its result.
func simulate[T any](fn func(r *http.Request, req T) (cards.SimResult, error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req T
		if err := decode(r, &req, nil); err != nil {
			return err
		}
		// The simulations that change state record this answer with their
		// effect (idempotency.Record), so a retry after a crash replays it
		// instead of applying the message twice (R-IDEM-02).
		if c := idempotency.FromContext(r.Context()); c != nil {
			c.Status = http.StatusAccepted
		}
		out, err := fn(r, req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, out)
		return nil
	}
}

type cardHandlers struct {
	s   *Server
	svc *cards.Service
}

func (h *cardHandlers) issue(w http.ResponseWriter, r *http.Request) error {
	var req cards.IssueRequest
	if err := decode(r, &req, func(req cards.IssueRequest) error { return req.Validate() }); err != nil {
		return err
	}
	created(r)
	c, err := h.svc.Issue(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

func (h *cardHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.CardFilter{CustomerID: first(q, "customerId"), AccountID: first(q, "accountId"),
		Status: queryEnum(&f, q, "status", cards.Statuses), PlatformCardID: first(q, "platformCardId")}
	if holder := first(q, "cardholderId"); holder != "" {
		if filter.CustomerID != "" && filter.CustomerID != holder {
			f.Add("cardholderId", apierr.AdditionalProperties, "give the cardholder as customerId or cardholderId, not both")
		}
		filter.CustomerID = holder
	}
	return writeListPage(w, r, h.s.cursors, &f, "cards", func(after string, limit int) ([]cards.Card, int, error) {
		return h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(c cards.Card) string { return c.ID })
}

// message shows a card network message and its outcome.
func (h *cardHandlers) message(w http.ResponseWriter, r *http.Request) error {
	m, err := h.svc.GetMessage(r.Context(), principal(r).Tenant, r.PathValue("id"), r.PathValue("messageId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (h *cardHandlers) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *cardHandlers) update(w http.ResponseWriter, r *http.Request) error {
	var req cards.UpdateRequest
	if err := decode(r, &req, func(req cards.UpdateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	c, err := h.svc.Update(r.Context(), principal(r).Tenant, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
