// Package invitations is the UMA invitation capability (R-INV-*): a
// customer with a UMA address invites someone by an unguessable, expiring
// code; the invitee claims it with their UMA address (INVITATION_CLAIMED to
// the inviting platform), or the inviting platform cancels it. The states
// move by one explicit table (transitions).
package invitations

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/uma"
)

// Statuses.
const (
	Pending   = "PENDING"
	Claimed   = "CLAIMED"
	Cancelled = "CANCELLED"
	Expired   = "EXPIRED" // read off expiresAt, never stored
)

// Actions.
const (
	ActClaim  = "claim"
	ActCancel = "cancel"
)

// transitions is the state machine: from a status, what each action leads
// to, or the error that refuses it (R-INV-02, R-INV-03, R-INV-06, R-INV-07).
var transitions = map[string]map[string]func(code string) (string, error){
	Pending: {
		ActClaim:  func(string) (string, error) { return Claimed, nil },
		ActCancel: func(string) (string, error) { return Cancelled, nil },
	},
	Claimed: {
		ActClaim:  func(c string) (string, error) { return "", alreadyClaimed(c) },
		ActCancel: func(c string) (string, error) { return "", alreadyClaimed(c) },
	},
	Cancelled: {
		ActClaim:  func(c string) (string, error) { return "", cancelled(c) },
		ActCancel: func(c string) (string, error) { return "", cancelled(c) },
	},
	Expired: {
		ActClaim:  func(c string) (string, error) { return "", expired(c) },
		ActCancel: func(c string) (string, error) { return "", expired(c) },
	},
}

func alreadyClaimed(c string) error {
	return apierr.Newf("INVITATION_ALREADY_CLAIMED", "The invitation %s was already claimed", c)
}
func cancelled(c string) error {
	return apierr.Newf("INVITATION_CANCELLED", "The invitation %s was cancelled", c)
}
func expired(c string) error {
	var f apierr.Fields
	f.Add("invitationCode", apierr.Enum, "names an invitation that expired: only a PENDING invitation can be claimed or cancelled")
	return f.Err()
}

// Invitation is the API representation.
type Invitation struct {
	Code         string     `json:"code"`
	CreatedAt    time.Time  `json:"createdAt"`
	ClaimedAt    *time.Time `json:"claimedAt,omitempty"`
	URL          string     `json:"url"`
	ExpiresAt    time.Time  `json:"expiresAt"`
	InviterUma   string     `json:"inviterUma"`
	InviteeUma   string     `json:"inviteeUma,omitempty"`
	Status       string     `json:"status"`
	FirstName    string     `json:"firstName,omitempty"`
	AmountToSend *Amount    `json:"amountToSend,omitempty"`
}

// Amount is a CurrencyAmount.
type Amount struct {
	Amount   int64             `json:"amount"`
	Currency currency.Currency `json:"currency"`
}

// CreateRequest is POST /invitations.
type CreateRequest struct {
	InviterUma   *string                   `json:"inviterUma"`
	FirstName    *string                   `json:"firstName"`
	AmountToSend *int64                    `json:"amountToSend"`
	ExpiresAt    jsonx.Optional[time.Time] `json:"expiresAt"`
}

// ClaimRequest is POST /invitations/{code}/claim.
type ClaimRequest struct {
	InviteeUma *string `json:"inviteeUma"`
}

// Validate checks the request's own fields.
func (r CreateRequest) Validate() error {
	var f apierr.Fields
	if r.InviterUma == nil {
		f.Add("inviterUma", apierr.Required, "is required: the UMA address of the inviting customer")
	}
	if r.FirstName != nil && (len(*r.FirstName) > 100 || strings.TrimSpace(*r.FirstName) == "") {
		f.Add("firstName", apierr.Format, "must be 1 to 100 characters")
	}
	if r.AmountToSend != nil && (*r.AmountToSend < 1 || *r.AmountToSend > 1_000_000_000_000) {
		f.Add("amountToSend", apierr.Minimum, "must be a positive amount in the smallest unit of the inviter's currency")
	}
	return f.Err()
}

