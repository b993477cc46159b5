package webhooks

import (
	"context"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// endpointOf gives a delivery its tenant's webhookEndpoint as configured
// now, "" when none is set. The configuration row comes from the store's
// settings cache (fresh within its TTL, and at once after a change through
// this node); platformconfig decodes its document again only when it
// differs from the one it decoded last for the tenant.
func endpointOf(ctx context.Context, db *store.DB, t store.Tenant) (string, error) {
	row, err := db.PlatformConfig(ctx, t)
	if err != nil {
		return "", err
	}
	ep, err := platformconfig.WebhookEndpoint(row)
	if err != nil || ep == nil {
		return "", err
	}
	return *ep, nil
}
