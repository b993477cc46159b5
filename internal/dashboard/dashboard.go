// Package dashboard is the web dashboard served by paymentsd at /dashboard:
// server-rendered pages (html/template, assets embedded) for the people who
// run and integrate the service.
//
// It holds no business rules. Every page reads through the API itself, in
// process (API.Call), as the signed-in token: what a page shows is what the
// API answers for that token, and an action needs exactly the permission its
// API route needs, because it is that route. The only reads of its own are
// those the API does not offer: the ledger transfers and postings behind a
// transaction, balances over time and today's totals.
package dashboard

import (
	"context"
	"embed"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/ratelimit"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/tokens"
)

// API serves one API request in process as a principal (httpapi.Server.Call).
type API interface {
	Call(ctx context.Context, p auth.Principal, method, target string, body []byte, idemKey string) (int, []byte)
}

// Options configure the dashboard.
type Options struct {
	API    API
	DB     *store.DB
	Tokens *tokens.Service
	Log    *slog.Logger
	// PublicURL is the service's address as people reach it; an https one
	// marks the session cookie Secure even behind a proxy that ends TLS.
	PublicURL string
	// IdleTimeout ends a session without requests for this long (default
	// 30 minutes); MaxAge ends any session this long after sign-in (default
	// 12 hours).
	IdleTimeout time.Duration
	MaxAge      time.Duration
}

// Handler serves /dashboard.
type Handler struct {
	opts    Options
	mux     *http.ServeMux
	pages   *pages
	signins *ratelimit.Limiter
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New builds the dashboard.
func New(opts Options) (*Handler, error) {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Minute
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 12 * time.Hour
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, mux: http.NewServeMux(), pages: p, signins: ratelimit.New(1, 10)}
	h.routes()
	return h, nil
}

// ServeHTTP serves a dashboard request with the security headers every
// answer carries.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/dashboard/static/") {
		hd.Set("Cache-Control", "no-store")
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) routes() {
	m := h.mux
	m.HandleFunc("GET /dashboard", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
	})
	m.Handle("GET /dashboard/static/", http.StripPrefix("/dashboard/", http.FileServerFS(staticFS)))
	m.HandleFunc("GET /dashboard/signin", h.signInPage)
	m.HandleFunc("POST /dashboard/signin", h.signIn)
	m.Handle("POST /dashboard/signout", h.action(h.signOut))

	m.Handle("GET /dashboard/{$}", h.page(h.home))
	m.Handle("GET /dashboard/customers", h.page(h.customers))
	m.Handle("GET /dashboard/customers/{id}", h.page(h.customer))
	m.Handle("GET /dashboard/accounts", h.page(h.accounts))
	m.Handle("GET /dashboard/accounts/{id}", h.page(h.account))
	m.Handle("GET /dashboard/transactions", h.page(h.listView("/transactions", "transactions", "Transactions", transactionFilters...)))
	m.Handle("GET /dashboard/transactions/{id}", h.page(h.transaction))
	m.Handle("POST /dashboard/transactions/{id}/{decision}", h.action(h.decideTransaction))
	// A card shows its last four digits only: the dashboard never asks for a number.
	m.Handle("GET /dashboard/cards", h.page(h.listView("/cards", "cards", "Cards", "customerId", "status", "platformCardId")))
	m.Handle("GET /dashboard/cards/{id}", h.page(h.card))
	m.Handle("POST /dashboard/cards/{id}/{change}", h.action(h.setCardStatus))
	m.Handle("GET /dashboard/agents", h.page(h.listView("/agents", "agents", "Agents", "customerId")))
	m.Handle("GET /dashboard/approvals", h.page(h.listViewWith("/agents/approvals", "approvals", "Approval queue", approvalsQuery)))
	m.Handle("POST /dashboard/agents/{agentId}/actions/{actionId}/{decision}", h.action(h.decideAction))
	m.Handle("GET /dashboard/events", h.page(h.listView("/events", "events", "Events and webhooks", "type", "resourceId", "createdAfter", "createdBefore")))
	m.Handle("GET /dashboard/events/{id}", h.page(h.event))
	m.Handle("POST /dashboard/events/{id}/redeliver", h.action(h.redeliver))
	m.Handle("GET /dashboard/webhooks", h.page(h.webhooks))
	m.Handle("POST /dashboard/webhooks/rotate", h.action(h.rotateSecret))
	m.Handle("POST /dashboard/webhooks/test", h.action(h.testWebhook))
	m.Handle("GET /dashboard/tokens", h.page(h.listView("/tokens", "tokens", "API tokens", "name")))
	m.Handle("POST /dashboard/tokens", h.action(h.createToken))
	m.Handle("POST /dashboard/tokens/{id}/revoke", h.action(h.revokeToken))
	m.Handle("GET /dashboard/config", h.page(h.config))
	m.Handle("GET /dashboard/sandbox", h.page(h.sandbox))
	m.Handle("POST /dashboard/sandbox/{tool}", h.action(h.sandboxTool))
	m.HandleFunc("/dashboard/", func(w http.ResponseWriter, r *http.Request) {
		h.pages.render(w, http.StatusNotFound, "error", view{Title: "Not found", Error: "There is no page at " + r.URL.Path})
	})
}
