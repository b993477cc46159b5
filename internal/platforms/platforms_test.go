package platforms

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/tokens"
)

// login authenticates "clientId:secret" the way every request does.
func login(ctx context.Context, db *store.DB, creds string) (auth.Principal, error) {
	id, secret, _ := strings.Cut(creds, ":")
	return (&tokens.Service{DB: db}).Authenticate(ctx, id, secret)
}

func TestCreate_TenantsWithTransactTokensAndConfig(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c, err := Create(ctx, db, "  Acme  ", false)
		if err != nil {
			t.Fatal(err)
		}
		p, err := db.Read().GetPlatform(ctx, c.PlatformID)
		if err != nil || p.Name != "Acme" || p.IsDefault || p.Regulated {
			t.Fatalf("platform %+v, %v", p, err)
		}
		for env, creds := range map[string]string{store.EnvSandbox: c.SandboxToken, store.EnvProduction: c.ProductionToken} {
			pr, err := login(ctx, db, creds)
			if err != nil {
				t.Fatalf("%s token: %v", env, err)
			}
			if pr.Tenant != (store.Tenant{PlatformID: c.PlatformID, Env: env}) || !pr.Allows(auth.NeedMoney) {
				t.Fatalf("%s token authenticates as %+v", env, pr)
			}
			cfg, err := (&platformconfig.Service{DB: db}).Get(ctx, pr.Tenant)
			if err != nil || len(cfg.SupportedCurrencies) != 1 || cfg.SupportedCurrencies[0].CurrencyCode != "USD" ||
				cfg.WebhookEndpoint != nil {
				t.Fatalf("%s default config %+v, %v", env, cfg, err)
			}
		}
		if c.SandboxToken == c.ProductionToken {
			t.Fatal("each environment has its own token")
		}
	})
}

func TestCreate_RefusesBadNamesAndStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, name := range []string{"", "   ", strings.Repeat("n", 256)} {
			if _, err := Create(ctx, db, name, false); err == nil {
				t.Fatalf("name %q accepted", name)
			}
		}
		if ps, err := db.Read().ListPlatforms(ctx); err != nil || len(ps) != 0 {
			t.Fatalf("platforms after refusals: %v %v", ps, err)
		}
		if _, err := Create(ctx, db, strings.Repeat("n", 255), false); err != nil {
			t.Fatalf("255 characters are allowed: %v", err)
		}
		// Characters, not bytes: 255 two-byte characters are allowed too.
		if _, err := Create(ctx, db, strings.Repeat("é", 255), false); err != nil {
			t.Fatalf("255 non-ASCII characters are allowed: %v", err)
		}
		if _, err := Create(ctx, db, strings.Repeat("é", 256), false); err == nil {
			t.Fatal("256 characters accepted")
		}
	})
}

// Only one platform can be the default: a second default is ErrConflict and
// leaves no half-created platform behind.
func TestCreate_SingleDefault(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := Create(ctx, db, "One", true); err != nil {
			t.Fatal(err)
		}
		if _, err := Create(ctx, db, "Two", true); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second default: %v", err)
		}
		if ps, _ := db.Read().ListPlatforms(ctx); len(ps) != 1 {
			t.Fatalf("%d platforms", len(ps))
		}
	})
}

// Bootstrap creates the default platform once: later calls, and concurrent
// first calls from several nodes, find it instead of creating another.
func TestBootstrap_OnceEvenConcurrently(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 4
		ids := make([]string, n)
		created := make([]*Created, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				p, c, err := Bootstrap(ctx, db)
				if err != nil {
					t.Errorf("bootstrap: %v", err)
					return
				}
				ids[i], created[i] = p.ID, c
			})
		}
		wg.Wait()
		made := 0
		for i := range n {
			if ids[i] != ids[0] {
				t.Fatalf("bootstraps disagree: %v", ids)
			}
			if created[i] != nil {
				made++
				if created[i].PlatformID != ids[0] {
					t.Fatal("created reports another platform")
				}
			}
		}
		if made != 1 {
			t.Fatalf("%d bootstraps reported creating the platform, want 1", made)
		}
		p, again, err := Bootstrap(ctx, db)
		if err != nil || again != nil || p.ID != ids[0] || !p.IsDefault {
			t.Fatalf("later bootstrap: %+v %v %v", p, again, err)
		}
		if ps, _ := db.Read().ListPlatforms(ctx); len(ps) != 1 {
			t.Fatalf("%d platforms", len(ps))
		}
	})
}

