package agents

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Device codes are RFC 8628 user codes: CodeLength characters of
// codeAlphabet (consonants only, RFC 8628 section 6.1: no vowels, so no
// words, and no look-alike digits), shown as XXXX-XXXX. Input is
// normalized (case, dashes and spaces ignored). 20^8 codes (34.6 bits)
// living CodeTTL, with attempts rate-limited per caller, leave guessing a
// live code hopeless. They are stored as HMAC-SHA-256 under a server secret,
// so a copy of the database alone does not let one try the whole space
// offline.
const (
	codeAlphabet = "BCDFGHJKLMNPQRSTVWXZ"
	CodeLength   = 8
	CodeTTL      = time.Hour
	// TokenPrefix starts every agent access token.
	TokenPrefix = "agt_"
	codeKeyName = "agent-device-code-hmac"
)

// DeviceCode is the API resource.
type DeviceCode struct {
	Code      string    `json:"code"`
	AgentID   string    `json:"agentId"`
	ExpiresAt time.Time `json:"expiresAt"`
	Redeemed  bool      `json:"redeemed"`
}

// CodeStatus answers POST /agents/device-codes/status (R-AGENT-08).
type CodeStatus struct {
	Code      string    `json:"code"`
	AgentID   string    `json:"agentId"`
	Redeemed  bool      `json:"redeemed"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Redeemed answers POST /agents/device-codes/redeem: the access token,
// shown this once (R-AGENT-09).
type Redeemed struct {
	AgentID     string `json:"agentId"`
	AgentName   string `json:"agentName"`
	AccessToken string `json:"accessToken"`
	Policy      Policy `json:"policy"`
}

// CodeRequest is the body of the status and redeem endpoints.
type CodeRequest struct {
	Code *string `json:"code"`
}

// normalizeCode returns the canonical form of a typed code, or false.
func normalizeCode(s string) (string, bool) {
	if len(s) > 32 {
		return "", false
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		switch {
		case r == '-' || r == ' ':
		case strings.ContainsRune(codeAlphabet, r):
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	if b.Len() != CodeLength {
		return "", false
	}
	return b.String(), true
}

// Validate checks the request on its own (a malformed code is 400).
func (r CodeRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Code == nil:
		f.Add("code", apierr.Required, "is required: the device code, such as BDFH-JKLM")
	default:
		if _, ok := normalizeCode(*r.Code); !ok {
			f.Add("code", apierr.Pattern, "must be %d letters of %s, optionally grouped with a dash (BDFH-JKLM)", CodeLength, codeAlphabet)
		}
	}
	return f.Err()
}

func (s *Service) codeKey(ctx context.Context) ([]byte, error) {
	return s.DB.ServerSecret(ctx, codeKeyName)
}

func hashCode(key []byte, code string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(code))
	return hex.EncodeToString(m.Sum(nil))
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func randomCode() string {
	b := make([]byte, CodeLength)
	if _, err := rand.Read(b); err != nil {
		panic("agents: system random source failed: " + err.Error())
	}
	out := make([]byte, CodeLength)
	for i, v := range b {
		// 256 is not a multiple of 20: reject the biased top values.
		for v >= 240 {
			var one [1]byte
			if _, err := rand.Read(one[:]); err != nil {
				panic("agents: system random source failed: " + err.Error())
			}
			v = one[0]
		}
		out[i] = codeAlphabet[int(v)%len(codeAlphabet)]
	}
	return string(out)
}

func displayCode(c string) string { return c[:4] + "-" + c[4:] }

// newDeviceCode invalidates the agent's unredeemed codes and stores a new
// one (R-AGENT-07).
func newDeviceCode(ctx context.Context, tx *store.Tx, key []byte, a store.Agent) (DeviceCode, error) {
	now := tx.Now().UTC().Truncate(time.Microsecond)
	if err := tx.InvalidateAgentDeviceCodes(ctx, a.ID, now); err != nil {
		return DeviceCode{}, err
	}
	code := randomCode()
	row := store.AgentDeviceCode{CodeHash: hashCode(key, code), Tenant: a.Tenant, AgentID: a.ID,
		ExpiresAt: now.Add(CodeTTL), CreatedAt: now}
	if err := tx.InsertAgentDeviceCode(ctx, row); err != nil {
		return DeviceCode{}, err
	}
	return DeviceCode{Code: displayCode(code), AgentID: a.ID, ExpiresAt: row.ExpiresAt}, nil
}

// NewDeviceCode regenerates an agent's device code (R-AGENT-07).
func (s *Service) NewDeviceCode(ctx context.Context, t store.Tenant, agentID string) (DeviceCode, error) {
	if !id.Valid(id.Agent, agentID) {
		return DeviceCode{}, agentNotFound(agentID)
	}
	key, err := s.codeKey(ctx)
	if err != nil {
		return DeviceCode{}, err
	}
	var out DeviceCode
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetAgent(ctx, t, agentID, true)
		if errors.Is(err, store.ErrNotFound) {
			return agentNotFound(agentID)
		}
		if err != nil {
			return err
		}
		out, err = newDeviceCode(ctx, tx, key, a)
		return err
	})
	return out, err
}

// guess counts one code attempt by caller against the rate limit.
func (s *Service) guess(caller string) error {
	if s.Guesses == nil {
		return nil
	}
	if ok, wait := s.Guesses.Allow("device-code|" + caller); !ok {
		secs := int((wait + time.Second - 1) / time.Second)
		return &RateLimited{RetryAfter: secs}
	}
	return nil
}

// RateLimited is a refused code attempt; the caller sets Retry-After.
type RateLimited struct{ RetryAfter int }

func (e *RateLimited) Error() string { return "agents: too many device-code attempts" }

// Unwrap is the error the client sees: 429 RATE_LIMITED.
func (e *RateLimited) Unwrap() error {
	return apierr.Newf(apierr.CodeRateLimited, "Too many device-code attempts; retry after %d s", e.RetryAfter)
}

func codeNotFound() error {
	return apierr.NotFound("NOT_FOUND", "Device code (unknown, expired, replaced or already redeemed)")
}

// lookupCode finds a code by its keyed hash, comparing in constant time.
func (s *Service) lookupCode(ctx context.Context, q store.Q, raw string, lock bool) (store.AgentDeviceCode, string, error) {
	code, _ := normalizeCode(raw)
	key, err := s.codeKey(ctx)
	if err != nil {
		return store.AgentDeviceCode{}, "", err
	}
	h := hashCode(key, code)
	row, err := q.AgentDeviceCodeByHash(ctx, h, lock)
	if errors.Is(err, store.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare([]byte(row.CodeHash), []byte(h)) != 1) {
		return store.AgentDeviceCode{}, "", codeNotFound()
	}
	return row, code, err
}

// CodeStatus polls an installation (R-AGENT-08): the code must be one of
// the tenant's.
func (s *Service) CodeStatus(ctx context.Context, t store.Tenant, caller string, req CodeRequest) (CodeStatus, error) {
	if err := req.Validate(); err != nil {
		return CodeStatus{}, err
	}
	if err := s.guess(caller); err != nil {
		return CodeStatus{}, err
	}
	row, code, err := s.lookupCode(ctx, s.DB.Read(), *req.Code, false)
	if err != nil {
		return CodeStatus{}, err
	}
	if row.Tenant != t {
		return CodeStatus{}, codeNotFound()
	}
	return CodeStatus{Code: displayCode(code), AgentID: row.AgentID, Redeemed: row.RedeemedAt != nil,
		ExpiresAt: row.ExpiresAt}, nil
}

// Redeem exchanges a live code for the agent's access token, once
// (R-AGENT-09, R-AUTH-09). A new token replaces (revokes) any earlier one.
func (s *Service) Redeem(ctx context.Context, caller string, req CodeRequest) (Redeemed, error) {
	if err := req.Validate(); err != nil {
		return Redeemed{}, err
	}
	if err := s.guess(caller); err != nil {
		return Redeemed{}, err
	}
	token := TokenPrefix + randomHex(32)
	var out Redeemed
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, _, err := s.lookupCode(ctx, tx.Q, *req.Code, true)
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		ok, err := tx.RedeemAgentDeviceCode(ctx, row.CodeHash, now)
		if err != nil {
			return err
		}
		if !ok {
			return codeNotFound()
		}
		a, err := tx.GetAgent(ctx, row.Tenant, row.AgentID, true)
		if errors.Is(err, store.ErrNotFound) {
			return codeNotFound()
		}
		if err != nil {
			return err
		}
		a.TokenHash, a.ConnectedAt, a.UpdatedAt = hashToken(token), &now, now
		if err := tx.UpdateAgent(ctx, a); err != nil {
			return err
		}
		p, err := decodePolicy(a)
		out = Redeemed{AgentID: a.ID, AgentName: a.Name, AccessToken: token, Policy: p}
		return err
	})
	return out, err
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("agents: system random source failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// Caller is an authenticated agent: its record and policy as of this
// request.
type Caller struct {
	Agent  store.Agent
	Policy Policy
}

// Authenticate resolves a bearer token to its agent (R-AUTH-07). Unknown,
// malformed, replaced and deleted agents' tokens all fail alike with 401;
// a paused agent is 403 (R-AGENT-03: it can do nothing).
func (s *Service) Authenticate(ctx context.Context, token string) (Caller, error) {
	if !strings.HasPrefix(token, TokenPrefix) || len(token) != len(TokenPrefix)+64 {
		return Caller{}, apierr.Unauthorized()
	}
	h := hashToken(token)
	a, err := s.DB.Read().AgentByToken(ctx, h)
	if errors.Is(err, store.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare([]byte(a.TokenHash), []byte(h)) != 1) {
		return Caller{}, apierr.Unauthorized()
	}
	if err != nil {
		return Caller{}, err
	}
	if a.Paused {
		return Caller{}, apierr.Forbidden("This agent is paused; its platform must resume it before it can act")
	}
	p, err := decodePolicy(a)
	return Caller{Agent: a, Policy: p}, err
}

// Require refuses a caller whose policy lacks perm (R-AGENT-24).
func (c Caller) Require(perm string) error {
	if c.Policy.Grants(perm) {
		return nil
	}
	return apierr.Forbidden("The agent's policy does not grant " + perm)
}
