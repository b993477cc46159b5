package webhooks

import (
	"context"
	"net/http"
	"time"
)

// OutboundClient returns an HTTP client for other calls this installation
// makes to addresses its customers name (UMA counterparties), under the same
// rule as webhook endpoints: the dialer refuses the addresses the operator
// does not allow (PAYMENTS_WEBHOOK_ALLOW_PRIVATE), after DNS resolution.
func (g *Guard) OutboundClient(ctx context.Context, env string, timeout time.Duration) (*http.Client, error) {
	p, err := g.policy(ctx, env)
	if err != nil {
		return nil, err
	}
	return newClient(p, timeout, nil, 2), nil
}

// CheckOutbound refuses a URL env may not call (scheme, and literal or
// resolved addresses the operator does not allow). A host name that does not
// resolve is an error (unlike CheckEndpoint): there is nothing to call.
func (g *Guard) CheckOutbound(ctx context.Context, env, raw string) error {
	p, err := g.policy(ctx, env)
	if err != nil {
		return err
	}
	_, err = p.checkURL(ctx, raw)
	return err
}
