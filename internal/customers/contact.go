package customers

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Contact channels.
const (
	ChannelEmail = "EMAIL"
	ChannelPhone = "PHONE"
)

// One-time code rules (R-CONTACT-01..06).
const (
	// SandboxCode is the code every sandbox send issues (R-CONTACT-04).
	SandboxCode = "123456"
	// CodeTTL is how long a code can be confirmed.
	CodeTTL = 10 * time.Minute
	// MaxAttempts wrong codes burn a code; a new one must be requested.
	MaxAttempts = 5
	// MaxSends codes may be sent per channel within SendWindow.
	MaxSends   = 5
	SendWindow = 15 * time.Minute
)

var codeRE = regexp.MustCompile(`^[0-9]{6}$`)

// ConfirmRequest is the body of …/verify-email/confirm and …/verify-phone/confirm.
type ConfirmRequest struct {
	Code *string `json:"code"`
}

// Validate lists every invalid field; it never changes r.
func (r ConfirmRequest) Validate() error {
	x := &v{}
	if x.required("code", r.Code) && !codeRE.MatchString(*r.Code) {
		x.add("code", apierr.Pattern, "must be the 6-digit code that was sent")
	}
	return x.f.Err()
}

// Why a code was refused, in details.codeError of the 400.
const (
	CodeIncorrect       = "INCORRECT"
	CodeExpired         = "EXPIRED"
	CodeTooManyAttempts = "TOO_MANY_ATTEMPTS"
	CodeNotRequested    = "NOT_REQUESTED"
)

// RateLimitedError asks the caller to wait before sending another code. The
// HTTP layer puts RetryAfter in the Retry-After header.
type RateLimitedError struct {
	Err        *apierr.Error
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string { return e.Err.Error() }

// Unwrap exposes the client-safe error.
func (e *RateLimitedError) Unwrap() error { return e.Err }

// channelName is the API name of a channel.
func channelName(channel string) string {
	if channel == ChannelPhone {
		return "phone"
	}
	return "email"
}

// destination is the current address or number of a channel.
func destination(p Profile, channel string) *string {
	if channel == ChannelPhone {
		return p.PhoneNumber
	}
	return p.Email
}

func verified(row store.Customer, p Profile, channel string) bool {
	if channel == ChannelPhone {
		return phoneVerified(row, p)
	}
	return emailVerified(row, p)
}

// contactTarget loads a live customer that may verify channel now.
func contactTarget(ctx context.Context, tx *store.Tx, t store.Tenant, customerID, channel string) (store.Customer, Profile, error) {
	row, err := getLive(ctx, tx.Q, t, customerID, true)
	if err != nil {
		return store.Customer{}, Profile{}, err
	}
	p, err := profileOf(row)
	if err != nil {
		return store.Customer{}, Profile{}, err
	}
	name := channelName(channel)
	rule := ProviderRuleFor(p)
	if !rule.VerifiesContact {
		return store.Customer{}, Profile{}, apierr.Conflict(fmt.Sprintf(
			"Customer %s is served by the %s provider, which has no %s verification requirement", row.ID, rule.Name, name))
	}
	if verified(row, p, channel) {
		return store.Customer{}, Profile{}, apierr.Conflict(fmt.Sprintf("The %s of customer %s is already VERIFIED", name, row.ID))
	}
	if destination(p, channel) == nil {
		// Unreachable while validation requires both for such customers.
		return store.Customer{}, Profile{}, apierr.Conflict(fmt.Sprintf("Customer %s has no %s to verify", row.ID, name))
	}
	return row, p, nil
}

func (s *Service) sender(t store.Tenant) Sender {
	if t.Env == store.EnvSandbox {
		return s.SandboxSender
	}
	return s.ProductionSender
}

// key returns the server secret that keys code hashes.
func (s *Service) key(ctx context.Context) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.codeKey == nil {
		k, err := s.DB.ServerSecret(ctx, "contact-code-hmac")
		if err != nil {
			return nil, err
		}
		s.codeKey = k
	}
	return s.codeKey, nil
}

// HashCode is the stored form of a code: an HMAC under a server secret, over
// a per-code salt, the customer, the channel and the code. A leaked table
// does not reveal codes (a 6-digit code is trivial to brute-force from a
// plain hash).
func HashCode(key []byte, salt, customerID, channel, code string) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s|%s|%s|%s", salt, customerID, channel, code)
	return hex.EncodeToString(m.Sum(nil))
}

// CodeMatches compares in constant time.
func CodeMatches(key []byte, c store.ContactCode, code string) bool {
	return hmac.Equal([]byte(HashCode(key, c.Salt, c.CustomerID, c.Channel, code)), []byte(c.CodeHash))
}

// NewCode returns a random 6-digit code.
func NewCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic("customers: system random source failed: " + err.Error())
	}
	return fmt.Sprintf("%06d", n.Int64())
}

