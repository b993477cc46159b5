package cards

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Issuer is the card issuer of record: it provisions the cards the service
// issues. Issuance is asynchronous: a new card is PROCESSING and the
// issuance runner (Service.RunIssuance) asks the issuer once the card's
// Delay has passed, again after a failure, until it answers; the due time
// is in the database, so a restart loses nothing.
type Issuer interface {
	// Ready is nil when the issuer takes cards in the environment, else
	// the error POST /cards answers.
	Ready(env string) error
	// Delay is how long after issuance the issuer is first asked.
	Delay() time.Duration
	// Provision asks the issuer for the card. An error is transient: the
	// card stays PROCESSING and is asked again later.
	Provision(ctx context.Context, req ProvisionRequest) (ProvisionResult, error)
	// SetStaticPassword hands a card's static 3-D Secure password to the
	// issuer, which keeps it; this service never stores it.
	SetStaticPassword(ctx context.Context, env, cardID, password string) error
}

// ProvisionRequest is what the issuer is told of a card (never its number:
// the issuer of a real program generates it; here the sandbox program's
// number is ours and the issuer learns only its last four digits).
type ProvisionRequest struct {
	CardID         string
	Env            string
	CustomerID     string
	PlatformCardID string
	Currency       string
	Last4          string
	Attempt        int
}

// ProvisionResult is the issuer's answer.
type ProvisionResult struct {
	Approved     bool
	IssuerRef    string
	ProcessorRef string
}

// Sandbox magic values: a platformCardId ending in one of these makes the
// sandbox issuer reject the card, or fail (as unreachable) on its first two
// attempts before provisioning it.
const (
	SandboxRejectSuffix      = "-issuer-reject"
	SandboxUnavailableSuffix = "-issuer-unavailable"
)

// ErrIssuerUnavailable is the sandbox issuer's transient failure.
var ErrIssuerUnavailable = errors.New("cards: issuer unavailable")

// SandboxIssuer provisions sandbox cards after Latency (default two
// seconds), rejecting and failing on the magic values above. It refuses
// production cards: a production deployment configures a real issuer.
type SandboxIssuer struct {
	Latency time.Duration
}

// Ready accepts sandbox cards only.
func (s SandboxIssuer) Ready(env string) error {
	if env != store.EnvSandbox {
		return ProductionIssuer{}.Ready(env)
	}
	return nil
}

// Delay is the sandbox issuer's latency.
func (s SandboxIssuer) Delay() time.Duration {
	if s.Latency <= 0 {
		return 2 * time.Second
	}
	return s.Latency
}

// Provision answers by the magic values of the platform card id.
func (s SandboxIssuer) Provision(_ context.Context, req ProvisionRequest) (ProvisionResult, error) {
	if req.Env != store.EnvSandbox {
		return ProvisionResult{}, errors.New("cards: the sandbox issuer takes sandbox cards only")
	}
	switch {
	case strings.HasSuffix(req.PlatformCardID, SandboxRejectSuffix):
		return ProvisionResult{Approved: false}, nil
	case strings.HasSuffix(req.PlatformCardID, SandboxUnavailableSuffix) && req.Attempt <= 2:
		return ProvisionResult{}, ErrIssuerUnavailable
	}
	ref := strings.TrimPrefix(req.CardID, "Card:")
	return ProvisionResult{Approved: true, IssuerRef: "sbx_issuer_" + ref[len(ref)-12:],
		ProcessorRef: "sbx_proc_" + ref[len(ref)-12:]}, nil
}

// SetStaticPassword accepts the password for a sandbox card the issuer
// provisioned; the sandbox issuer keeps nothing (it has no 3-D Secure
// challenge to answer).
func (s SandboxIssuer) SetStaticPassword(_ context.Context, env, cardID, password string) error {
	if env != store.EnvSandbox {
		return errors.New("cards: the sandbox issuer takes sandbox cards only")
	}
	return nil
}

// ProductionIssuer stands for a card issuing partner this deployment has
// not configured: it refuses every card, clearly.
type ProductionIssuer struct{}

// Ready refuses: no partner is configured.
func (ProductionIssuer) Ready(string) error {
	return apierr.New("NOT_IMPLEMENTED", "Card issuance is not enabled in this environment: no card issuing partner is configured")
}

// Delay is irrelevant: nothing is ever issued.
func (ProductionIssuer) Delay() time.Duration { return time.Minute }

// Provision refuses.
func (ProductionIssuer) Provision(context.Context, ProvisionRequest) (ProvisionResult, error) {
	return ProvisionResult{}, errors.New("cards: no card issuing partner is configured")
}

// SetStaticPassword refuses.
func (ProductionIssuer) SetStaticPassword(context.Context, string, string, string) error {
	return ProductionIssuer{}.Ready("")
}

// EnvIssuers issues sandbox cards with Sandbox and production cards with
// Production.
type EnvIssuers struct {
	Sandbox    Issuer
	Production Issuer
}

func (e EnvIssuers) pick(env string) Issuer {
	if env == store.EnvProduction {
		return e.Production
	}
	return e.Sandbox
}

// Ready asks the environment's issuer.
func (e EnvIssuers) Ready(env string) error { return e.pick(env).Ready(env) }

// Delay is the sandbox issuer's (the longer of the two would do as well).
func (e EnvIssuers) Delay() time.Duration { return e.Sandbox.Delay() }

// Provision asks the card's environment's issuer.
func (e EnvIssuers) Provision(ctx context.Context, req ProvisionRequest) (ProvisionResult, error) {
	return e.pick(req.Env).Provision(ctx, req)
}

// SetStaticPassword hands the password to the card's environment's issuer.
func (e EnvIssuers) SetStaticPassword(ctx context.Context, env, cardID, password string) error {
	return e.pick(env).SetStaticPassword(ctx, env, cardID, password)
}
