package webhooks

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// TestResult is the body of POST /sandbox/webhooks/test. The field names are
// those of the hosted service's API.
type TestResult struct {
	URL            string `json:"url"`
	ResponseStatus int    `json:"response_status"`
	ResponseBody   string `json:"response_body"` // at most ExcerptLimit bytes
}

// testData is the data of a TEST event: there is no resource behind it.
type testData struct {
	Message string `json:"message"`
}

// SendTest emits a TEST event and delivers it now, in the request, through
// the same signing, sending and recording as any delivery, and reports what
// the receiver answered. The event stays visible in the events API with its
// attempt. It is not retried: the caller learns the outcome at once.
func (s *Service) SendTest(ctx context.Context, t store.Tenant) (TestResult, error) {
	cfg, err := (&platformconfig.Service{DB: s.db}).Get(ctx, t)
	if err != nil {
		return TestResult{}, err
	}
	if cfg.WebhookEndpoint == nil || *cfg.WebhookEndpoint == "" {
		return TestResult{}, endpointNotSet()
	}
	// Emitted already leased to this request, so neither a worker's claim
	// nor the webhook runner's hand-off takes the event while this request
	// delivers it. If this node dies mid-way, the lease expires and a worker
	// delivers it instead.
	token := newLeaseToken()
	var claim store.Claim
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		env, err := events.EmitLeased(ctx, tx, t, events.Test, t.PlatformID, testData{Message: "Test webhook from paymentsd"},
			token, tx.Now().Add(s.timeout+30*time.Second))
		if err != nil {
			return err
		}
		claim.Event, err = tx.GetEvent(ctx, t, env.ID)
		claim.Delivery = store.Delivery{EventID: env.ID, Tenant: t, Attempts: 1, WindowStart: env.Timestamp, LeaseToken: token}
		return err
	})
	if err != nil {
		return TestResult{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, s.timeout)
	o := s.send.send(sctx, t, claim.EventID, claim.Event.Envelope)
	cancel()
	if err := recordOne(ctx, s.db, DefaultBackoff, finished{claim: claim, out: o, final: true}); err != nil {
		return TestResult{}, err
	}
	switch {
	case o.NoEndpoint:
		return TestResult{}, endpointNotSet()
	case !o.delivered():
		details := map[string]any{"url": o.URL, "error": o.Err}
		if o.Status != 0 {
			details["response_status"], details["response_body"] = o.Status, o.Excerpt
		}
		return TestResult{}, apierr.New("WEBHOOK_DELIVERY_ERROR",
			"The webhook endpoint did not accept the test event: "+o.Err).WithDetails(details)
	}
	return TestResult{URL: o.URL, ResponseStatus: o.Status, ResponseBody: o.Excerpt}, nil
}

func endpointNotSet() error {
	return apierr.New("WEBHOOK_ENDPOINT_NOT_SET", "No webhook endpoint is configured; set webhookEndpoint with PATCH /config")
}
