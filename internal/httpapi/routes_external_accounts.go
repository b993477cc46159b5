package httpapi

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).externalAccountRoutes) }

// LivenessPagePath is where the hosted liveness check of a LIVENESS
// ownership challenge is served, followed by the link's token.
const LivenessPagePath = "/verify/liveness/"

// externalAccountRoutes: external accounts of customers and of the
// platform, trusted beneficiaries, ownership verification and its hosted
// liveness page (R-EACCT-*).
func (s *Server) externalAccountRoutes() {
	h := &externalAccountHandlers{s: s, svc: s.externalAccountService()}
	s.handle(route{pattern: "POST /customers/external-accounts", need: auth.NeedWrite, idempotent: true, h: h.create})
	s.handle(route{pattern: "GET /customers/external-accounts", need: auth.NeedView, query: listQuery("accountType", "status", "currency", "customerId"), h: h.list(false)})
	s.handle(route{pattern: "GET /customers/external-accounts/{externalAccountId}", need: auth.NeedView, h: h.get(false)})
	s.handle(route{pattern: "DELETE /customers/external-accounts/{externalAccountId}", need: auth.NeedWrite, h: h.delete(false)})
	s.handle(route{pattern: "POST /customers/external-accounts/{externalAccountId}/trust", need: auth.NeedWrite, h: h.startTrust(false)})
	s.handle(route{pattern: "POST /customers/external-accounts/{externalAccountId}/trust/confirm", need: auth.NeedWrite, h: h.confirmTrust(false)})
	s.handle(route{pattern: "POST /customers/external-accounts/{externalAccountId}/untrust", need: auth.NeedWrite, h: h.startTrust(true)})
	s.handle(route{pattern: "POST /customers/external-accounts/{externalAccountId}/untrust/confirm", need: auth.NeedWrite, h: h.confirmTrust(true)})
	s.handle(route{pattern: "POST /customers/external-accounts/{externalAccountId}/challenge", need: auth.NeedWrite, h: h.challenge(false)})
	s.handle(route{pattern: "POST /customers/external-accounts/{externalAccountId}/verify", need: auth.NeedWrite, h: h.verify(false)})

	s.handle(route{pattern: "POST /platform/external-accounts", need: auth.NeedWrite, idempotent: true, h: h.createPlatform})
	s.handle(route{pattern: "GET /platform/external-accounts", need: auth.NeedView, query: listQuery("accountType", "status", "currency"), h: h.list(true)})
	s.handle(route{pattern: "GET /platform/external-accounts/{externalAccountId}", need: auth.NeedView, h: h.get(true)})
	s.handle(route{pattern: "DELETE /platform/external-accounts/{externalAccountId}", need: auth.NeedWrite, h: h.delete(true)})
	s.handle(route{pattern: "POST /platform/external-accounts/{externalAccountId}/challenge", need: auth.NeedWrite, h: h.challenge(true)})
	s.handle(route{pattern: "POST /platform/external-accounts/{externalAccountId}/verify", need: auth.NeedWrite, h: h.verify(true)})

	// Pages people open from a link: parameters a tracker adds are ignored.
	s.handle(route{pattern: "GET /verify/liveness/{token}", public: true, anyQuery: true, h: h.livenessPage})
	s.handle(route{pattern: "POST /verify/liveness/{token}", public: true, anyQuery: true, h: h.livenessSubmit})
}

// externalAccountServices holds each server's external accounts service, so
// other capabilities (payouts ask UsableForPayout) and tests reach the same
// instance.
var externalAccountServices sync.Map // *Server → *externalaccounts.Service

// externalAccountService returns the server's external accounts service,
// creating it on first use.
func (s *Server) externalAccountService() *externalaccounts.Service {
	if svc, ok := externalAccountServices.Load(s); ok {
		return svc.(*externalaccounts.Service)
	}
	svc, _ := externalAccountServices.LoadOrStore(s, externalaccounts.New(s.db, s.log))
	return svc.(*externalaccounts.Service)
}

// ExternalAccounts exposes the external accounts service (payouts call
// UsableForPayout before paying).
func (s *Server) ExternalAccounts() *externalaccounts.Service { return s.externalAccountService() }

// RunExternalAccountWork applies the outcomes of hosted liveness checks in
// the background until ctx ends. Every node may run it.
func (s *Server) RunExternalAccountWork(ctx context.Context) { s.externalAccountService().Run(ctx) }

type externalAccountHandlers struct {
	s   *Server
	svc *externalaccounts.Service
}

