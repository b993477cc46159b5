package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// The permission model in one table: VIEW reads; MANAGE also changes data;
// TRANSACT also moves money (R-AUTH-05: VIEW alone never moves money).
func TestPrincipal_Allows(t *testing.T) {
	cases := []struct {
		perms             []string
		view, write, move bool
	}{
		{nil, false, false, false},
		{[]string{}, false, false, false},
		{[]string{"ADMIN"}, false, false, false}, // unknown names grant nothing
		{[]string{"view"}, false, false, false},  // names are case-sensitive
		{[]string{View}, true, false, false},
		{[]string{Manage}, true, true, false},
		{[]string{Transact}, true, true, true},
		{[]string{View, Manage}, true, true, false},
		{[]string{View, Transact}, true, true, true},
		{[]string{"ADMIN", Transact}, true, true, true},
	}
	for _, c := range cases {
		p := Principal{Permissions: c.perms}
		got := []bool{p.Allows(NeedView), p.Allows(NeedWrite), p.Allows(NeedMoney)}
		want := []bool{c.view, c.write, c.move}
		for i, n := range []string{"view", "write", "money"} {
			if got[i] != want[i] {
				t.Errorf("%v allows %s = %v, want %v", c.perms, n, got[i], want[i])
			}
		}
		if p.Allows(Need(99)) {
			t.Errorf("%v allows an unknown need", c.perms)
		}
	}
}

func TestAllPermissions(t *testing.T) {
	want := map[string]bool{View: true, Transact: true, Manage: true}
	if len(AllPermissions) != len(want) {
		t.Fatalf("AllPermissions = %v", AllPermissions)
	}
	for _, p := range AllPermissions {
		if !want[p] {
			t.Fatalf("unexpected permission %q", p)
		}
		delete(want, p)
	}
}

func TestPrincipal_Sandbox(t *testing.T) {
	if !(Principal{Tenant: store.Tenant{Env: store.EnvSandbox}}).Sandbox() {
		t.Fatal("a sandbox tenant is sandbox")
	}
	if (Principal{Tenant: store.Tenant{Env: store.EnvProduction}}).Sandbox() {
		t.Fatal("a production tenant is not sandbox")
	}
	if (Principal{}).Sandbox() {
		t.Fatal("no environment is not sandbox")
	}
}

func TestContext_RoundTrip(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("an unauthenticated context has no principal")
	}
	p := Principal{TokenID: "Token:x", ClientID: "c", Tenant: store.Tenant{PlatformID: "P", Env: store.EnvProduction},
		Permissions: []string{View}}
	got, ok := FromContext(WithPrincipal(context.Background(), p))
	if !ok || got.TokenID != p.TokenID || got.ClientID != "c" || got.Tenant != p.Tenant || len(got.Permissions) != 1 {
		t.Fatalf("got %+v, %v", got, ok)
	}
}

func TestHashSecret_IsSHA256Hex(t *testing.T) {
	sum := sha256.Sum256([]byte("s3cret"))
	if got := HashSecret("s3cret"); got != hex.EncodeToString(sum[:]) {
		t.Fatalf("HashSecret = %s", got)
	}
	if HashSecret("s3cret") == HashSecret("s3creT") {
		t.Fatal("different secrets, same hash")
	}
}

func TestSecretMatches(t *testing.T) {
	h := HashSecret("right")
	cases := []struct {
		secret, hash string
		want         bool
	}{
		{"right", h, true},
		{"wrong", h, false},
		{"", h, false},
		{"right", "", false},
		{"right", h[:63], false},  // a truncated hash never matches
		{"right", h + "0", false}, // nor an extended one
		{h, h, false},             // the hash is not the secret
		{"right", "RIGHT" + h[5:], false},
	}
	for _, c := range cases {
		if got := SecretMatches(c.secret, c.hash); got != c.want {
			t.Errorf("SecretMatches(%q, %q) = %v, want %v", c.secret, c.hash, got, c.want)
		}
	}
}

func TestNewCredentials_FormatAndUniqueness(t *testing.T) {
	idRE, secretRE := regexp.MustCompile(`^[0-9a-f]{32}$`), regexp.MustCompile(`^[0-9a-f]{64}$`)
	seen := map[string]bool{}
	for range 1000 {
		id, s := NewClientID(), NewSecret()
		if !idRE.MatchString(id) || !secretRE.MatchString(s) {
			t.Fatalf("client id %q, secret %q", id, s)
		}
		if seen[id] || seen[s] {
			t.Fatal("a generated credential repeated")
		}
		seen[id], seen[s] = true, true
	}
}
