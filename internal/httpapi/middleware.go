package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
)

type requestIDKey struct{}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// requestID gives every request an id, taken from a well-formed incoming
// X-Request-Id or made fresh, and echoes it on the response.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := r.Header.Get("X-Request-Id")
		if !requestIDPattern.MatchString(rid) {
			b := make([]byte, 12)
			_, _ = rand.Read(b)
			rid = "req_" + hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", rid)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, rid)))
	})
}

func requestID(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey{}).(string)
	return s
}

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// tenantNote lets the route wrapper tell the access log who called, without
// the log seeing credentials.
type tenantNote struct{ principal *auth.Principal }

type tenantNoteKey struct{}

// observe logs one line per request and records metrics by route pattern.
// It logs neither headers nor bodies, so Authorization and secrets never
// reach the log.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		note := &tenantNote{}
		sw := &statusWriter{ResponseWriter: w}
		r = r.WithContext(context.WithValue(r.Context(), tenantNoteKey{}, note))
		next.ServeHTTP(sw, r)
		d := time.Since(start)
		route := r.Pattern
		if route == "" || route == "/" {
			route = "unmatched"
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.metrics.observe(route, r.Method, sw.status, d)
		attrs := []slog.Attr{
			slog.String("request_id", requestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.String("path", r.URL.Path),
			slog.Int("status", sw.status),
			slog.Int("bytes", sw.bytes),
			slog.Duration("duration", d),
		}
		if p := note.principal; p != nil {
			attrs = append(attrs, slog.String("token_id", p.TokenID), slog.String("platform_id", p.Tenant.PlatformID),
				slog.String("env", p.Tenant.Env))
		}
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelError
		}
		s.log.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// recoverPanics turns a panic into 500 INTERNAL_ERROR; the stack goes to the
// log, never to the client.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.LogAttrs(r.Context(), slog.LevelError, "panic",
				slog.String("request_id", requestID(r.Context())), slog.Any("panic", p),
				slog.String("stack", string(debug.Stack())))
			writeJSON(w, http.StatusInternalServerError, apierr.Internal())
		}()
		next.ServeHTTP(w, r)
	})
}
