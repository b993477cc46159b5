package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/uma"
)

func init() { routeGroups = append(routeGroups, (*Server).umaRoutes) }

// umaRoutes: the public UMA endpoints other institutions call (no
// credentials, no version prefix; the tenant is the one whose umaDomain is
// the request's Host).
func (s *Server) umaRoutes() {
	h := &umaHandlers{s: s, svc: s.umaService()}
	s.handle(route{pattern: "GET /.well-known/lnurlpubkey", public: true, h: h.pubKey})
	// The UMA query (signature, vaspDomain, nonce, timestamp, umaVersion,
	// isSubjectToTravelRule) is the SDK's to read and check.
	s.handle(route{pattern: "GET /.well-known/lnurlp/{user}", public: true, anyQuery: true, h: h.lnurlp})
	s.handle(route{pattern: "GET /receiver/uma/{receiverUmaAddress}", need: auth.NeedView,
		query: []string{"customerId", "senderUmaAddress", "sendingCurrency"}, h: h.lookup})
}

// umaServices holds each server's UMA service.
var umaServices sync.Map // *Server → *uma.Service

func (s *Server) umaService() *uma.Service {
	if svc, ok := umaServices.Load(s); ok {
		return svc.(*uma.Service)
	}
	svc := &uma.Service{
		DB: s.db, Sealer: s.opts.WalletSealer, Config: s.config.Get,
		Client: func(ctx context.Context, env string) (*http.Client, error) {
			return s.guard.OutboundClient(ctx, env, 15*time.Second)
		},
		CheckURL: s.guard.CheckOutbound,
		Rate: func(ctx context.Context, env, from, to string) (decimal.Decimal, error) {
			q, err := s.pricingEngine(env).Rates.Rate(ctx, from, to)
			return q.Mid, err
		},
	}
	v, _ := umaServices.LoadOrStore(s, svc)
	return v.(*uma.Service)
}

// withUma wires UMA addresses into a customers service.
func (s *Server) withUma(svc *customers.Service) *customers.Service {
	svc.UmaAddress = s.umaService().AssignAddress
	svc.ReleaseUmaAddress = s.umaService().ReleaseAddresses
	return svc
}

type umaHandlers struct {
	s   *Server
	svc *uma.Service
}

// pubKey serves the institution's certificate chains and public keys
// (GET /.well-known/lnurlpubkey, UMA's public-key endpoint).
func (h *umaHandlers) pubKey(w http.ResponseWriter, r *http.Request) error {
	t, err := h.svc.TenantForHost(r.Context(), r.Host)
	if err != nil {
		return umaHostUnknown(r.Host, err)
	}
	pk, err := h.svc.PubKeyResponse(r.Context(), t)
	if err != nil {
		return err
	}
	b, err := json.Marshal(pk)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "max-age=3600")
	_, err = w.Write(b)
	return err
}

// lnurlp answers a UMA discovery request for $user@Host.
func (h *umaHandlers) lnurlp(w http.ResponseWriter, r *http.Request) error {
	u := *r.URL
	u.Host = r.Host
	resp, err := h.svc.Lnurlp(r.Context(), r.Host, r.PathValue("user"), u)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// lookup looks a UMA address up at its institution (R-RATE-09).
func (h *umaHandlers) lookup(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	l, err := h.svc.LookupReceiver(r.Context(), principal(r).Tenant, uma.LookupRequest{Receiver: r.PathValue("receiverUmaAddress"),
		CustomerID: q.Get("customerId"), SenderUmaAddress: q.Get("senderUmaAddress"), SendingCurrency: q.Get("sendingCurrency")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

func umaHostUnknown(host string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New("UMA_NOT_FOUND", "No platform on this server has the UMA domain "+host)
	}
	return err
}
