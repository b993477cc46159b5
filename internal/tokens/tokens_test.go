package tokens

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// fixture is a token service over a fresh store with one platform.
type fixture struct {
	db      *store.DB
	svc     *Service
	sandbox store.Tenant
	prod    store.Tenant
}

func newFixture(t *testing.T, db *store.DB) fixture {
	t.Helper()
	c, err := platforms.Create(context.Background(), db, "Acme", false)
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db, svc: &Service{DB: db},
		sandbox: store.Tenant{PlatformID: c.PlatformID, Env: store.EnvSandbox},
		prod:    store.Tenant{PlatformID: c.PlatformID, Env: store.EnvProduction}}
}

func ptr[T any](v T) *T { return &v }

func (f fixture) create(t *testing.T, tn store.Tenant, req CreateRequest) Token {
	t.Helper()
	tok, err := f.svc.Create(context.Background(), as(tn), req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return tok
}

// wantAPIErr fails unless err is the client-safe error with status and code.
func wantAPIErr(t *testing.T, err error, status int, code string) *apierr.Error {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok || e.Status != status || e.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	return e
}

func fieldsOf(err error) map[string]string {
	out := map[string]string{}
	for _, fe := range apierr.FieldList(err) {
		out[fe.Field] = fe.Constraint
	}
	return out
}

func TestValidate_ListsEveryInvalidField(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		req  CreateRequest
		want map[string]string
	}{
		{"empty", CreateRequest{}, map[string]string{"name": apierr.Required, "permissions": apierr.Required}},
		{"blank", CreateRequest{Name: ptr(" \t "), Permissions: []string{}},
			map[string]string{"name": apierr.MinLength, "permissions": apierr.MinLength}},
		{"long name, bad and repeated permissions", CreateRequest{Name: ptr(strings.Repeat("é", MaxNameLength+1)),
			Permissions: []string{"VIEW", "view", "VIEW", "ADMIN"}},
			map[string]string{"name": apierr.MaxLength, "permissions[1]": apierr.Enum, "permissions[2]": apierr.UniqueItems,
				"permissions[3]": apierr.Enum}},
		{"expiry now", CreateRequest{Name: ptr("n"), Permissions: []string{"VIEW"}, ExpiresAt: ptr(now)},
			map[string]string{"expiresAt": apierr.Minimum}},
		{"expiry past", CreateRequest{Name: ptr("n"), Permissions: []string{"VIEW"}, ExpiresAt: ptr(now.Add(-time.Hour))},
			map[string]string{"expiresAt": apierr.Minimum}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.req.Validate(now)
			wantAPIErr(t, err, 400, apierr.CodeInvalidInput)
			got := fieldsOf(err)
			if len(got) != len(c.want) {
				t.Fatalf("fields %v, want %v", got, c.want)
			}
			for f, con := range c.want {
				if got[f] != con {
					t.Fatalf("fields %v, want %v", got, c.want)
				}
			}
		})
	}
	ok := []CreateRequest{
		{Name: ptr(strings.Repeat("é", MaxNameLength)), Permissions: []string{"VIEW"}}, // runes, not bytes
		{Name: ptr("all"), Permissions: []string{"VIEW", "TRANSACT", "MANAGE"}, ExpiresAt: ptr(now.Add(time.Microsecond))},
	}
	for _, req := range ok {
		if err := req.Validate(now); err != nil {
			t.Fatalf("%+v: %v", req, err)
		}
	}
}

