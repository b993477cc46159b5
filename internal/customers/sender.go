package customers

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Message is a one-time code on its way to a customer.
type Message struct {
	Tenant     store.Tenant
	CustomerID string
	Channel    string // EMAIL or PHONE
	To         string
	Code       string
	ExpiresAt  time.Time
}

// Sender delivers one-time codes by email or SMS. Real senders are adapters
// to an email or SMS provider.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// SandboxSender delivers nothing: it records the most recent messages (for
// tests and the sandbox) and logs them. Sandbox codes are always 123456, so
// the log carries the code.
type SandboxSender struct {
	log  *slog.Logger
	max  int
	mu   sync.Mutex
	sent []Message
}

// NewSandboxSender keeps the last max messages.
func NewSandboxSender(log *slog.Logger, max int) *SandboxSender {
	return &SandboxSender{log: log, max: max}
}

// Send records m.
func (s *SandboxSender) Send(ctx context.Context, m Message) error {
	s.mu.Lock()
	s.sent = append(s.sent, m)
	if len(s.sent) > s.max {
		s.sent = s.sent[len(s.sent)-s.max:]
	}
	s.mu.Unlock()
	s.log.LogAttrs(ctx, slog.LevelInfo, "sandbox contact code sent (not delivered)",
		slog.String("customer_id", m.CustomerID), slog.String("channel", m.Channel),
		slog.String("to", m.To), slog.String("code", m.Code))
	return nil
}

// Sent returns the recorded messages, oldest first.
func (s *SandboxSender) Sent() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sent...)
}

// LogSender stands in for a real email/SMS adapter in production: it logs
// that a code was issued, never the code itself, and masks the destination.
type LogSender struct{ Log *slog.Logger }

// Send logs m without its code.
func (l LogSender) Send(ctx context.Context, m Message) error {
	l.Log.LogAttrs(ctx, slog.LevelWarn, "contact code issued but no email/SMS adapter is configured; it was not delivered",
		slog.String("customer_id", m.CustomerID), slog.String("channel", m.Channel), slog.String("to", Mask(m.To)))
	return nil
}

// Mask hides most of an email address or phone number for logs.
func Mask(s string) string {
	if at := strings.LastIndex(s, "@"); at > 0 {
		return s[:1] + "***" + s[at:]
	}
	if len(s) > 4 {
		return strings.Repeat("*", len(s)-4) + s[len(s)-4:]
	}
	return "****"
}