// Validate checks the claim.
func (r ClaimRequest) Validate() error {
	var f apierr.Fields
	if r.InviteeUma == nil {
		f.Add("inviteeUma", apierr.Required, "is required: the UMA address of the customer claiming")
	}
	return f.Err()
}

// DefaultLifetime is how long an invitation without expiresAt stays
// claimable; MaxLifetime bounds a requested expiresAt.
const (
	DefaultLifetime = 30 * 24 * time.Hour
	MaxLifetime     = 365 * 24 * time.Hour
)

// Service is the invitations capability.
type Service struct {
	DB  *store.DB
	UMA *uma.Service
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }

// newCode is 128 random bits, lowercase base32 without padding.
func newCode() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

func render(i store.Invitation, now time.Time) Invitation {
	out := Invitation{Code: i.Code, CreatedAt: i.CreatedAt, ClaimedAt: i.ClaimedAt, URL: i.URL, ExpiresAt: i.ExpiresAt,
		InviterUma: i.InviterUma, InviteeUma: i.InviteeUma, Status: statusAt(i, now), FirstName: i.FirstName}
	if i.AmountToSend > 0 {
		c, _ := currency.Lookup(i.AmountCurrency)
		out.AmountToSend = &Amount{Amount: i.AmountToSend, Currency: c}
	}
	return out
}

// statusAt is the stored status, or EXPIRED for a PENDING one past expiry.
func statusAt(i store.Invitation, now time.Time) string {
	if i.Status == Pending && !now.Before(i.ExpiresAt) {
		return Expired
	}
	return i.Status
}

// Create makes an invitation from a customer of t (R-INV-01). A platform
// without a UMA domain has no invitation configuration (R-INV-08).
func (s *Service) Create(ctx context.Context, t store.Tenant, req CreateRequest) (Invitation, error) {
	if err := req.Validate(); err != nil {
		return Invitation{}, err
	}
	domain, err := s.UMA.Domain(ctx, t)
	if err != nil {
		return Invitation{}, err
	}
	if domain == "" {
		return Invitation{}, apierr.New("INVITATIONS_NOT_CONFIGURED", "Invitations need the platform's umaDomain (PATCH /config): invitation links live on it")
	}
	inviter, err := uma.ParseAddress(*req.InviterUma)
	if err != nil {
		return Invitation{}, err
	}
	now := s.now()
	row := store.Invitation{Code: newCode(), Tenant: t, InviterUma: inviter.String(), Status: Pending,
		ExpiresAt: now.Add(DefaultLifetime), CreatedAt: now, UpdatedAt: now}
	if err := s.fill(ctx, t, req, inviter, now, &row); err != nil {
		return Invitation{}, err
	}
	row.URL = "https://" + domain + "/i/" + row.Code
	var out Invitation
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertInvitation(ctx, row); err != nil {
			return err
		}
		out = render(row, now)
		return idempotency.Record(ctx, tx, out)
	})
	return out, err
}

// fill checks the inviter (a customer of t holding that address) and copies
// the optional fields.
func (s *Service) fill(ctx context.Context, t store.Tenant, req CreateRequest, inviter uma.Address, now time.Time, row *store.Invitation) error {
	var f apierr.Fields
	a, err := s.DB.Read().GetUmaAddress(ctx, inviter.Domain, inviter.Local)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Tenant != t) {
		f.Add("inviterUma", apierr.Enum, "must be the UMA address of a customer of this platform")
		return f.Err()
	}
	if err != nil {
		return err
	}
	row.InviterCustomerID = a.CustomerID
	if req.FirstName != nil {
		row.FirstName = strings.TrimSpace(*req.FirstName)
	}
	if v := req.ExpiresAt.Ptr(); v != nil {
		if !v.After(now) || v.Sub(now) > MaxLifetime {
			f.Add("expiresAt", apierr.Format, "must be in the future and within a year")
			return f.Err()
		}
		row.ExpiresAt = v.UTC().Truncate(time.Microsecond)
	}
	if req.AmountToSend != nil {
		owned, err := s.DB.Read().InternalAccountsOfOwner(ctx, t, a.CustomerID)
		if err != nil {
			return err
		}
		for _, acct := range owned {
			if acct.Status == "ACTIVE" && !acct.Suspense {
				row.AmountToSend, row.AmountCurrency = *req.AmountToSend, acct.Currency
				return nil
			}
		}
		f.Add("amountToSend", apierr.Enum, "needs an active internal account of the inviter to name its currency")
		return f.Err()
	}
	return nil
}