func TestCreate_SecretShownOnceAndStoredHashed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		exp := db.Now().Add(48*time.Hour + 123*time.Nanosecond)
		tok := f.create(t, f.sandbox, CreateRequest{Name: ptr("  Reporting  "), Permissions: []string{auth.View}, ExpiresAt: &exp})
		if !strings.HasPrefix(tok.ID, "Token:") || tok.Name != "Reporting" || len(tok.ClientSecret) != 64 || len(tok.ClientID) != 32 {
			t.Fatalf("created %+v", tok)
		}
		if tok.ExpiresAt == nil || !tok.ExpiresAt.Equal(exp.UTC().Truncate(time.Microsecond)) {
			t.Fatalf("expiresAt %v, want %v to the microsecond", tok.ExpiresAt, exp)
		}
		row, err := db.Read().TokenByClientID(ctx, tok.ClientID)
		if err != nil {
			t.Fatal(err)
		}
		if row.SecretHash != auth.HashSecret(tok.ClientSecret) || strings.Contains(row.SecretHash, tok.ClientSecret) {
			t.Fatal("the store keeps the secret's hash, never the secret")
		}
		if row.PlatformID != f.sandbox.PlatformID || row.Env != store.EnvSandbox {
			t.Fatalf("stored in %s/%s", row.PlatformID, row.Env)
		}
		got, err := f.svc.Get(ctx, f.sandbox, tok.ID)
		if err != nil || got.ClientSecret != "" || got.ClientID != tok.ClientID || got.Name != "Reporting" ||
			!got.ExpiresAt.Equal(*tok.ExpiresAt) || !got.CreatedAt.Equal(tok.CreatedAt) {
			t.Fatalf("get %+v, %v", got, err)
		}
		other := f.create(t, f.sandbox, CreateRequest{Name: ptr("Reporting"), Permissions: []string{auth.View}})
		if other.ClientID == tok.ClientID || other.ClientSecret == tok.ClientSecret || other.ExpiresAt != nil {
			t.Fatal("each token gets its own credentials; no expiry unless asked")
		}
	})
}

func TestCreate_InvalidStoresNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		_, before, _ := f.svc.List(ctx, f.sandbox, store.TokenFilter{}, "", 100)
		_, err := f.svc.Create(ctx, as(f.sandbox), CreateRequest{Name: ptr("x"), Permissions: []string{"ROOT"}})
		wantAPIErr(t, err, 400, apierr.CodeInvalidInput)
		if _, after, _ := f.svc.List(ctx, f.sandbox, store.TokenFilter{}, "", 100); after != before {
			t.Fatalf("token count %d → %d after a refused create", before, after)
		}
	})
}

// R-TOKCFG-04 at the service: unknown, deleted and other tenants' token ids are
// all TOKEN_NOT_FOUND, and a refused delete leaves the token working.
func TestGetDelete_NotFound_R_TOKCFG_04(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		tok := f.create(t, f.sandbox, CreateRequest{Name: ptr("a"), Permissions: []string{auth.View}})
		other, err := platforms.Create(ctx, db, "Other", false)
		if err != nil {
			t.Fatal(err)
		}
		elsewhere := []store.Tenant{f.prod, {PlatformID: other.PlatformID, Env: store.EnvSandbox}}
		for _, tn := range elsewhere {
			_, err := f.svc.Get(ctx, tn, tok.ID)
			wantAPIErr(t, err, 404, apierr.CodeTokenNotFound)
			wantAPIErr(t, f.svc.Delete(ctx, as(tn), tok.ID), 404, apierr.CodeTokenNotFound)
		}
		if _, err := f.svc.Authenticate(ctx, tok.ClientID, tok.ClientSecret); err != nil {
			t.Fatalf("a delete refused in another tenant must not revoke the token: %v", err)
		}
		for _, id := range []string{"Token:0195a2f5-b3e7-7d02-8000-000000000001", "", "nope"} {
			_, err := f.svc.Get(ctx, f.sandbox, id)
			wantAPIErr(t, err, 404, apierr.CodeTokenNotFound)
			wantAPIErr(t, f.svc.Delete(ctx, as(f.sandbox), id), 404, apierr.CodeTokenNotFound)
		}
		if err := f.svc.Delete(ctx, as(f.sandbox), tok.ID); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.Get(ctx, f.sandbox, tok.ID)
		wantAPIErr(t, err, 404, apierr.CodeTokenNotFound)
		wantAPIErr(t, f.svc.Delete(ctx, as(f.sandbox), tok.ID), 404, apierr.CodeTokenNotFound)
	})
}

// Of concurrent deletes of one token exactly one succeeds.
func TestDelete_ConcurrentExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		tok := f.create(t, f.sandbox, CreateRequest{Name: ptr("a"), Permissions: []string{auth.View}})
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = f.svc.Delete(ctx, as(f.sandbox), tok.ID) })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			wantAPIErr(t, err, 404, apierr.CodeTokenNotFound)
		}
		if ok != 1 {
			t.Fatalf("%d deletes succeeded, want 1", ok)
		}
	})
}

