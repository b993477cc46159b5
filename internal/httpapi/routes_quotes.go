package httpapi

import (
	"bytes"
	"context"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"net/http"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/quotes"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).quoteRoutes) }

// quoteRoutes: quotes and their execution (R-QUOTE-01..41, R-AUTH-05,
// R-IDEM-05, R-IDEM-06, R-VER-04); authorizing an SCA quote is in
// routes_sca.go. Creating and executing need TRANSACT
// (auth.NeedMoney); both honour Idempotency-Key.
func (s *Server) quoteRoutes() {
	h := &quoteHandlers{s: s, svc: s.quoteService()}
	s.handle(route{pattern: "POST /quotes", need: auth.NeedMoney, idempotent: true, recordsInTx: true,
		readAhead: quotes.AccountsNamed, h: h.create})
	s.handle(route{pattern: "GET /quotes/{quoteId}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "POST /quotes/{quoteId}/execute", need: auth.NeedMoney, idempotent: true, h: h.execute})
}

// quoteServices holds each server's quote service, so transfers, the rails'
// sandbox deposits and tests reach the same instance.
var quoteServices sync.Map // *Server → *quotes.Service

// quoteService returns the server's quote service, creating it on first use.
func (s *Server) quoteService() *quotes.Service {
	if svc, ok := quoteServices.Load(s); ok {
		return svc.(*quotes.Service)
	}
	svc := &quotes.Service{
		DB:      s.db,
		Ledger:  accounts.NewLedger(s.db),
		Pricing: s.pricingEngine,
		Config:  s.config.Get,
		CustomerTerms: func(ctx context.Context, t store.Tenant, c string) (store.Customer, bool, error) {
			return s.customerService().CustomerTerms(ctx, t, c)
		},
		AcceptedTerms: func(agreed []store.AgreedTerms) bool { return s.customerService().AcceptedTerms(agreed) },
		External:      s.externalAccountService(),
		Docs:          s.PaymentDocuments,
		Submit:        rails.Submit,

		DailyVolumeLimit: s.opts.DailyVolumeLimit,
		// Quotes from an embedded wallet execute only with a stamp of it.
		WalletStamp: s.walletService().VerifyQuoteStamp,
		// Payouts of customers who need SCA wait on their authorization.
		SCA: s.scaService(),
		// Payments to UMA addresses (package uma).
		UMA: s.umaService(),
	}
	v, _ := quoteServices.LoadOrStore(s, svc)
	return v.(*quotes.Service)
}

// QuoteService exposes the server's quote service (the rails' sandbox
// deposits execute payment-instruction-funded quotes with ExecuteFunded).
func (s *Server) QuoteService() *quotes.Service { return s.quoteService() }

// RunQuoteExpiry expires due quotes every interval until ctx ends (every
// node may run it).
func (s *Server) RunQuoteExpiry(ctx context.Context, interval time.Duration) {
	s.sweep(ctx, interval, "quote expiry", s.quoteService().ExpireDue)
}

// sweep runs due(ctx, 100) every interval until ctx ends, again at once
// while a run finds a full batch, logging errors under name.
func (s *Server) sweep(ctx context.Context, interval time.Duration, name string, due func(context.Context, int) (int, error)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		for {
			n, err := due(ctx, 100)
			if err != nil {
				s.log.Warn(name, "err", err)
			}
			if err != nil || n < 100 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// quoteRecordStatus sets the status recorded under the request's
// Idempotency-Key with the response.
func quoteRecordStatus(r *http.Request, status int) {
	if c := idempotency.FromContext(r.Context()); c != nil {
		c.Status = status
	}
}

type quoteHandlers struct {
	s   *Server
	svc *quotes.Service
}

func (h *quoteHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req quotes.Request
	if err := decode(r, &req, func(req quotes.Request) error { return req.Validate() }); err != nil {
		return err
	}
	quoteRecordStatus(r, http.StatusOK)
	q, err := h.svc.Create(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if q.Status == quotes.StatusPendingAuthorization {
		status = http.StatusAccepted // awaiting SCA (R-SCA-04, R-VER-04)
	}
	writeJSON(w, status, q)
	return nil
}

func (h *quoteHandlers) get(w http.ResponseWriter, r *http.Request) error {
	q, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("quoteId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

// executeRequest is the optional body of POST /quotes/{quoteId}/execute.
type executeRequest struct {
	ScaFactor *string `json:"scaFactor"`
}

func (h *quoteHandlers) execute(w http.ResponseWriter, r *http.Request) error {
	if len(bytes.TrimSpace(bodyOf(r))) > 0 {
		var req executeRequest
		if err := decode(r, &req, nil); err != nil {
			return err
		}
	}
	quoteRecordStatus(r, http.StatusOK)
	q, err := h.svc.ExecuteSigned(r.Context(), principal(r).Tenant, r.PathValue("quoteId"),
		r.Header.Get(signedretry.HeaderSignature))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}
