package customers

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Codes are stored as a keyed hash bound to salt, customer and channel.
func TestHashCode(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	h := HashCode(key, "salt", "Customer:1", ChannelEmail, "123456")
	if len(h) != 64 || strings.Contains(h, "123456") || h != HashCode(key, "salt", "Customer:1", ChannelEmail, "123456") {
		t.Fatal(h)
	}
	for _, other := range []string{
		HashCode([]byte("another key, another hash ......"), "salt", "Customer:1", ChannelEmail, "123456"),
		HashCode(key, "pepper", "Customer:1", ChannelEmail, "123456"),
		HashCode(key, "salt", "Customer:2", ChannelEmail, "123456"),
		HashCode(key, "salt", "Customer:1", ChannelPhone, "123456"),
		HashCode(key, "salt", "Customer:1", ChannelEmail, "123457"),
	} {
		if other == h {
			t.Fatal("the hash binds key, salt, customer, channel and code")
		}
	}
	c := store.ContactCode{CustomerID: "Customer:1", Channel: ChannelEmail, Salt: "salt", CodeHash: h}
	if !CodeMatches(key, c, "123456") || CodeMatches(key, c, "654321") {
		t.Fatal("CodeMatches")
	}
	re := regexp.MustCompile(`^[0-9]{6}$`)
	seen := map[string]bool{}
	for range 200 {
		code := NewCode()
		if !re.MatchString(code) {
			t.Fatal(code)
		}
		seen[code] = true
	}
	if len(seen) < 190 {
		t.Fatalf("codes are random: %d distinct of 200", len(seen))
	}
	if Mask("jane@example.com") != "j***@example.com" || Mask("+14155551234") != "********1234" {
		t.Fatal(Mask("jane@example.com"), Mask("+14155551234"))
	}
}

// recorder captures messages (a stand-in for a real email/SMS adapter).
type recorder struct {
	mu   sync.Mutex
	sent []Message
}

func (r *recorder) Send(_ context.Context, m Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	return nil
}

func (r *recorder) last() Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent[len(r.sent)-1]
}

func codeError(t *testing.T, err error) string {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok || e.Status != 400 {
		t.Fatalf("want a 400, got %v", err)
	}
	return e.Details["codeError"].(string)
}

// OTP on a real store: production codes are random and hashed; wrong codes
// count; MaxAttempts burn the code; codes expire after CodeTTL; sends are
// rate limited (R-CONTACT-03, R-CONTACT-05).
func TestOTP_ProductionLifecycle_R_CONTACT_05(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, _, err := platforms.Bootstrap(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		tn := store.Tenant{PlatformID: p.ID, Env: store.EnvProduction}
		svc := New(db, nil)
		rec := &recorder{}
		svc.ProductionSender = rec
		clock := time.Now()
		db.SetClock(func() time.Time { return clock })
		req := decodeInto[CreateRequest](t, `{"customerType":"INDIVIDUAL","fullName":"Hans","region":"AT","email":"h@example.at","phoneNumber":"+43123456"}`)
		c, err := svc.Create(ctx, tn, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.SendCode(ctx, tn, c.ID, ChannelEmail); err != nil {
			t.Fatal(err)
		}
		m := rec.last()
		if m.To != "h@example.at" || m.Channel != ChannelEmail || len(m.Code) != 6 {
			t.Fatalf("%+v", m)
		}
		stored, err := db.Read().GetContactCode(ctx, tn, c.ID, ChannelEmail, false)
		// Stored as the keyed hash of the code, not in clear. (Not "the hash
		// does not contain the code": 64 hex digits hold a given 6-digit run
		// by chance about once in 280,000.)
		key, kerr := svc.key(ctx)
		if err != nil || kerr != nil || stored.CodeHash == m.Code || len(stored.CodeHash) != 64 || !CodeMatches(key, stored, m.Code) ||
			!stored.ExpiresAt.Equal(clock.UTC().Truncate(time.Microsecond).Add(CodeTTL)) {
			t.Fatalf("%+v %v %v", stored, err, kerr)
		}
		wrong := "000000"
		if m.Code == wrong {
			wrong = "000001"
		}
		confirm := func(code string) error {
			_, err := svc.ConfirmCode(ctx, tn, c.ID, ChannelEmail, ConfirmRequest{Code: &code})
			return err
		}
		for i := 1; i <= MaxAttempts; i++ {
			if got := codeError(t, confirm(wrong)); got != CodeIncorrect {
				t.Fatalf("attempt %d: %s", i, got)
			}
		}
		if got := codeError(t, confirm(m.Code)); got != CodeTooManyAttempts {
			t.Fatalf("the right code after %d wrong ones: %s", MaxAttempts, got)
		}
		// A new code works; an expired one does not.
		if err := svc.SendCode(ctx, tn, c.ID, ChannelEmail); err != nil {
			t.Fatal(err)
		}
		m = rec.last()
		clock = clock.Add(CodeTTL)
		if got := codeError(t, confirm(m.Code)); got != CodeExpired {
			t.Fatalf("at expiry: %s", got)
		}
		if err := svc.SendCode(ctx, tn, c.ID, ChannelEmail); err != nil {
			t.Fatal(err)
		}
		m = rec.last()
		clock = clock.Add(CodeTTL - time.Second)
		if err := confirm(m.Code); err != nil {
			t.Fatalf("just before expiry: %v", err)
		}
		got, _ := svc.Get(ctx, tn, c.ID)
		if got.ContactVerification.Email != ContactVerified || got.ContactVerification.Phone != ContactPending {
			t.Fatalf("%+v", got.ContactVerification)
		}
		// 123456 is not special in production.
		code := SandboxCode
		if _, err := svc.ConfirmCode(ctx, tn, c.ID, ChannelPhone, ConfirmRequest{Code: &code}); codeError(t, err) != CodeNotRequested {
			t.Fatal(err)
		}
		// Send limit: MaxSends per window, then 429 with a wait.
		for range MaxSends {
			if err := svc.SendCode(ctx, tn, c.ID, ChannelPhone); err != nil {
				t.Fatal(err)
			}
		}
		var limited *RateLimitedError
		err = svc.SendCode(ctx, tn, c.ID, ChannelPhone)
		if !errors.As(err, &limited) || limited.RetryAfter <= 0 || limited.RetryAfter > SendWindow {
			t.Fatalf("%v", err)
		}
		if e, _ := apierr.From(err); e.Code != apierr.CodeRateLimited || e.Status != 429 {
			t.Fatalf("%+v", e)
		}
		clock = clock.Add(SendWindow)
		if err := svc.SendCode(ctx, tn, c.ID, ChannelPhone); err != nil {
			t.Fatalf("a new window: %v", err)
		}
	})
}