func TestList_LiveTokensOfTheTenant(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		_, initial, err := f.svc.List(ctx, f.sandbox, store.TokenFilter{}, "", 100)
		if err != nil || initial != 1 {
			t.Fatalf("a new platform has one sandbox token, got %d (%v)", initial, err)
		}
		var ids []string
		for _, name := range []string{"a", "b", "a", "c"} {
			ids = append(ids, f.create(t, f.sandbox, CreateRequest{Name: ptr(name), Permissions: []string{auth.View}}).ID)
		}
		f.create(t, f.prod, CreateRequest{Name: ptr("a"), Permissions: []string{auth.View}})
		if err := f.svc.Delete(ctx, as(f.sandbox), ids[2]); err != nil {
			t.Fatal(err)
		}
		page, total, err := f.svc.List(ctx, f.sandbox, store.TokenFilter{Name: "a"}, "", 100)
		if err != nil || total != 1 || len(page) != 1 || page[0].ID != ids[0] || page[0].ClientSecret != "" {
			t.Fatalf("name filter: %+v total %d (%v)", page, total, err)
		}
		// Keyset paging: two pages of two cover the four live sandbox tokens once.
		p1, total, _ := f.svc.List(ctx, f.sandbox, store.TokenFilter{}, "", 2)
		p2, _, _ := f.svc.List(ctx, f.sandbox, store.TokenFilter{}, p1[len(p1)-1].ID, 2)
		seen := map[string]bool{}
		for _, tok := range append(p1, p2...) {
			if seen[tok.ID] || tok.ID == ids[2] {
				t.Fatalf("page repeats %s or lists the deleted token", tok.ID)
			}
			seen[tok.ID] = true
		}
		if total != 4 || len(seen) != 4 {
			t.Fatalf("total %d, listed %d, want 4", total, len(seen))
		}
		future := db.Now().Add(time.Hour)
		if _, n, _ := f.svc.List(ctx, f.sandbox, store.TokenFilter{CreatedAfter: &future}, "", 100); n != 0 {
			t.Fatalf("createdAfter in the future matched %d", n)
		}
	})
}

func TestAuthenticate_ValidToken(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		tok := f.create(t, f.prod, CreateRequest{Name: ptr("ops"), Permissions: []string{auth.View, auth.Manage}})
		p, err := f.svc.Authenticate(ctx, tok.ClientID, tok.ClientSecret)
		if err != nil {
			t.Fatal(err)
		}
		if p.TokenID != tok.ID || p.ClientID != tok.ClientID || p.Tenant != f.prod || p.Sandbox() ||
			!p.Allows(auth.NeedWrite) || p.Allows(auth.NeedMoney) {
			t.Fatalf("principal %+v", p)
		}
	})
}

