package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Issue 16 item 7: operator-chosen secrets (PAYMENTS_*_TOKEN) are stored as
// an HMAC under a sealed server key, not a bare SHA-256 that a copy of the
// database would let anyone test guesses against; a production secret must
// be strong; the README quickstart's sandbox credentials still work; a
// token stored the old way keeps working until the next start rewrites it.
func TestOperatorTokens_KeyedHashAndStrength(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		const quickstart = "demo-sandbox:demo-secret"
		if err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvSandbox, quickstart); err != nil {
			t.Fatal(err)
		}
		row, err := e.db.Read().TokenByClientID(ctx, "demo-sandbox")
		if err != nil {
			t.Fatal(err)
		}
		if !auth.IsKeyedHash(row.SecretHash) || strings.Contains(row.SecretHash, auth.HashSecret("demo-secret")) {
			t.Fatalf("stored %q: not a keyed hash", row.SecretHash)
		}
		expect(t, e.do("GET", "/config", nil, withCreds(quickstart)), http.StatusOK, "")
		expect(t, e.do("GET", "/config", nil, withCreds("demo-sandbox:demo-secreT")), http.StatusUnauthorized, "UNAUTHORIZED")

		for _, weak := range []string{"prod:demo-secret", "prod:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "prod:abababababababababababab"} {
			err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvProduction, weak)
			if err == nil || !strings.Contains(err.Error(), "too weak") {
				t.Errorf("%s: %v", weak, err)
			}
			expect(t, e.do("GET", "/config", nil, withCreds(weak)), http.StatusUnauthorized, "UNAUTHORIZED")
		}
		strong := "prod:" + strings.Repeat("0123456789abcdef", 2)
		if err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvProduction, strong); err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("GET", "/config", nil, withCreds(strong)), http.StatusOK, "")

		// A database from before: the bare SHA-256 still authenticates, and
		// the next start (EnsureToken again) stores the keyed hash.
		row.SecretHash = auth.HashSecret("demo-secret")
		if err := e.db.InTx(ctx, func(tx *store.Tx) error { return tx.ResetToken(ctx, row) }); err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("GET", "/config", nil, withCreds(quickstart)), http.StatusOK, "")
		if err := platforms.EnsureToken(ctx, e.db, e.platformID, store.EnvSandbox, quickstart); err != nil {
			t.Fatal(err)
		}
		if row, _ := e.db.Read().TokenByClientID(ctx, "demo-sandbox"); !auth.IsKeyedHash(row.SecretHash) {
			t.Fatalf("not rewritten: %q", row.SecretHash)
		}
		expect(t, e.do("GET", "/config", nil, withCreds(quickstart)), http.StatusOK, "")
	})
}
