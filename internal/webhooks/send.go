package webhooks

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// ExcerptLimit caps the receiver's response body kept with an attempt.
const ExcerptLimit = 1024

// userAgent identifies deliveries in receivers' logs.
const userAgent = "paymentsd-webhooks/1"

// outcome is what one attempt found out. It is computed without holding any
// database transaction.
type outcome struct {
	At         time.Time // start of the attempt, on the store's clock
	URL        string    // the endpoint, without user info
	Status     int       // the receiver's HTTP status; 0 when there was no response
	Latency    time.Duration
	Excerpt    string // the start of the response body, at most ExcerptLimit bytes
	Err        string // why there was no 2xx, for people; never holds secrets
	RetryAfter time.Duration
	NoEndpoint bool // the tenant has no webhookEndpoint configured
	// PeerPublic: the connection that answered was to a public address
	// (peerPublic); GET /events/{id} shows Excerpt only when the address
	// it came from is allowed then.
	PeerPublic bool
}

func (o outcome) delivered() bool { return o.Status >= 200 && o.Status <= 299 }

// sender signs and sends one event to a tenant's endpoint.
type sender struct {
	db    *store.DB
	log   *slog.Logger
	key   *serviceKey
	guard *Guard
	// open dials any address, strict only those its policy permits; each
	// keeps its own connections (see newClient).
	open, strict *http.Client
}

// strictDial is the dial-time rule of the strict client; which setting made
// a delivery strict is said by checkURL, which runs first.
var strictDial = policy{publicOnly: true, why: " (private addresses are not allowed on this installation)"}

// newSender makes a sender whose clients keep idlePerHost connections to
// each receiver (see newClient).
func newSender(db *store.DB, log *slog.Logger, timeout time.Duration, guard *Guard, rootCAs *x509.CertPool, idlePerHost int) *sender {
	return &sender{
		db: db, log: log, key: &serviceKey{db: db}, guard: guard,
		open:   newClient(policy{}, timeout, rootCAs, idlePerHost),
		strict: newClient(strictDial, timeout, rootCAs, idlePerHost),
	}
}

// send delivers body (the stored envelope of eventID) to the tenant's
// webhook endpoint as configured now.
func (s *sender) send(ctx context.Context, t store.Tenant, eventID string, body []byte) outcome {
	o := outcome{At: s.db.Now().UTC()}
	endpoint, err := endpointOf(ctx, s.db, t)
	if err != nil {
		return s.internal(o, "read the platform configuration", err)
	}
	if endpoint == "" {
		o.NoEndpoint, o.Err = true, "no webhook endpoint is configured"
		return o
	}
	pol, err := s.guard.policy(ctx, t.Env)
	if err != nil {
		return s.internal(o, "read the address setting", err)
	}
	client := s.open
	if pol.publicOnly {
		client = s.strict
	}
	o.URL = redactURL(endpoint)
	u, err := pol.checkURL(ctx, endpoint)
	if err != nil {
		o.Err = err.Error()
		return o
	}
	req, err := s.signedRequest(ctx, t, u, eventID, o.At, body)
	if err != nil {
		return s.internal(o, "sign the delivery", err)
	}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { o.PeerPublic = peerPublic(info.Conn.RemoteAddr()) },
	}))
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		o.Latency, o.Err = time.Since(start), transportError(err)
		return o
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptLimit))
	o.Latency, o.Status, o.Excerpt = time.Since(start), resp.StatusCode, excerpt(raw)
	if !o.delivered() {
		o.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), o.At)
		o.Err = "the receiver answered " + resp.Status + "; only 2xx counts as delivered"
	}
	return o
}

// peerPublic reports whether a connection's remote address is a public
// unicast address (isPublic): false for loopback, private, link-local and
// anything that is not an IP address.
func peerPublic(addr net.Addr) bool {
	if addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && isPublic(ap.Addr().Unmap())
}

// signedRequest builds the POST with both signatures. webhook-id is the
// event id, the same on every attempt; webhook-timestamp is this attempt's.
func (s *sender) signedRequest(ctx context.Context, t store.Tenant, u *url.URL, eventID string, at time.Time, body []byte) (*http.Request, error) {
	stored, err := activeSecrets(ctx, s.db, t)
	if err != nil {
		return nil, err
	}
	secrets, err := parseSecrets(stored)
	if err != nil {
		return nil, err
	}
	hs, err := signing.Sign(eventID, at, body, secrets...)
	if err != nil {
		return nil, err
	}
	priv, err := s.key.get(ctx)
	if err != nil {
		return nil, err
	}
	svc, err := signing.SignBody(priv, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	hs.Apply(req.Header)
	req.Header.Set(signing.ServiceSignatureHeader, svc)
	return req, nil
}

// internal records a failure of ours (database, keys) without its details,
// which go to the log instead.
func (s *sender) internal(o outcome, what string, err error) outcome {
	s.log.Error("webhook delivery: could not "+what, "error", err.Error())
	o.Err = "internal error: could not " + what
	return o
}

// transportError describes a failed exchange without the URL, whose query
// string may carry the receiver's own credentials.
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "no response before the timeout"
		}
		err = ue.Err
	}
	return err.Error()
}

// redactURL drops user info (a password) from an endpoint before it is
// stored with an attempt or shown.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User = nil
	return u.String()
}

// excerpt keeps at most ExcerptLimit bytes of valid UTF-8, so the excerpt
// can travel in JSON; invalid bytes, such as a character cut by the limit,
// are dropped.
func excerpt(b []byte) string {
	if len(b) > ExcerptLimit {
		b = b[:ExcerptLimit]
	}
	return strings.ToValidUTF8(string(b), "")
}
