package sca

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
)

func sp(s string) *string { return &s }

// Who needs SCA: the region, else the address's country, else the
// nationality, in the EEA, the UK or the platform's additional regions.
func TestRequiredFor(t *testing.T) {
	de, us := sp("DE"), sp("US")
	cases := []struct {
		name string
		p    customers.Profile
		s    Settings
		want bool
	}{
		{"EEA address", customers.Profile{Address: &customers.Address{Country: de}, Nationality: us}, Settings{}, true},
		{"region wins over address", customers.Profile{Region: us, Address: &customers.Address{Country: de}}, Settings{}, false},
		{"nationality when no address", customers.Profile{Nationality: sp("FR")}, Settings{}, true},
		{"UK", customers.Profile{Region: sp("GB")}, Settings{}, true},
		{"EEA outside the EU", customers.Profile{Region: sp("NO")}, Settings{}, true},
		{"Switzerland is not EEA", customers.Profile{Region: sp("CH")}, Settings{}, false},
		{"platform region", customers.Profile{Region: sp("BR")}, Settings{AdditionalRegions: []string{"BR"}}, true},
		{"nothing known", customers.Profile{}, Settings{AdditionalRegions: []string{""}}, false},
	}
	for _, c := range cases {
		if got := RequiredFor(c.p, c.s); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The lock escalation: nothing before the fifth failure, then 15 minutes,
// 30 minutes, 1 hour, 24 hours, then suspension.
func TestLockFor(t *testing.T) {
	want := map[int]time.Duration{5: 15 * time.Minute, 6: 30 * time.Minute, 7: time.Hour, 8: 24 * time.Hour, 9: 0, 12: 0}
	for n := 0; n < 5; n++ {
		if _, locks := lockFor(n); locks {
			t.Errorf("%d failures lock", n)
		}
	}
	for n, d := range want {
		got, locks := lockFor(n)
		if !locks || got != d {
			t.Errorf("%d failures: %v %v, want %v", n, got, locks, d)
		}
	}
	f := &factor{}
	now := time.Unix(1000, 0)
	for i := 1; i < LockAfter; i++ {
		if err := fail(f, now); err != nil {
			t.Fatalf("failure %d locked: %v", i, err)
		}
	}
	err := fail(f, now)
	if e, ok := apierr.From(err); !ok || e.Code != "ACCOUNT_LOCKED" || f.LockedUntil == nil || !f.LockedUntil.Equal(now.Add(15*time.Minute)) {
		t.Fatalf("fifth failure: %v %v", err, f.LockedUntil)
	}
	if checkLocks(&state{}, f, now.Add(14*time.Minute)) == nil || checkLocks(&state{}, f, now.Add(15*time.Minute)) != nil {
		t.Fatal("the lock does not last exactly 15 minutes")
	}
	succeed(f)
	if f.FailedAttempts != 0 || f.LockedUntil != nil {
		t.Fatal("success does not clear the count")
	}
}

// The reset's transition table, every row walked; everything else refused;
// a reset past its window reads EXPIRED unless it ended.
func TestResetMoves(t *testing.T) {
	now := time.Unix(1000, 0)
	statuses := []string{ResetInitiated, ResetPendingReview, ResetLivenessPassed, ResetCompleted, ResetRejected, ResetExpired}
	allowed := map[[2]string]bool{}
	for _, m := range ResetMoves {
		allowed[m] = true
		r := reset{ID: "r", Status: m[0], ExpiresAt: now.Add(time.Hour)}
		if m[1] == ResetExpired {
			if got := (reset{Status: m[0], ExpiresAt: now}).current(now); got != ResetExpired {
				t.Errorf("%s past its window reads %s", m[0], got)
			}
			continue
		}
		if err := stepReset(&r, m[1], now); err != nil || r.Status != m[1] {
			t.Errorf("%s → %s: %v", m[0], m[1], err)
		}
	}
	for _, from := range statuses {
		for _, to := range statuses {
			if from == to || allowed[[2]string{from, to}] {
				continue
			}
			r := reset{ID: "r", Status: from, ExpiresAt: now.Add(time.Hour)}
			if err := stepReset(&r, to, now); err == nil {
				t.Errorf("%s → %s allowed", from, to)
			}
		}
	}
	for _, end := range []string{ResetCompleted, ResetRejected} {
		if got := (reset{Status: end, ExpiresAt: now}).current(now.Add(time.Hour)); got != end {
			t.Errorf("terminal %s became %s", end, got)
		}
	}
}

// RFC 6238 (appendix B, SHA-1 secret "12345678901234567890"): at T=59 the
// 8-digit code is 94287082, so the 6-digit one is 287082. A code is
// accepted once (replay), one step of drift either way, no further.
func TestCheckTOTP(t *testing.T) {
	const secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
	at := time.Unix(59, 0)
	ok, step := checkTOTP(secret, "287082", at, 0)
	if !ok || step != 1 {
		t.Fatalf("RFC 6238 vector refused: %v %d", ok, step)
	}
	if ok, _ := checkTOTP(secret, "287082", at, step); ok {
		t.Fatal("a used code was accepted again")
	}
	if ok, _ := checkTOTP(secret, "287082", at.Add(30*time.Second), 0); !ok {
		t.Fatal("one step of drift refused")
	}
	if ok, _ := checkTOTP(secret, "287082", at.Add(90*time.Second), 0); ok {
		t.Fatal("three steps of drift accepted")
	}
	if ok, _ := checkTOTP(secret, "28708", at, 0); ok {
		t.Fatal("a short code accepted")
	}
}

// A payout challenge's binding changes with every element it links.
func TestBindingLinksPayeeAndAmount(t *testing.T) {
	p := Payout{CustomerID: "c", QuoteID: "q", Payee: "ACCOUNT:a", SendingAmount: 100, SendingCurrency: "EUR",
		ReceivingAmount: 100, ReceivingCurrency: "EUR", Steps: 1}
	base := binding(p, PurposePayout, 1)
	for name, change := range map[string]func(*Payout){
		"quote": func(p *Payout) { p.QuoteID = "q2" }, "customer": func(p *Payout) { p.CustomerID = "c2" },
		"payee": func(p *Payout) { p.Payee = "ACCOUNT:b" }, "amount": func(p *Payout) { p.SendingAmount = 101 },
		"currency": func(p *Payout) { p.SendingCurrency = "USD" }, "received": func(p *Payout) { p.ReceivingAmount = 99 },
	} {
		q := p
		change(&q)
		if binding(q, PurposePayout, 1) == base {
			t.Errorf("binding ignores the %s", name)
		}
	}
	if binding(p, PurposeCurrencyConversion, 1) == base || binding(p, PurposePayout, 2) == base {
		t.Error("binding ignores the step")
	}
}

func TestSettingsPatchValidate(t *testing.T) {
	for body, bad := range map[string]string{
		`{"additionalRegions":["BR","de"]}`:                         "additionalRegions[1]",
		`{"lowValueExemption":{"currency":"XXX","maxAmount":1}}`:    "lowValueExemption.currency",
		`{"lowValueExemption":{"currency":"EUR","maxAmount":0}}`:    "lowValueExemption.maxAmount",
		`{"lowValueExemption":"cheap"}`:                             "lowValueExemption",
		`{"lowValueExemption":{"currency":"EUR","maxAmount":3000}}`: "",
		`{"lowValueExemption":null,"additionalRegions":[]}`:         "",
	} {
		var p SettingsPatch
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		err := p.Validate()
		if bad == "" {
			if err != nil {
				t.Errorf("%s: %v", body, err)
			}
			continue
		}
		found := false
		for _, f := range apierr.FieldList(err) {
			found = found || f.Field == bad
		}
		if !found {
			t.Errorf("%s: no error on %s: %v", body, bad, err)
		}
	}
}

// FuzzSettingsPatch: any body either fails validation or yields settings
// that apply without error.
func FuzzSettingsPatch(f *testing.F) {
	f.Add([]byte(`{"additionalRegions":["BR"],"lowValueExemption":{"currency":"EUR","maxAmount":3000}}`))
	f.Add([]byte(`{"lowValueExemption":null}`))
	f.Add([]byte(`{"lowValueExemption":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p SettingsPatch
		if json.Unmarshal(body, &p) != nil || p.Validate() != nil {
			return
		}
		if len(p.LowValueExemption) > 0 && string(p.LowValueExemption) != "null" {
			var lv LowValue
			if err := json.Unmarshal(p.LowValueExemption, &lv); err != nil || lv.MaxAmount <= 0 {
				t.Fatalf("valid patch with unusable lowValueExemption %s: %v", p.LowValueExemption, err)
			}
		}
	})
}

// FuzzProofValidate: the authorization body's checks never panic and a
// proof with neither a code nor a passkey assertion and its origin is
// always refused.
func FuzzProofValidate(f *testing.F) {
	f.Add([]byte(`{"code":"123456","factor":"TOTP"}`))
	f.Add([]byte(`{"passkeyAssertion":{},"origin":"https://x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var p Proof
		if json.Unmarshal(body, &p) != nil {
			return
		}
		hasCode := p.Code != nil && *p.Code != ""
		hasAssertion := len(p.PasskeyAssertion) > 0 && string(p.PasskeyAssertion) != "null" && p.Origin != nil && *p.Origin != ""
		if err := p.Validate(); err == nil && !hasCode && !hasAssertion {
			t.Fatalf("proof without a code or an assertion accepted: %s", body)
		}
	})
}