// Get returns an invitation by code, from any platform of the environment:
// the code is the secret (R-INV-09).
func (s *Service) Get(ctx context.Context, t store.Tenant, code string) (Invitation, error) {
	row, err := s.DB.Read().GetInvitation(ctx, t.Env, strings.ToLower(code), false)
	if errors.Is(err, store.ErrNotFound) {
		return Invitation{}, notFound(code)
	}
	if err != nil {
		return Invitation{}, err
	}
	return render(row, s.now()), nil
}

func notFound(code string) error {
	if len(code) > 64 {
		code = code[:64] + "…"
	}
	return apierr.NotFound("INVITATION_NOT_FOUND", "Invitation "+code)
}

// Claim associates the invitee's UMA address with a PENDING invitation and
// fires INVITATION_CLAIMED to the inviting platform (R-INV-05). Any
// platform of the environment may claim for its customer.
func (s *Service) Claim(ctx context.Context, t store.Tenant, code string, req ClaimRequest) (Invitation, error) {
	if err := req.Validate(); err != nil {
		return Invitation{}, err
	}
	invitee, err := uma.ParseAddress(*req.InviteeUma)
	if err != nil {
		return Invitation{}, err
	}
	return s.move(ctx, t, code, ActClaim, func(row *store.Invitation, now time.Time) error {
		if invitee.String() == row.InviterUma {
			var f apierr.Fields
			f.Add("inviteeUma", apierr.Enum, "must not be the inviter's own address")
			return f.Err()
		}
		row.InviteeUma, row.ClaimedAt = invitee.String(), &now
		return nil
	})
}

// Cancel cancels a PENDING invitation; only the inviting platform (for its
// customer, the inviter) may (R-INV-04).
func (s *Service) Cancel(ctx context.Context, t store.Tenant, code string) (Invitation, error) {
	return s.move(ctx, t, code, ActCancel, func(row *store.Invitation, _ time.Time) error {
		if row.Tenant != t {
			return apierr.New(apierr.CodeForbidden, "Only the inviter's platform can cancel invitation "+row.Code)
		}
		return nil
	})
}

// move applies one action under the row lock, by the transition table.
func (s *Service) move(ctx context.Context, t store.Tenant, code, action string, check func(*store.Invitation, time.Time) error) (Invitation, error) {
	var out Invitation
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetInvitation(ctx, t.Env, strings.ToLower(code), true)
		if errors.Is(err, store.ErrNotFound) {
			return notFound(code)
		}
		if err != nil {
			return err
		}
		now := s.now()
		if err := check(&row, now); err != nil {
			return err
		}
		next, err := transitions[statusAt(row, now)][action](row.Code)
		if err != nil {
			return err
		}
		row.Status, row.UpdatedAt = next, now
		if err := tx.UpdateInvitation(ctx, row); err != nil {
			return err
		}
		out = render(row, now)
		if next == Claimed {
			if _, err := events.Emit(ctx, tx, row.Tenant, events.InvitationClaimed, row.Code, out); err != nil {
				return err
			}
		}
		return idempotency.Record(ctx, tx, out)
	})
	return out, err
}
