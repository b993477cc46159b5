package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/rails"
)

// R-ERR-21: the daily volume counts money that leaves. A payout that fails
// or is cancelled before it leaves gives its volume back (the source got
// everything back and nothing was sent); one returned after it settled did
// leave, and keeps counting, as the spec's daily card limits keep counting
// refunds and reversals. The freed volume can be used again the same day.
func TestQuotes_DailyVolumeReleasedByFailedAndCancelledPayouts_R_ERR_21(t *testing.T) {
	railsFactorZero(t)
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the volume counts per UTC day
		ctx := context.Background()
		a, _ := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 1_000_000)
		ext := e.eaCreate(t, "/customers/external-accounts", eaUSD(a, "123456789"))["id"].(string)
		if err := e.srv.quoteService().SetDailyVolumeLimit(ctx, e.acTenant(), 60_000); err != nil {
			t.Fatal(err)
		}
		volume := func() int64 {
			t.Helper()
			v, err := e.db.Read().DailyVolume(ctx, e.acTenant(), e.db.Now())
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		pay := func(rail string, amount int64) (txID string, sent int64) {
			t.Helper()
			q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "ACCOUNT", "accountId": src},
				"destination":        cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": rail},
				"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "immediatelyExecute": true})
			return q["transactionId"].(string), int64(q["totalSendingAmount"].(float64))
		}
		status := func(txID string) string {
			return e.do("GET", "/transactions/"+txID, nil).JSON(t)["status"].(string)
		}

		// Fails before it leaves (amount ending 901): released.
		txID, sent := pay("RTP", 10_901)
		if v := volume(); v != sent {
			t.Fatalf("volume %d after executing %d", v, sent)
		}
		e.railsDrain(t)
		if s, v := status(txID), volume(); s != "FAILED" || v != 0 {
			t.Fatalf("failed payout: status %s, volume %d; want FAILED, 0", s, v)
		}
		// Settles, then is returned (ACH, ending 906): still counted.
		txID, returned := pay("ACH", 20_906)
		e.railsDrain(t)
		if s, v := status(txID), volume(); s != "FAILED" || v != returned {
			t.Fatalf("returned payout: status %s, volume %d; want FAILED, %d", s, v, returned)
		}
		// Cancelled while in flight: released.
		rails.SetClockFactor(1)
		txID, sent = pay("ACH", 30_000)
		if v := volume(); v != returned+sent {
			t.Fatalf("volume %d, want %d", v, returned+sent)
		}
		expect(t, e.do("POST", "/transactions/"+txID+"/cancel", nil), http.StatusOK, "")
		if v := volume(); v != returned {
			t.Fatalf("volume %d after the cancel, want %d", v, returned)
		}
		rails.SetClockFactor(0)
		// What was released fits again; past the limit does not.
		pay("RTP", 60_000-returned)
		expect(t, e.do("POST", "/quotes", qtBody(src, ext, "SENDING", 100, "immediatelyExecute", true)),
			http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
		e.acAudit(t)
	})
}

// A tenant's daily volume limit is stored, not process memory: a server
// started later over the same database enforces it, and a tenant without
// one gets the operator's default (Options.DailyVolumeLimit, the
// --daily-volume-limit flag).
func TestQuotes_DailyVolumeLimitPersistsAndDefaults_R_ERR_21(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.midDayClock(t) // the volume counts per UTC day
		ctx := context.Background()
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 100_000)
		if err := e.db.Write().SetDailyVolumeLimit(ctx, e.acTenant(), 3_000); err != nil {
			t.Fatal(err)
		}
		restarted, err := New(ctx, e.db, nil, Options{RateLimit: -1})
		if err != nil {
			t.Fatal(err)
		}
		e.srv = restarted
		expect(t, e.do("POST", "/quotes", qtBody(src, dst, "SENDING", 3_001)), http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
		e.qtQuote(t, qtBody(src, dst, "SENDING", 3_000, "immediatelyExecute", true))

		// Removing the tenant's own limit restores the operator's default.
		if err := e.db.Write().SetDailyVolumeLimit(ctx, e.acTenant(), 0); err != nil {
			t.Fatal(err)
		}
		withDefault, err := New(ctx, e.db, nil, Options{RateLimit: -1, DailyVolumeLimit: 5_000})
		if err != nil {
			t.Fatal(err)
		}
		e.srv = withDefault
		expect(t, e.do("POST", "/quotes", qtBody(src, dst, "SENDING", 2_001)), http.StatusTooManyRequests, "DAILY_VOLUME_LIMIT_EXCEEDED")
		e.qtQuote(t, qtBody(src, dst, "SENDING", 2_000, "immediatelyExecute", true))
		if v, _ := e.db.Read().DailyVolume(ctx, e.acTenant(), e.db.Now()); v != 5_000 {
			t.Fatalf("volume %d, want 5000", v)
		}
	})
}
