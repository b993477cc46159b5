// Package kyclink issues hosted KYC links (POST /customers/{customerId}/
// kyc-link) and runs the page behind them: a form, served by paymentsd
// itself, where the customer enters their identity data and one document.
// Submitting it records the data and the document through the customers
// service and submits the verification exactly as POST /verifications does;
// the page then shows the outcome.
//
// A link is single-use and expires (24 hours by default). Only a SHA-256 of
// its token is stored. Issuing a link changes nothing about the customer
// (R-CUST-34), and every call issues a fresh one (R-CUST-35). The form
// carries a nonce derived from the link, which the submission must return
// (a cross-site form post cannot know it).
package kyclink

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/url"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// DefaultTTL is how long a link stays usable.
const DefaultTTL = 24 * time.Hour

// Provider names who runs the hosted flow: paymentsd itself.
const Provider = "PAYMENTSD"

// PagePath is the path of the hosted page. The link's token is its `token`
// query parameter: the access log records paths, never query strings, so
// the credential stays out of it.
const PagePath = "/kyc"

// Service issues links and completes their submissions.
type Service struct {
	DB        *store.DB
	Customers *customers.Service
	Documents *customers.Documents
	// TTL is how long a new link is valid (default DefaultTTL).
	TTL time.Duration

	keyOnce sync.Once
	key     []byte
	keyErr  error
}

// CreateRequest is the optional body of POST /customers/{customerId}/kyc-link.
type CreateRequest struct {
	// RedirectURI is where the result page sends the customer on.
	RedirectURI *string `json:"redirectUri"`
}

// Validate lists every invalid field; it never changes r.
func (r CreateRequest) Validate() error {
	var f apierr.Fields
	if r.RedirectURI != nil {
		u, err := url.Parse(*r.RedirectURI)
		switch {
		case len(*r.RedirectURI) > 2048:
			f.Add("redirectUri", apierr.MaxLength, "must be at most 2048 characters")
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			f.Add("redirectUri", apierr.Format, "must be an absolute https:// URL (http:// for local development)")
		}
	}
	return f.Err()
}

// Link is the answer to POST /customers/{customerId}/kyc-link. No provider
// SDK token exists for the built-in page, so `token` is never set.
type Link struct {
	KycURL    string    `json:"kycUrl"`
	ExpiresAt time.Time `json:"expiresAt"`
	Provider  string    `json:"provider"`
	Token     string    `json:"token,omitempty"`
}