func newSalt() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("customers: system random source failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// SendCode sends (or re-sends) a one-time code to the customer's email or
// phone (R-CONTACT-01). Customers whose provider does not verify contact
// details, or whose channel is already verified, get 409 (R-CONTACT-02). A
// new code replaces the previous one. At most MaxSends codes per channel go
// out within SendWindow.
func (s *Service) SendCode(ctx context.Context, t store.Tenant, customerID, channel string) error {
	key, err := s.key(ctx)
	if err != nil {
		return err
	}
	code := SandboxCode
	if t.Env != store.EnvSandbox {
		code = NewCode()
	}
	var msg Message
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, p, err := contactTarget(ctx, tx, t, customerID, channel)
		if err != nil {
			return err
		}
		now := s.now()
		c := store.ContactCode{CustomerID: row.ID, Channel: channel, Tenant: t, Destination: *destination(p, channel),
			Salt: newSalt(), ExpiresAt: now.Add(CodeTTL), Sends: 1, WindowStart: now, CreatedAt: now}
		prev, err := tx.GetContactCode(ctx, t, row.ID, channel, true)
		switch {
		case err == nil && now.Sub(prev.WindowStart) < SendWindow:
			if prev.Sends >= MaxSends {
				wait := prev.WindowStart.Add(SendWindow).Sub(now)
				secs := int((wait + time.Second - 1) / time.Second)
				return &RateLimitedError{RetryAfter: wait, Err: apierr.Newf(apierr.CodeRateLimited,
					"%d codes were sent to this %s in the last %v; retry after %d s",
					prev.Sends, channelName(channel), SendWindow, secs)}
			}
			c.Sends, c.WindowStart = prev.Sends+1, prev.WindowStart
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
		c.CodeHash = HashCode(key, c.Salt, c.CustomerID, channel, code)
		if err := tx.PutContactCode(ctx, c); err != nil {
			return err
		}
		msg = Message{Tenant: t, CustomerID: row.ID, Channel: channel, To: c.Destination, Code: code, ExpiresAt: c.ExpiresAt}
		return nil
	})
	if err != nil {
		return err
	}
	// After the commit: a failed delivery leaves a valid code the customer
	// never got; sending again replaces it.
	return s.sender(t).Send(ctx, msg)
}

// ConfirmCode checks a code and marks the channel VERIFIED (R-CONTACT-03).
// A wrong code counts an attempt (MaxAttempts burn the code), an expired one
// is refused (R-CONTACT-05). In sandbox the code is 123456, and it may be
// confirmed without requesting it first (R-CONTACT-04). Once both channels
// are verified, KYC may begin; where no paperwork is required the sandbox
// outcome is decided then.
func (s *Service) ConfirmCode(ctx context.Context, t store.Tenant, customerID, channel string, req ConfirmRequest) (Customer, error) {
	if err := req.Validate(); err != nil {
		return Customer{}, err
	}
	key, err := s.key(ctx)
	if err != nil {
		return Customer{}, err
	}
	code := *req.Code
	var out Customer
	var refused error // committed with the attempt count, returned after
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		refused = nil
		row, p, err := contactTarget(ctx, tx, t, customerID, channel)
		if err != nil {
			return err
		}
		now := s.now()
		dest := *destination(p, channel)
		c, err := tx.GetContactCode(ctx, t, row.ID, channel, true)
		outstanding := err == nil && c.Destination == dest
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		refuse := func(why, reason string, details map[string]any) error {
			if details == nil {
				details = map[string]any{}
			}
			details["codeError"] = why
			refused = apierr.InvalidInput(reason).WithDetails(details)
			return nil
		}
		switch {
		case !outstanding && t.Env == store.EnvSandbox && code == SandboxCode:
			// Sandbox: nothing is really sent, so 123456 works unasked.
		case !outstanding:
			return refuse(CodeNotRequested, fmt.Sprintf("No code was requested for this %s; request one first", channelName(channel)), nil)
		case c.Attempts >= MaxAttempts:
			return refuse(CodeTooManyAttempts, "Too many wrong codes; request a new code", nil)
		case !now.Before(c.ExpiresAt):
			return refuse(CodeExpired, "The code has expired; request a new code", nil)
		case !CodeMatches(key, c, code):
			c.Attempts++
			if err := tx.SetContactCodeAttempts(ctx, t, row.ID, channel, c.Attempts); err != nil {
				return err
			}
			left := MaxAttempts - c.Attempts
			reason := fmt.Sprintf("The code is wrong; %d attempts left", left)
			if left == 0 {
				reason = "The code is wrong and no attempts are left; request a new code"
			}
			return refuse(CodeIncorrect, reason, map[string]any{"attemptsRemaining": left})
		}
		if channel == ChannelPhone {
			row.PhoneVerified = &dest
		} else {
			row.EmailVerified = &dest
		}
		row.UpdatedAt = now
		if err := tx.UpdateCustomer(ctx, row); err != nil {
			return err
		}
		if err := tx.DeleteContactCodes(ctx, t, row.ID, channel); err != nil {
			return err
		}
		if err := s.resolve(ctx, tx, t, &row); err != nil {
			return err
		}
		out, err = renderIn(ctx, tx.Q, t, row)
		return err
	})
	if err != nil {
		return Customer{}, err
	}
	if refused != nil {
		return Customer{}, refused
	}
	return out, nil
}
