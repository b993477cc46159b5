package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

func init() { routeGroups = append(routeGroups, (*Server).sandboxIssuerRoutes) }

// sandboxIssuerPath is where the sandbox OpenID Connect issuer lives (its
// identifier is the service's public address followed by this path).
const sandboxIssuerPath = "/sandbox/oidc"

// defaultIssuerBase is the issuer's base when Options.PublicURL is unset.
const defaultIssuerBase = "http://paymentsd.localhost"

// sandboxIssuer builds the server's sandbox issuer: its key derives from
// the "sandbox-oidc" server secret, and its documents are fetched from this
// server's own handler in-process (so the address need not resolve).
func (s *Server) sandboxIssuer() *wallets.SandboxIssuer {
	base := strings.TrimRight(s.opts.PublicURL, "/")
	if base == "" {
		base = defaultIssuerBase
	}
	return &wallets.SandboxIssuer{URL: base + sandboxIssuerPath, Transport: inProcess{s},
		Secret: func() ([]byte, error) { return s.db.ServerSecret(context.Background(), "sandbox-oidc") }}
}

// sandboxIssuerRoutes: the sandbox issuer's discovery document and keys
// (public, as an identity provider's are) and its token endpoint, which
// stands in for a user signing in at the provider (sandbox tokens only).
func (s *Server) sandboxIssuerRoutes() {
	h := &issuerHandlers{iss: s.walletService().OIDC.Sandbox, now: s.db.Now}
	s.handle(route{pattern: "GET " + sandboxIssuerPath + "/.well-known/openid-configuration", public: true, h: h.discovery})
	s.handle(route{pattern: "GET " + sandboxIssuerPath + "/jwks", public: true, h: h.jwks})
	s.handle(route{pattern: "POST " + sandboxIssuerPath + "/tokens", need: auth.NeedWrite, h: h.token})
}

type issuerHandlers struct {
	iss *wallets.SandboxIssuer
	now func() time.Time // the store's clock, which verification reads
}

func (h *issuerHandlers) discovery(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, h.iss.Discovery())
	return nil
}

func (h *issuerHandlers) jwks(w http.ResponseWriter, r *http.Request) error {
	set, err := h.iss.JWKS()
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, set)
	return nil
}

// sandboxTokenRequest is the body of POST /sandbox/oidc/tokens.
type sandboxTokenRequest struct {
	Sub      *string    `json:"sub"`
	Aud      *string    `json:"aud"`
	Nonce    *string    `json:"nonce"`
	Email    *string    `json:"email"`
	IssuedAt *time.Time `json:"issuedAt"`
}

func (q sandboxTokenRequest) validate() error {
	var f apierr.Fields
	for name, v := range map[string]*string{"sub": q.Sub, "aud": q.Aud} {
		if v == nil || *v == "" || len(*v) > 255 {
			f.Add(name, apierr.Required, "is required: 1 to 255 characters")
		}
	}
	for name, v := range map[string]*string{"nonce": q.Nonce, "email": q.Email} {
		if v != nil && len(*v) > 255 {
			f.Add(name, apierr.MaxLength, "must be at most 255 characters")
		}
	}
	return f.Err()
}

func (h *issuerHandlers) token(w http.ResponseWriter, r *http.Request) error {
	var req sandboxTokenRequest
	if err := decode(r, &req, sandboxTokenRequest.validate); err != nil {
		return err
	}
	tr := wallets.TokenRequest{Subject: *req.Sub, Audience: *req.Aud, IssuedAt: h.now(), Lifetime: time.Hour,
		Platform: principal(r).Tenant.PlatformID}
	if req.Nonce != nil {
		tr.Nonce = *req.Nonce
	}
	if req.Email != nil {
		tr.Email = *req.Email
	}
	if req.IssuedAt != nil {
		tr.IssuedAt = *req.IssuedAt
	}
	tok, err := h.iss.Sign(tr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"idToken": tok, "issuer": h.iss.URL,
		"expiresAt": tr.IssuedAt.Add(tr.Lifetime).UTC().Truncate(time.Second)})
	return nil
}

// inProcess is an http.RoundTripper that serves a request with the
// server's own handler (the sandbox issuer's documents), whatever its host.
type inProcess struct{ s *Server }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}} // idempotency.go's
	in := req.Clone(req.Context())
	in.RequestURI = in.URL.RequestURI()
	t.s.handler.ServeHTTP(rec, in)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{StatusCode: rec.status, Status: http.StatusText(rec.status), Header: rec.header,
		Body: io.NopCloser(bytes.NewReader(rec.body)), ContentLength: int64(len(rec.body)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req}, nil
}