// Unknown ids, wrong secrets, deleted and expired tokens all fail with the
// same 401: the caller cannot tell which part was wrong.
func TestAuthenticate_EveryFailureIsTheSame401(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		start := db.Now()
		clock := start
		db.SetClock(func() time.Time { return clock })
		live := f.create(t, f.sandbox, CreateRequest{Name: ptr("live"), Permissions: []string{auth.Transact}})
		deleted := f.create(t, f.sandbox, CreateRequest{Name: ptr("gone"), Permissions: []string{auth.Transact}})
		if err := f.svc.Delete(ctx, as(f.sandbox), deleted.ID); err != nil {
			t.Fatal(err)
		}
		exp := start.Add(time.Hour)
		expiring := f.create(t, f.sandbox, CreateRequest{Name: ptr("temp"), Permissions: []string{auth.View}, ExpiresAt: &exp})

		clock = exp.Add(-time.Microsecond)
		if _, err := f.svc.Authenticate(ctx, expiring.ClientID, expiring.ClientSecret); err != nil {
			t.Fatalf("a token works until its expiry: %v", err)
		}
		clock = *expiring.ExpiresAt
		cases := map[string][2]string{
			"empty id":           {"", live.ClientSecret},
			"empty secret":       {live.ClientID, ""},
			"unknown id":         {strings.Repeat("a", 32), live.ClientSecret},
			"wrong secret":       {live.ClientID, deleted.ClientSecret},
			"secret of other id": {deleted.ClientID, live.ClientSecret},
			"hash as secret":     {live.ClientID, auth.HashSecret(live.ClientSecret)},
			"deleted":            {deleted.ClientID, deleted.ClientSecret},
			"expired at expiry":  {expiring.ClientID, expiring.ClientSecret},
		}
		var first *apierr.Error
		for name, c := range cases {
			_, err := f.svc.Authenticate(ctx, c[0], c[1])
			e := wantAPIErr(t, err, 401, apierr.CodeUnauthorized)
			if first == nil {
				first = e
			} else if e.Reason != first.Reason || e.Details != nil {
				t.Fatalf("%s: %+v differs from %+v", name, e, first)
			}
		}
		clock = exp.Add(24 * time.Hour)
		if _, err := f.svc.Authenticate(ctx, expiring.ClientID, expiring.ClientSecret); err == nil {
			t.Fatal("an expired token stays expired")
		}
		if _, err := f.svc.Authenticate(ctx, live.ClientID, live.ClientSecret); err != nil {
			t.Fatalf("a token without expiry keeps working: %v", err)
		}
	})
}

// A deletion takes effect on the very next authentication, even while other
// requests authenticate concurrently.
func TestAuthenticate_DeleteTakesEffectAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		tok := f.create(t, f.sandbox, CreateRequest{Name: ptr("a"), Permissions: []string{auth.View}})
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, err := f.svc.Authenticate(ctx, tok.ClientID, tok.ClientSecret)
					if e, ok := apierr.From(err); err != nil && (!ok || e.Code != apierr.CodeUnauthorized) {
						t.Errorf("authenticate during delete: %v", err)
						return
					}
				}
			})
		}
		time.Sleep(20 * time.Millisecond)
		err := f.svc.Delete(ctx, as(f.sandbox), tok.ID)
		_, aerr := f.svc.Authenticate(ctx, tok.ClientID, tok.ClientSecret)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatal(err)
		}
		wantAPIErr(t, aerr, 401, apierr.CodeUnauthorized)
	})
}

// as is a TRANSACT caller of tenant tn: it may grant and revoke every
// permission, so these tests exercise the service's other rules.
func as(tn store.Tenant) auth.Principal {
	return auth.Principal{Tenant: tn, Permissions: []string{auth.Transact}}
}

// AuthenticateSeeing answers what Authenticate answers, and whether the
// token's own tenant (platform and environment) holds the Idempotency-Key:
// another environment's record of the same key is not the tenant's, and a
// refused credential reports nothing.
func TestAuthenticateSeeing_TheTenantsOwnKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f, ctx := newFixture(t, db), context.Background()
		tok := f.create(t, f.sandbox, CreateRequest{Name: ptr("k"), Permissions: []string{auth.Transact}})
		if err := db.Write().InsertIdempotencyRecord(ctx, f.prod, "k-prod", "h", 200, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if err := db.Write().InsertIdempotencyRecord(ctx, f.sandbox, "k-sandbox", "h", 200, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]bool{"k-sandbox": true, "k-prod": false, "k-none": false} {
			p, seen, err := f.svc.AuthenticateSeeing(ctx, tok.ClientID, tok.ClientSecret, store.ReadAhead{Key: key})
			if err != nil || seen.Key != want || seen.Accounts != nil || p.Tenant != f.sandbox || p.TokenID != tok.ID {
				t.Fatalf("%s: %+v seen %v %v; want the sandbox principal, seen %v", key, p, seen, err, want)
			}
		}
		if _, seen, err := f.svc.AuthenticateSeeing(ctx, tok.ClientID, "wrong", store.ReadAhead{Key: "k-sandbox"}); seen != (store.Seen{}) {
			t.Fatalf("a refused credential (%v) reported the key", err)
		} else {
			wantAPIErr(t, err, 401, apierr.CodeUnauthorized)
		}
	})
}