func TestEnsureToken_CreatesResetsAndRefuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, _, err := Bootstrap(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if err := EnsureToken(ctx, db, p.ID, store.EnvSandbox, "dev-id:first-secret"); err != nil {
			t.Fatal(err)
		}
		pr, err := login(ctx, db, "dev-id:first-secret")
		if err != nil || pr.Tenant.Env != store.EnvSandbox || !pr.Allows(auth.NeedMoney) {
			t.Fatalf("configured token: %+v %v", pr, err)
		}
		// Deleted through the API, then supplied again with a new secret and
		// another environment: it comes back exactly as configured.
		svc := &tokens.Service{DB: db}
		if err := svc.Delete(ctx, pr, pr.TokenID); err != nil {
			t.Fatal(err)
		}
		if err := EnsureToken(ctx, db, p.ID, store.EnvProduction, "dev-id:second-secret-0123456789"); err != nil {
			t.Fatal(err)
		}
		if _, err := login(ctx, db, "dev-id:first-secret"); err == nil {
			t.Fatal("the old secret still works")
		}
		pr2, err := login(ctx, db, "dev-id:second-secret-0123456789")
		if err != nil || pr2.TokenID != pr.TokenID || pr2.Tenant.Env != store.EnvProduction {
			t.Fatalf("reset token: %+v %v", pr2, err)
		}
		other, err := Create(ctx, db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		if err := EnsureToken(ctx, db, other.PlatformID, store.EnvSandbox, "dev-id:hijack"); err == nil {
			t.Fatal("a client id of another platform was taken over")
		}
		if _, err := login(ctx, db, "dev-id:hijack"); err == nil {
			t.Fatal("the refused credentials authenticate")
		}
		// The token id's limit counts characters, not bytes: 128 two-byte
		// characters are fine, 129 are not; invalid UTF-8, a non-breaking
		// space or a control character is refused.
		if err := EnsureToken(ctx, db, p.ID, store.EnvSandbox, strings.Repeat("é", 128)+":secret"); err != nil {
			t.Fatalf("128 characters (256 bytes) refused: %v", err)
		}
		for _, bad := range []string{"", "no-colon", ":secret", "id:", "has space:s", strings.Repeat("i", 129) + ":s",
			strings.Repeat("é", 129) + ":s", "bad\xffid:s", "nb\u00a0sp:s", "bell\x07:s", "tab\tid:s"} {
			if err := EnsureToken(ctx, db, p.ID, store.EnvSandbox, bad); err == nil {
				t.Fatalf("credentials %q accepted", bad)
			}
		}
		if err := EnsureToken(ctx, db, p.ID, store.EnvSandbox, "id:secret:with:colons"); err != nil {
			t.Fatal(err)
		}
		if _, err := login(ctx, db, "id:secret:with:colons"); err != nil {
			t.Fatalf("a secret may contain colons: %v", err)
		}
	})
}

func TestSetRegulated_ShowsInConfig(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c, err := Create(ctx, db, "Bank", false)
		if err != nil {
			t.Fatal(err)
		}
		cfgs := &platformconfig.Service{DB: db}
		for _, want := range []bool{true, false} {
			if err := SetRegulated(ctx, db, c.PlatformID, want); err != nil {
				t.Fatal(err)
			}
			for _, env := range []string{store.EnvSandbox, store.EnvProduction} {
				cfg, err := cfgs.Get(ctx, store.Tenant{PlatformID: c.PlatformID, Env: env})
				if err != nil || cfg.IsRegulatedFinancialInstitution != want {
					t.Fatalf("%s regulated=%v, want %v (%v)", env, cfg.IsRegulatedFinancialInstitution, want, err)
				}
			}
		}
	})
}