func (h *externalAccountHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req externalaccounts.CreateRequest
	if err := decode(r, &req, func(req externalaccounts.CreateRequest) error { return req.Validate(h.s.db.Now()) }); err != nil {
		return err
	}
	created(r)
	a, err := h.svc.Create(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (h *externalAccountHandlers) createPlatform(w http.ResponseWriter, r *http.Request) error {
	var req externalaccounts.PlatformCreateRequest
	if err := decode(r, &req, func(req externalaccounts.PlatformCreateRequest) error { return req.Validate(h.s.db.Now()) }); err != nil {
		return err
	}
	created(r)
	a, err := h.svc.CreatePlatform(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (h *externalAccountHandlers) list(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		q := r.URL.Query()
		var f apierr.Fields
		filter := store.ExternalAccountFilter{
			Platform:    platform,
			AccountType: queryEnum(&f, q, "accountType", externalaccounts.AccountTypes()),
			Status:      queryEnum(&f, q, "status", externalaccounts.Statuses),
		}
		filter.Currency = queryCurrency(&f, q)
		scope, customerID := ownerListScope(&f, q, platform, "external-accounts")
		filter.CustomerID = customerID
		return writeListPage(w, r, h.s.cursors, &f, scope, func(after string, limit int) ([]externalaccounts.ExternalAccount, int, error) {
			return h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
		}, func(a externalaccounts.ExternalAccount) string { return a.ID })
	}
}

func (h *externalAccountHandlers) get(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		a, err := h.svc.Get(r.Context(), principal(r).Tenant, platform, r.PathValue("externalAccountId"))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, a)
		return nil
	}
}

func (h *externalAccountHandlers) delete(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := h.svc.Delete(r.Context(), principal(r).Tenant, platform, r.PathValue("externalAccountId")); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

func (h *externalAccountHandlers) startTrust(untrust bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var none struct{}
		if err := decode(r, &none, nil); err != nil {
			return err
		}
		out, err := h.svc.StartTrust(r.Context(), principal(r).Tenant, r.PathValue("externalAccountId"), untrust)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

func (h *externalAccountHandlers) confirmTrust(untrust bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req externalaccounts.TrustConfirmRequest
		if err := decode(r, &req, func(req externalaccounts.TrustConfirmRequest) error { return req.Validate() }); err != nil {
			return err
		}
		out, err := h.svc.ConfirmTrust(r.Context(), principal(r).Tenant, r.PathValue("externalAccountId"), untrust, req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}

// challengeJSON is an ownership challenge as answered: WALLET_SIGNATURE
// carries messageToSign, LIVENESS verificationLink.
type challengeJSON struct {
	Method           string    `json:"method"`
	MessageToSign    string    `json:"messageToSign,omitempty"`
	VerificationLink string    `json:"verificationLink,omitempty"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

func (h *externalAccountHandlers) challenge(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req externalaccounts.ChallengeRequest
		if err := decode(r, &req, func(req externalaccounts.ChallengeRequest) error { return req.Validate() }); err != nil {
			return err
		}
		c, err := h.svc.Challenge(r.Context(), principal(r).Tenant, platform, r.PathValue("externalAccountId"), req)
		if err != nil {
			return err
		}
		out := challengeJSON{Method: c.Method, MessageToSign: c.MessageToSign, ExpiresAt: c.ExpiresAt}
		if c.LivenessToken != "" {
			out.VerificationLink = h.s.publicBase(r) + LivenessPagePath + c.LivenessToken
		}
		writeJSON(w, http.StatusCreated, out)
		return nil
	}
}

func (h *externalAccountHandlers) verify(platform bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req externalaccounts.VerifyRequest
		if err := decode(r, &req, func(req externalaccounts.VerifyRequest) error { return req.Validate() }); err != nil {
			return err
		}
		a, err := h.svc.Verify(r.Context(), principal(r).Tenant, platform, r.PathValue("externalAccountId"), req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, a)
		return nil
	}
}

// publicBase is the service's address as people reach it: Options.PublicURL,
// or the request's host.
func (s *Server) publicBase(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimSuffix(s.opts.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// The hosted liveness page: public (the link's token is the credential),
// self-contained HTML with no external assets. In sandbox the person picks
// the outcome; it is applied in the background.

var livenessTemplate = template.Must(template.New("liveness").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Wallet ownership check</title>
<style>
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:30rem;margin:3rem auto;background:#fff;border-radius:12px;padding:2rem;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.3rem;margin-top:0}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem}dt{color:#5b6372}dd{margin:0;word-break:break-all}
.sandbox{background:#fff4d6;border:1px solid #f0d78c;border-radius:8px;padding:.6rem .8rem;font-size:.9rem}
form{display:flex;gap:.8rem;margin-top:1.5rem}
button{flex:1;font-size:1rem;padding:.7rem;border-radius:8px;border:0;cursor:pointer}
.pass{background:#1f7a4d;color:#fff}.fail{background:#b3261e;color:#fff}
.note{color:#5b6372;font-size:.9rem}
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{if .Message}}<p>{{.Message}}</p>{{end}}
{{if .View.AccountType}}<dl>
<dt>Account</dt><dd>{{.View.AccountType}}</dd>
<dt>Network</dt><dd>{{.View.Network}}</dd>
<dt>Wallet</dt><dd>{{.View.Wallet}}</dd>
{{if .Open}}<dt>Expires</dt><dd>{{.Expires}}</dd>{{end}}
</dl>{{end}}
{{if .Open}}
<p class="sandbox"><strong>Sandbox.</strong> No camera check runs here: choose the outcome the liveness check should report.</p>
<form method="post">
<button class="pass" type="submit" name="outcome" value="PASS">Pass</button>
<button class="fail" type="submit" name="outcome" value="FAIL">Fail</button>
</form>
{{end}}
<p class="note">You can close this page. The result reaches the service that sent you here on its own.</p>
</main>
</body>
</html>
`))

type livenessPageData struct {
	Title, Message, Expires string
	Open                    bool
	View                    externalaccounts.LivenessView
}

func writeLivenessPage(w http.ResponseWriter, status int, d livenessPageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_ = livenessTemplate.Execute(w, d)
}

// livenessState turns a page's state into its status, title and message.
func livenessState(v externalaccounts.LivenessView) (int, livenessPageData) {
	d := livenessPageData{View: v}
	switch v.State {
	case "OPEN":
		d.Open, d.Title = true, "Confirm it is you"
		d.Message = "Finish this check to prove that you own the wallet below."
		d.Expires = v.ExpiresAt.UTC().Format(time.RFC1123)
		return http.StatusOK, d
	case "RECORDED", "COMPLETED":
		d.Title = "Check finished"
		d.Message = "Your result was recorded."
		return http.StatusOK, d
	case "EXPIRED":
		d.Title, d.Message = "This link has expired", "Ask for a new verification link."
		return http.StatusGone, d
	}
	d.Title, d.Message = "This link was replaced", "A newer verification was started; use its link instead."
	return http.StatusConflict, d
}

func linkError(w http.ResponseWriter, err error) error {
	switch {
	case errors.Is(err, externalaccounts.ErrLinkNotFound):
		writeLivenessPage(w, http.StatusNotFound, livenessPageData{Title: "Link not found",
			Message: "This verification link is not valid. Check that you opened the whole link."})
	case errors.Is(err, externalaccounts.ErrLinkExpired):
		writeLivenessPage(w, http.StatusGone, livenessPageData{Title: "This link has expired", Message: "Ask for a new verification link."})
	case errors.Is(err, externalaccounts.ErrLinkUsed):
		writeLivenessPage(w, http.StatusConflict, livenessPageData{Title: "This link was already used",
			Message: "The check behind this link is finished or was replaced by a newer one."})
	default:
		return err
	}
	return nil
}

func (h *externalAccountHandlers) livenessPage(w http.ResponseWriter, r *http.Request) error {
	v, err := h.svc.Liveness(r.Context(), r.PathValue("token"))
	if err != nil {
		return linkError(w, err)
	}
	status, d := livenessState(v)
	writeLivenessPage(w, status, d)
	return nil
}

func (h *externalAccountHandlers) livenessSubmit(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	var outcome string
	if err := r.ParseForm(); err == nil {
		outcome = r.PostForm.Get("outcome")
	}
	if outcome != externalaccounts.OutcomePass && outcome != externalaccounts.OutcomeFail {
		writeLivenessPage(w, http.StatusBadRequest, livenessPageData{Title: "Choose an outcome",
			Message: "Send the form with outcome PASS or FAIL."})
		return nil
	}
	v, err := h.svc.RecordLiveness(r.Context(), r.PathValue("token"), outcome)
	if err != nil {
		return linkError(w, err)
	}
	status, d := livenessState(v)
	writeLivenessPage(w, status, d)
	return nil
}
