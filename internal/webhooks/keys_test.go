package webhooks

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// One service key per installation, whoever asks first and however many ask
// at once.
func TestServiceKey_OnePerInstallation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var wg sync.WaitGroup
		pems := make([]string, 8)
		for i := range pems {
			wg.Go(func() {
				p, err := (&serviceKey{db: db}).publicPEM(ctx)
				if err != nil {
					t.Error(err)
				}
				pems[i] = string(p)
			})
		}
		wg.Wait()
		for _, p := range pems {
			if p != pems[0] || !strings.HasPrefix(p, "-----BEGIN PUBLIC KEY-----") {
				t.Fatalf("different keys:\n%s\n%s", p, pems[0])
			}
		}
	})
}

// During a rotation's overlap every delivery is signed with the old and the
// new secret, so a receiver holding either accepts it; after the overlap
// only the new secret signs.
func TestRotation_SignsWithBothSecretsDuringOverlap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		rc := newReceiver(t, nil)
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook"))
		svc := NewService(db, nil, ServiceOptions{Guard: NewGuard(db, AddressesAny)})
		before, err := svc.SigningKeys(ctx, tn)
		if err != nil || len(before.Secrets) != 1 || before.Secrets[0].ExpiresAt != nil {
			t.Fatalf("%+v %v", before, err)
		}
		after, err := svc.RotateSecret(ctx, tn, RotateRequest{OverlapSeconds: ptr(int64(3600))})
		if err != nil || len(after.Secrets) != 2 || after.Secrets[1].ID != before.Secrets[0].ID ||
			after.Secrets[0].ExpiresAt != nil || !after.Secrets[1].ExpiresAt.Equal(c.Now().Add(time.Hour)) {
			t.Fatalf("after rotation: %+v %v", after, err)
		}
		oldOnly := receiverWith(t, db, before.Secrets[0].Secret, c)
		newOnly := receiverWith(t, db, after.Secrets[0].Secret, c)

		if _, err := svc.SendTest(ctx, tn); err != nil {
			t.Fatal(err)
		}
		got := rc.all()[0]
		if n := len(strings.Fields(got.Header.Get("webhook-signature"))); n != 2 {
			t.Fatalf("%d signatures during the overlap", n)
		}
		for name, v := range map[string]signing.Verifier{"old": oldOnly, "new": newOnly} {
			if err := v.Verify(got.Header, got.Body); err != nil {
				t.Fatalf("a receiver with only the %s secret rejects the delivery: %v", name, err)
			}
		}

		c.Advance(time.Hour + time.Second)
		if _, err := svc.SendTest(ctx, tn); err != nil {
			t.Fatal(err)
		}
		got = rc.all()[1]
		if err := newOnly.Verify(got.Header, got.Body); err != nil {
			t.Fatal(err)
		}
		if err := oldOnly.Verify(got.Header, got.Body); !errors.Is(err, signing.ErrNoMatchingSignature) {
			t.Fatalf("the old secret still signs after the overlap: %v", err)
		}
		if keys, _ := svc.SigningKeys(ctx, tn); len(keys.Secrets) != 1 {
			t.Fatalf("%d secrets listed after the overlap", len(keys.Secrets))
		}
		// Overlap 0 retires the old secret at once; bounds are checked.
		if after, _ := svc.RotateSecret(ctx, tn, RotateRequest{OverlapSeconds: ptr(int64(0))}); len(after.Secrets) != 1 {
			t.Fatalf("overlap 0: %+v", after)
		}
		if _, err := svc.RotateSecret(ctx, tn, RotateRequest{OverlapSeconds: ptr(int64(8 * 24 * 3600))}); err == nil {
			t.Fatal("an overlap over 7 days is refused")
		}
	})
}

func receiverWith(t *testing.T, db *store.DB, secret string, c *clock) signing.Verifier {
	sec, err := signing.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	return signing.Verifier{Secrets: []signing.Secret{sec}, PublicKey: publicKey(t, db), Now: c.Now}
}

func ptr[T any](v T) *T { return &v }

// The sandbox test webhook reports the receiver's answer and records the
// TEST event with its attempt; failures are WEBHOOK_DELIVERY_ERROR.
func TestSendTest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock(db)
		// The timeout leaves the answering receiver room on a loaded machine.
		svc := NewService(db, nil, ServiceOptions{RequestTimeout: 2 * time.Second, Guard: NewGuard(db, AddressesAny)})
		none := newTenant(t, db, store.EnvSandbox, "")
		if _, err := svc.SendTest(ctx, none); code(err) != "WEBHOOK_ENDPOINT_NOT_SET" {
			t.Fatalf("no endpoint: %v", err)
		}

		var status atomic.Int32
		status.Store(http.StatusOK)
		release := make(chan struct{})
		defer close(release)
		rc := newReceiver(t, func(w http.ResponseWriter, r *http.Request) int {
			if status.Load() == 0 { // hang until the test ends
				<-release
				return http.StatusOK
			}
			return int(status.Load())
		})
		tn := newTenant(t, db, store.EnvSandbox, rc.URL("/hook?token=abc"))
		res, err := svc.SendTest(ctx, tn)
		if err != nil || res.URL != rc.URL("/hook?token=abc") || res.ResponseStatus != 200 || res.ResponseBody != `{"ok":true}` {
			t.Fatalf("%+v %v", res, err)
		}
		if err := verifier(t, db, tn, c).Verify(rc.all()[0].Header, rc.all()[0].Body); err != nil {
			t.Fatal(err)
		}
		list, _, err := svc.ListEvents(ctx, tn, store.EventFilter{Type: "TEST"}, "", 10)
		if err != nil || len(list) != 1 || list[0].Delivery.Status != store.DeliveryDelivered || list[0].ResourceID != tn.PlatformID {
			t.Fatalf("the test event is recorded: %+v %v", list, err)
		}

		status.Store(http.StatusInternalServerError)
		_, err = svc.SendTest(ctx, tn)
		e, _ := apierr.From(err)
		if code(err) != "WEBHOOK_DELIVERY_ERROR" || e.Status != 400 || e.Details["response_status"] != 500 || e.Details["response_body"] != `{"ok":false}` {
			t.Fatalf("500 from the receiver: %v %+v", err, e)
		}
		status.Store(0) // hangs past the timeout
		if _, err := svc.SendTest(ctx, tn); code(err) != "WEBHOOK_DELIVERY_ERROR" {
			t.Fatalf("timeout: %v", err)
		}
		setEndpoint(t, db, tn, "http://127.0.0.1:1/closed")
		_, err = svc.SendTest(ctx, tn)
		if e, _ := apierr.From(err); code(err) != "WEBHOOK_DELIVERY_ERROR" || e.Details["response_status"] != nil || e.Details["error"] == "" {
			t.Fatalf("unreachable: %v", err)
		}
		// Failed test events are final: no worker retries them.
		failed, _, _ := svc.ListEvents(ctx, tn, store.EventFilter{Type: "TEST"}, "", 10)
		for _, ev := range failed[1:] {
			if ev.Delivery.Status != store.DeliveryFailed {
				t.Fatalf("%+v", ev.Delivery)
			}
		}
	})
}

func code(err error) string {
	if e, ok := apierr.From(err); ok {
		return e.Code
	}
	return ""
}
