package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/store"
)

const (
	sessionCookie = "pd_session"
	signinCookie  = "pd_signin" // the sign-in form's CSRF token, before a session exists
	flashCookie   = "pd_flash"
	cookiePath    = "/dashboard"
)

// session is a signed-in request's state: the session row and the principal
// of its token, re-read on every request.
type session struct {
	row       store.DashboardSession
	principal auth.Principal
}

// CSRF is the token every form of the session carries.
func (s *session) CSRF() string { return s.row.CSRFToken }

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashID(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

func (h *Handler) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(h.opts.PublicURL, "https://")
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure(r), SameSite: http.SameSiteStrictMode})
}

// load returns the request's live session, or nil: no cookie, an unknown,
// expired or idle one, or one whose token was revoked or expired.
func (h *Handler) load(r *http.Request) (*session, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		return nil, nil
	}
	db := h.opts.DB
	now := db.Now()
	row, err := db.Read().DashboardSessionByHash(r.Context(), hashID(c.Value), now)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p, err := h.opts.Tokens.PrincipalOf(r.Context(), row.Tenant, row.TokenID)
	if err != nil {
		_ = db.Write().DeleteDashboardSession(r.Context(), row.IDHash)
		return nil, nil
	}
	// Sliding idle timeout, written at most once a minute.
	if now.Sub(row.LastSeenAt) >= time.Minute {
		expires := now.Add(h.opts.IdleTimeout)
		if limit := row.CreatedAt.Add(h.opts.MaxAge); limit.Before(expires) {
			expires = limit
		}
		if err := db.Write().TouchDashboardSession(r.Context(), row.IDHash, now, expires); err != nil {
			return nil, err
		}
	}
	return &session{row: row, principal: p}, nil
}

// start opens a session for principal p and sets its cookie.
func (h *Handler) start(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	value := randomToken()
	now := h.opts.DB.Now()
	row := store.DashboardSession{IDHash: hashID(value), Tenant: p.Tenant, TokenID: p.TokenID,
		CSRFToken: randomToken(), CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(h.opts.IdleTimeout)}
	if err := h.opts.DB.Write().InsertDashboardSession(r.Context(), row); err != nil {
		return err
	}
	h.setCookie(w, r, sessionCookie, value, int(h.opts.MaxAge/time.Second))
	return nil
}

// sameOrigin refuses a cross-site form post: an Origin (or, without one, a
// Referer) that names another host.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" {
		src = r.Header.Get("Referer")
	}
	if src == "" {
		return true
	}
	u, err := url.Parse(src)
	return err == nil && u.Host == r.Host
}

func tokensEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// signInPage shows the sign-in form, with a fresh CSRF token in a cookie and
// in the form (a session does not exist yet to hold it).
func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	h.renderSignIn(w, r, http.StatusOK, "")
}

func (h *Handler) renderSignIn(w http.ResponseWriter, r *http.Request, status int, msg string) {
	token := randomToken()
	h.setCookie(w, r, signinCookie, token, 3600)
	h.pages.render(w, status, "signin", view{Title: "Sign in", Error: msg, Form: map[string]string{"csrf": token}})
}

// signIn checks the API token's credentials exactly as the API does and
// opens a session for it.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.renderSignIn(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	c, err := r.Cookie(signinCookie)
	if err != nil || !tokensEqual(c.Value, r.PostForm.Get("csrf")) || !sameOrigin(r) {
		h.renderSignIn(w, r, http.StatusForbidden, "The form expired or came from another site. Please sign in again.")
		return
	}
	if ok, _ := h.signins.Allow(clientIP(r)); !ok {
		h.renderSignIn(w, r, http.StatusTooManyRequests, "Too many sign-in attempts. Wait a few seconds and try again.")
		return
	}
	p, err := h.opts.Tokens.Authenticate(r.Context(), strings.TrimSpace(r.PostForm.Get("clientId")), r.PostForm.Get("clientSecret"))
	if err != nil {
		h.renderSignIn(w, r, http.StatusUnauthorized, "Those credentials are not a live API token.")
		return
	}
	if err := h.start(w, r, p); err != nil {
		h.fail(w, r, err)
		return
	}
	h.setCookie(w, r, signinCookie, "", -1)
	http.Redirect(w, r, "/dashboard/", http.StatusSeeOther)
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	if err := h.opts.DB.Write().DeleteDashboardSession(r.Context(), s.row.IDHash); err != nil {
		h.fail(w, r, err)
		return
	}
	h.setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/dashboard/signin", http.StatusSeeOther)
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// page wraps a GET page: no session, to the sign-in form.
func (h *Handler) page(fn func(w http.ResponseWriter, r *http.Request, s *session)) http.Handler {
	return h.signedIn(fn)
}

// signedIn runs fn with the request's session; without one it sends the
// browser to the sign-in form.
func (h *Handler) signedIn(fn func(w http.ResponseWriter, r *http.Request, s *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := h.load(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if s == nil {
			http.Redirect(w, r, "/dashboard/signin", http.StatusSeeOther)
			return
		}
		fn(w, r, s)
	}
}

// action wraps a form POST: a session, a same-origin request and the
// session's CSRF token are all required; the form is parsed.
func (h *Handler) action(fn func(w http.ResponseWriter, r *http.Request, s *session)) http.Handler {
	return h.signedIn(func(w http.ResponseWriter, r *http.Request, s *session) {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			h.pages.render(w, http.StatusBadRequest, "error", h.view(r, s, "Bad request", nil).withError("The form could not be read."))
			return
		}
		if !tokensEqual(s.CSRF(), r.PostForm.Get("csrf")) || !sameOrigin(r) {
			h.pages.render(w, http.StatusForbidden, "error", h.view(r, s, "Forbidden", nil).
				withError("This form is missing its security token or came from another site; nothing was changed. Reload the page and try again."))
			return
		}
		fn(w, r, s)
	})
}

// flash leaves a one-line message for the next page the browser loads.
func (h *Handler) flash(w http.ResponseWriter, r *http.Request, msg string) {
	h.setCookie(w, r, flashCookie, base64.RawURLEncoding.EncodeToString([]byte(msg)), 60)
}

func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	h.setCookie(w, r, flashCookie, "", -1)
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(b) > 500 {
		return ""
	}
	return string(b)
}

// redirectBack answers a successful action: the flash message, then the page
// named by the form's "back" field (a dashboard path), else fallback.
func (h *Handler) redirectBack(w http.ResponseWriter, r *http.Request, fallback, msg string) {
	h.flash(w, r, msg)
	back := safeBack(r.PostForm.Get("back"))
	if back == "" {
		back = fallback
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// safeBack is back when it is a path of the dashboard, else "".
func safeBack(back string) string {
	if !strings.HasPrefix(back, "/dashboard/") || strings.ContainsAny(back, "\\\r\n") {
		return ""
	}
	return back
}

// fail answers an internal error without its details.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	h.opts.Log.Error("dashboard", "path", r.URL.Path, "err", err)
	h.pages.render(w, http.StatusInternalServerError, "error", view{Title: "Error", Error: "Something went wrong on our side; it has been logged."})
}
