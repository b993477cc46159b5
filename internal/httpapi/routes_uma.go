package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
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
	s.handle(route{pattern: "POST /.well-known/lnurlp/{user}/payreq", public: true, h: h.payRequest})
	s.handle(route{pattern: "POST /.well-known/lnsim/htlc", public: true, h: h.htlc})
	s.handle(route{pattern: "POST /sandbox/uma/receive", need: auth.NeedMoney, idempotent: true, h: h.sandboxReceive})
	s.handle(route{pattern: "GET /uma-providers", need: auth.NeedView,
		query: listQuery("countryCode", "currencyCode", "hasBlockedProviders", "sortOrder"), h: h.providers})
	s.handle(route{pattern: "GET /discoveries", need: auth.NeedView, query: []string{"country", "currency"}, h: h.discoveries})
	s.handle(route{pattern: "GET /vasps", need: auth.NeedView, query: listQuery(), h: h.vasps})
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
		DB: s.db, Ledger: accounts.NewLedger(s.db), Sealer: s.opts.WalletSealer, Config: s.config.Get,
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

// maxUmaBody bounds the bodies other institutions send.
const maxUmaBody = 64 << 10

func readUmaBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxUmaBody+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxUmaBody {
		return nil, apierr.New("INVALID_REQUEST_FORMAT", "The body is larger than 64 KiB")
	}
	return b, nil
}

// payRequest answers a UMA pay request (the discovery's callback).
func (h *umaHandlers) payRequest(w http.ResponseWriter, r *http.Request) error {
	body, err := readUmaBody(r)
	if err != nil {
		return err
	}
	resp, err := h.svc.PayRequest(r.Context(), r.Host, r.PathValue("user"), body)
	if err != nil {
		return err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

// htlc is this institution's node of the sandbox Lightning simulator: a
// payer's HTLC settles one of our invoices and gets its preimage.
func (h *umaHandlers) htlc(w http.ResponseWriter, r *http.Request) error {
	body, err := readUmaBody(r)
	if err != nil {
		return err
	}
	var req uma.HTLC
	if err := json.Unmarshal(body, &req); err != nil || req.PaymentHash == "" {
		return apierr.New("INVALID_REQUEST_FORMAT", "An HTLC is {paymentHash, amountMsat}")
	}
	res, err := h.svc.SettleHTLC(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// sandboxReceive simulates an incoming UMA payment from the sandbox
// institution and answers the INCOMING transaction it made.
func (h *umaHandlers) sandboxReceive(w http.ResponseWriter, r *http.Request) error {
	var req uma.ReceiveRequest
	if err := decode(r, &req, uma.ReceiveRequest.Validate); err != nil {
		return err
	}
	t := principal(r).Tenant
	txID, err := h.svc.SandboxReceive(r.Context(), t, req)
	if err != nil {
		return err
	}
	x, err := (&transactions.Service{DB: h.s.db}).Get(r.Context(), t, txID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// providers lists the UMA providers this installation knows. There is no
// allowlist of providers: hasBlockedProviders changes nothing.
func (h *umaHandlers) providers(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	country, cur := strings.ToUpper(q.Get("countryCode")), strings.ToUpper(q.Get("currencyCode"))
	if country != "" && len(country) != 2 {
		f.Add("countryCode", apierr.Format, "must be an ISO 3166-1 alpha-2 code")
	}
	if v := q.Get("hasBlockedProviders"); v != "" && v != "true" && v != "false" {
		f.Add("hasBlockedProviders", apierr.Type, "must be true or false")
	}
	desc := q.Get("sortOrder") != "asc"
	if v := q.Get("sortOrder"); v != "" && v != "asc" && v != "desc" {
		f.Add("sortOrder", apierr.Enum, "must be asc or desc")
	}
	all, err := h.svc.Providers(r.Context(), principal(r).Tenant.Env, country, cur)
	if err != nil {
		return err
	}
	if desc {
		slices.Reverse(all)
	}
	return writeListPage(w, r, h.s.cursors, &f, "uma-providers", func(after string, limit int) ([]uma.Provider, int, error) {
		i := 0
		if after != "" {
			i = slices.IndexFunc(all, func(p uma.Provider) bool { return p.Domain == after }) + 1
		}
		return all[i:min(len(all), i+limit)], len(all), nil
	}, func(p uma.Provider) string { return p.Domain })
}

// discoveries lists the receiving institutions of a corridor.
func (h *umaHandlers) discoveries(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	writeJSON(w, http.StatusOK, map[string]any{"data": uma.Discoveries(q.Get("country"), q.Get("currency"))})
	return nil
}

// vasps lists the VASP directory.
func (h *umaHandlers) vasps(w http.ResponseWriter, r *http.Request) error {
	return writeListPage(w, r, h.s.cursors, &apierr.Fields{}, "vasps", func(after string, limit int) ([]uma.Vasp, int, error) {
		list, total := uma.Vasps(after, limit)
		return list, total, nil
	}, func(v uma.Vasp) string { return v.VaspName })
}

func umaHostUnknown(host string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.New("UMA_NOT_FOUND", "No platform on this server has the UMA domain "+host)
	}
	return err
}