func (s *Service) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return DefaultTTL
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Create issues a fresh link for a live customer of the tenant. A customer
// whose provider needs email and phone verified first gets 409 until both
// are (KYC cannot begin before, R-CONTACT-06). baseURL is the public address
// of this service (scheme and host, no trailing slash).
func (s *Service) Create(ctx context.Context, t store.Tenant, customerID string, req CreateRequest, baseURL string) (Link, error) {
	if err := req.Validate(); err != nil {
		return Link{}, err
	}
	c, err := s.Customers.Get(ctx, t, customerID)
	if err != nil {
		return Link{}, err
	}
	if cv := c.ContactVerification; cv != nil && (cv.Email != customers.ContactVerified || cv.Phone != customers.ContactVerified) {
		return Link{}, apierr.Conflict("Customer " + c.ID + " must have its email and phone VERIFIED before KYC begins; " +
			"use POST /customers/{customerId}/verify-email and verify-phone, then ask for a link").
			WithDetails(map[string]any{"contactVerification": cv})
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Link{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := s.now()
	l := store.KycLink{ID: id.New(id.KycLink), Tenant: t, CustomerID: c.ID, TokenHash: hashToken(token),
		ExpiresAt: now.Add(s.ttl()), CreatedAt: now}
	if req.RedirectURI != nil {
		l.RedirectURI = *req.RedirectURI
	}
	if err := s.DB.Write().InsertKycLink(ctx, l); err != nil {
		return Link{}, err
	}
	return Link{KycURL: baseURL + PagePath + "?token=" + token, ExpiresAt: l.ExpiresAt, Provider: Provider}, nil
}

// State is what a token opens.
type State int

// States of a link.
const (
	StateOpen State = iota
	StateUnknown
	StateUsed
	StateExpired
)

// Session is an opened link.
type Session struct {
	State    State
	Link     store.KycLink
	Customer customers.Customer
	// Nonce must come back with the form.
	Nonce string
}

// Sandbox reports whether the link belongs to a sandbox tenant.
func (s Session) Sandbox() bool { return s.Link.Tenant.Env == store.EnvSandbox }

func (s *Service) nonceKey(ctx context.Context) ([]byte, error) {
	s.keyOnce.Do(func() { s.key, s.keyErr = s.DB.ServerSecret(ctx, "kyc-link-nonce") })
	return s.key, s.keyErr
}

func (s *Service) nonce(ctx context.Context, linkID string) (string, error) {
	key, err := s.nonceKey(ctx)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("kyc-link-form|" + linkID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)), nil
}

// CheckNonce reports whether nonce is the session's, in constant time.
func (s Session) CheckNonce(nonce string) bool {
	return s.Nonce != "" && hmac.Equal([]byte(nonce), []byte(s.Nonce))
}

// Open finds the link of a token and tells whether it can be used.
func (s *Service) Open(ctx context.Context, token string) (Session, error) {
	if token == "" || len(token) > 128 {
		return Session{State: StateUnknown}, nil
	}
	l, err := s.DB.Read().KycLinkByTokenHash(ctx, hashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return Session{State: StateUnknown}, nil
	}
	if err != nil {
		return Session{}, err
	}
	sess := Session{Link: l}
	c, err := s.Customers.Get(ctx, l.Tenant, l.CustomerID)
	if err != nil {
		if ae, ok := apierr.From(err); ok && ae.Status == 404 {
			return Session{State: StateUnknown}, nil // the customer was deleted
		}
		return Session{}, err
	}
	sess.Customer = c
	switch {
	case l.UsedAt != nil:
		sess.State = StateUsed
	case !s.now().Before(l.ExpiresAt):
		sess.State = StateExpired
	}
	if sess.Nonce, err = s.nonce(ctx, l.ID); err != nil {
		return Session{}, err
	}
	return sess, nil
}

// Submission is what the form sends: the customer's data (only the fields
// the page shows) and one document.
type Submission struct {
	Update   customers.UpdateRequest
	Document customers.UploadRequest
	File     customers.StoredFile
}

// Result is what the page shows after a submission.
type Result struct {
	Verification customers.Verification
	Customer     customers.Customer
	RedirectURI  string
}

// ErrLinkUsed means another submission used the link first, or it expired
// meanwhile.
var ErrLinkUsed = errors.New("kyclink: link already used or expired")

// Complete uses the link: it records the data and the document and submits
// the verification, in that order. A document of the same type and side
// already on file is replaced. If a step fails before the verification is
// submitted, the link becomes usable again and the file is discarded.
func (s *Service) Complete(ctx context.Context, sess Session, sub Submission) (Result, error) {
	t, customerID := sess.Link.Tenant, sess.Link.CustomerID
	if err := s.DB.Write().ClaimKycLink(ctx, sess.Link.ID, s.now()); err != nil {
		s.Documents.Discard(ctx, sub.File)
		if errors.Is(err, store.ErrNotFound) {
			return Result{}, ErrLinkUsed
		}
		return Result{}, err
	}
	release := func() {
		_ = s.DB.Write().ReleaseKycLink(context.WithoutCancel(ctx), sess.Link.ID)
	}
	if _, err := s.Customers.Update(ctx, t, customerID, sub.Update); err != nil {
		release()
		s.Documents.Discard(ctx, sub.File)
		return Result{}, err
	}
	doc := sub.Document
	doc.DocumentHolder = &customerID
	side := ""
	if doc.Side != nil {
		side = *doc.Side
	}
	existing, found, err := s.Documents.Find(ctx, t, customerID, *doc.DocumentType, side)
	switch {
	case err != nil:
		s.Documents.Discard(ctx, sub.File)
	case found:
		// The person sends their document again: it replaces the one on file.
		_, err = s.Documents.Replace(ctx, t, existing.ID, customers.ReplaceRequest{Country: doc.Country,
			IssuedOn: doc.IssuedOn, DocumentNumber: doc.DocumentNumber, IssuingAuthority: doc.IssuingAuthority}, sub.File)
	default:
		_, err = s.Documents.Upload(ctx, t, doc, sub.File)
	}
	if err != nil {
		release()
		return Result{}, err
	}
	v, err := s.Customers.Submit(ctx, t, customers.VerificationRequest{CustomerID: &customerID})
	if err != nil {
		release()
		return Result{}, err
	}
	if err := s.DB.Write().SetKycLinkVerification(ctx, sess.Link.ID, v.ID); err != nil {
		return Result{}, err
	}
	c, err := s.Customers.Get(ctx, t, customerID)
	if err != nil {
		return Result{}, err
	}
	return Result{Verification: v, Customer: c, RedirectURI: sess.Link.RedirectURI}, nil
}
