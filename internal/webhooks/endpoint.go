package webhooks

import (
	"bytes"
	"context"
	"sync"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// endpoints gives a delivery its tenant's webhookEndpoint as configured
// now. The configuration row comes from the store's settings cache (fresh
// within its TTL, and at once after a change through this node); its JSON
// document is decoded again only when it differs from the one decoded last
// for the tenant. Decoding it, with the rest of platformconfig.Get, for
// every delivery was about 3% of the server's CPU under load
// (docs/benchmarks.md, "Eighth session").
type endpoints struct {
	mu   sync.Mutex
	last map[store.Tenant]decodedEndpoint
}

type decodedEndpoint struct {
	doc      []byte
	endpoint string
}

// get returns t's endpoint, "" when none is set.
func (e *endpoints) get(ctx context.Context, db *store.DB, t store.Tenant) (string, error) {
	row, err := db.PlatformConfig(ctx, t)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	d, ok := e.last[t]
	e.mu.Unlock()
	if ok && bytes.Equal(d.doc, row.Document) {
		return d.endpoint, nil
	}
	ep, err := platformconfig.WebhookEndpoint(row)
	if err != nil {
		return "", err
	}
	d = decodedEndpoint{doc: row.Document}
	if ep != nil {
		d.endpoint = *ep
	}
	e.mu.Lock()
	if e.last == nil {
		e.last = map[store.Tenant]decodedEndpoint{}
	}
	e.last[t] = d
	e.mu.Unlock()
	return d.endpoint, nil
}
