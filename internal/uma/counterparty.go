package uma

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/utils"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// maxResponse bounds what a counterparty may answer.
const maxResponse = 1 << 20

// phase names the exchange a counterparty failure belongs to: its codes
// differ (Part B): a lookup that cannot be made is 504
// LOOKUP_REQUEST_FAILED, a pay request 504 QUOTE_REQUEST_FAILED.
type phase struct {
	timeout string // 504 code
	parse   string // unparsable answer code
}

var (
	lookupPhase = phase{timeout: "LOOKUP_REQUEST_FAILED", parse: "PARSE_LNURLP_RESPONSE_ERROR"}
	payPhase    = phase{timeout: "QUOTE_REQUEST_FAILED", parse: "PARSE_PAYREQ_RESPONSE_ERROR"}
	keyPhase    = phase{timeout: "LOOKUP_REQUEST_FAILED", parse: "INVALID_PUBKEY_FORMAT"}
)

// schemeFor is how UMA reaches a domain: http for loopback and .local /
// .internal names (the SDK's rule), https otherwise.
func schemeFor(domain string) string {
	if utils.IsDomainLocalhost(domain) {
		return "http"
	}
	return "https"
}

// call makes one request to a counterparty institution under the address
// guard and returns the body of a 2xx answer; every failure is the API error
// of Part B that describes it.
func (s *Service) call(ctx context.Context, env string, ph phase, req *http.Request) ([]byte, error) {
	if err := s.CheckURL(ctx, env, req.URL.String()); err != nil {
		return nil, dialFailure(ph, req.URL.Host, err)
	}
	client, err := s.Client(ctx, env)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res, err := client.Do(req.WithContext(ctx))
	if err != nil {
		return nil, dialFailure(ph, req.URL.Host, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return nil, apierr.Newf(ph.timeout, "Reading the answer of %s failed: %v", req.URL.Host, err).WithDetails(retryable)
	}
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return body, nil
	case res.StatusCode >= 500:
		return nil, apierr.Newf("COUNTERPARTY_SERVER_ERROR", "%s answered %d", req.URL.Host, res.StatusCode).WithDetails(retryable)
	case res.StatusCode == http.StatusNotFound:
		return nil, apierr.Newf("UMA_NOT_FOUND", "%s has no such receiver (404)", req.URL.Host)
	}
	return nil, refused(req.URL.Host, res.StatusCode, body)
}

var retryable = map[string]any{"retryable": true}

// dialFailure: a domain that does not exist is 404 USER_NOT_FOUND (R-RATE-15);
// an address the operator does not allow is 400 INVALID_RECEIVER; anything
// else (refused, timed out) is the phase's 504, retryable.
func dialFailure(ph phase, host string, err error) error {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return apierr.Newf("USER_NOT_FOUND", "The domain %s does not exist", dns.Name)
	case errors.Is(err, webhooks.ErrUnsafeEndpoint):
		return apierr.Newf("INVALID_RECEIVER", "%s may not be called from this installation: %v", host, err)
	}
	return apierr.Newf(ph.timeout, "The request to %s failed: %v", host, err).WithDetails(retryable)
}

// refused maps a counterparty's 4xx: when it names one of our codes
// (another installation of this service) that code, otherwise
// SENDER_NOT_ACCEPTED: the receiving institution did not accept us.
func refused(host string, status int, body []byte) error {
	var e struct {
		Code   string `json:"code"`
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(body, &e)
	switch e.Code {
	case "UMA_NOT_FOUND", "USER_NOT_FOUND", "SENDER_NOT_ACCEPTED", "INVALID_CURRENCY", "AMOUNT_OUT_OF_RANGE", "MISSING_REQUIRED_UMA_PARAMETERS":
		return apierr.Newf(e.Code, "%s: %s", host, e.Reason)
	}
	return apierr.Newf("SENDER_NOT_ACCEPTED", "%s refused the request (%d): %s", host, status, truncate(string(body), 200))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// fetchPubKeys fetches and checks a counterparty's public keys: both
// chains must verify (CERT_CHAIN_INVALID, CERT_CHAIN_EXPIRED) and both keys
// parse (INVALID_PUBKEY_FORMAT).
func (s *Service) fetchPubKeys(ctx context.Context, env, domain string) (*protocol.PubKeyResponse, error) {
	if domain == SandboxDomain && env == store.EnvSandbox {
		if err := s.sandbox.init(); err != nil {
			return nil, err
		}
		return s.sandbox.pk, nil
	}
	req, err := http.NewRequest(http.MethodGet, schemeFor(domain)+"://"+domain+"/.well-known/lnurlpubkey", nil)
	if err != nil {
		return nil, apierr.Newf("INVALID_UMA_ADDRESS", "Not a domain: %q", domain)
	}
	body, err := s.call(ctx, env, keyPhase, req)
	if err != nil {
		return nil, err
	}
	var pk protocol.PubKeyResponse
	if err := json.Unmarshal(body, &pk); err != nil {
		return nil, apierr.Newf("INVALID_PUBKEY_FORMAT", "The public keys of %s do not parse: %v", domain, err)
	}
	if pk.SigningCertChain == nil || pk.EncryptionCertChain == nil {
		return nil, apierr.Newf("CERT_CHAIN_INVALID", "%s publishes no certificate chains", domain)
	}
	for _, chain := range []string{*pk.SigningCertChain, *pk.EncryptionCertChain} {
		if err := VerifyChain(chain, s.DB.Now()); errors.Is(err, ErrChainExpired) {
			return nil, apierr.Newf("CERT_CHAIN_EXPIRED", "A certificate of %s has expired: %v", domain, err)
		} else if err != nil {
			return nil, apierr.Newf("CERT_CHAIN_INVALID", "The certificate chain of %s does not verify: %v", domain, err)
		}
	}
	if _, err := pk.SigningPubKey(); err != nil {
		return nil, apierr.Newf("INVALID_PUBKEY_FORMAT", "The signing key of %s is not a secp256k1 key: %v", domain, err)
	}
	if _, err := pk.EncryptionPubKey(); err != nil {
		return nil, apierr.Newf("INVALID_PUBKEY_FORMAT", "The encryption key of %s is not a secp256k1 key: %v", domain, err)
	}
	return &pk, nil
}
