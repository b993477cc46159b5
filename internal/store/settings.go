package store

import (
	"context"
	"sync"
	"time"
)

// settingsTTL is how long a node serves a tenant's settings (platform,
// configuration, webhook secrets, SCA settings) from memory. A change made through this
// node is seen at once (writes invalidate); one made on another node within
// this time. Every transfer read them several times: the quote its limits
// and fees, every webhook delivery the endpoint and the signing secrets.
const settingsTTL = time.Second

type settingKind uint8

const (
	settingPlatform settingKind = iota
	settingConfig
	settingSecrets
	settingVolumeLimit
	settingSca
)

// settingKey names one cached value; a platform's key has no Env.
type settingKey struct {
	kind   settingKind
	tenant Tenant
}

type settingEntry struct {
	value  any
	gen    uint64
	loaded time.Time
}

// settingsCache is a read-through cache with a generation per key. A writer
// bumps the generation when it writes and again after its commit, and a
// reader keeps what it loaded only if the generation did not move while it
// read; so a value read before a commit can never outlive it.
type settingsCache struct {
	mu      sync.Mutex
	gens    map[settingKey]uint64
	entries map[settingKey]settingEntry
}

func newSettingsCache() *settingsCache {
	return &settingsCache{gens: map[settingKey]uint64{}, entries: map[settingKey]settingEntry{}}
}

func (c *settingsCache) invalidate(k settingKey) {
	c.mu.Lock()
	c.gens[k]++
	delete(c.entries, k)
	c.mu.Unlock()
}

// get returns the cached value of k or loads it.
func get[T any](ctx context.Context, c *settingsCache, k settingKey, load func(context.Context) (T, error)) (T, error) {
	c.mu.Lock()
	e, ok := c.entries[k]
	gen := c.gens[k]
	c.mu.Unlock()
	if ok && e.gen == gen && time.Since(e.loaded) < settingsTTL {
		return e.value.(T), nil
	}
	v, err := load(ctx)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.gens[k] == gen {
		c.entries[k] = settingEntry{value: v, gen: gen, loaded: time.Now()}
	}
	c.mu.Unlock()
	return v, nil
}

// changed records that q wrote k; writers defer it, so it runs after their
// statement. The cache forgets k then, which is after the commit for a
// write outside a transaction, and, inside one, once more after the commit.
// (Run before the statement, a read between it and an autocommit would
// keep the old value.)
func (q Q) changed(k settingKey) {
	if q.settings == nil {
		return
	}
	q.settings.invalidate(k)
	if q.staleSettings != nil {
		q.staleSettings[k] = struct{}{}
	}
}

// forgetChanged is called after a commit with the keys its transaction wrote.
func (db *DB) forgetChanged(keys map[settingKey]struct{}) {
	for k := range keys {
		db.settings.invalidate(k)
	}
}

// Platform returns a platform, from memory when it was read recently.
func (db *DB) Platform(ctx context.Context, id string) (Platform, error) {
	return get(ctx, db.settings, settingKey{kind: settingPlatform, tenant: Tenant{PlatformID: id}},
		func(ctx context.Context) (Platform, error) { return db.Read().GetPlatform(ctx, id) })
}

// PlatformConfig returns a tenant's configuration, from memory when it was
// read recently. Callers must not modify the Document.
func (db *DB) PlatformConfig(ctx context.Context, t Tenant) (PlatformConfig, error) {
	return get(ctx, db.settings, settingKey{kind: settingConfig, tenant: t},
		func(ctx context.Context) (PlatformConfig, error) { return db.Read().GetPlatformConfig(ctx, t, false) })
}

// WebhookSecrets returns the tenant's secrets that sign at `at`, newest
// first, from memory when they were read recently.
func (db *DB) WebhookSecrets(ctx context.Context, t Tenant, at time.Time) ([]WebhookSecret, error) {
	// Cached: all of them (expired ones are purged, so they are few),
	// filtered here, so a secret whose overlap ends drops out on time.
	all, err := get(ctx, db.settings, settingKey{kind: settingSecrets, tenant: t},
		func(ctx context.Context) ([]WebhookSecret, error) {
			return db.Read().ActiveWebhookSecrets(ctx, t, time.Unix(0, 0))
		})
	if err != nil {
		return nil, err
	}
	out := make([]WebhookSecret, 0, len(all))
	for _, s := range all {
		if s.ExpiresAt == nil || s.ExpiresAt.After(at) {
			out = append(out, s)
		}
	}
	return out, nil
}
