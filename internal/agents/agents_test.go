package agents

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/jsonx"
)

// The action state machine, row by row (Part A "Agent action"), and
// nothing else: every other (status, event) pair is refused.
func TestTransitions_EveryRow(t *testing.T) {
	statuses := []string{"", StatusPendingApproval, StatusApproved, StatusRejected, StatusFailed}
	events := []string{evSubmitAuto, evSubmitApproval, evSubmitMoved, evApprove, evApproveFailed, evReject, evExpire}
	want := map[[2]string]string{}
	for _, tr := range transitions {
		want[[2]string{tr.From, tr.Event}] = tr.To
		if got, err := next(tr.From, tr.Event); err != nil || got != tr.To {
			t.Errorf("%q --%s--> %q, err %v; want %q", tr.From, tr.Event, got, err, tr.To)
		}
	}
	for _, from := range statuses {
		for _, ev := range events {
			if _, ok := want[[2]string{from, ev}]; ok {
				continue
			}
			if got, err := next(from, ev); err == nil {
				t.Errorf("%q --%s--> %q allowed; only PENDING_APPROVAL can be decided", from, ev, got)
			}
		}
	}
	// R-AGENT-20: the terminal statuses have no way out.
	for _, tr := range transitions {
		if tr.From == StatusApproved || tr.From == StatusRejected || tr.From == StatusFailed {
			t.Errorf("a decided action moves: %v", tr)
		}
	}
}

func TestDeviceCodes_ShapeAndNormalization(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		c := randomCode()
		if len(c) != CodeLength || strings.Trim(c, codeAlphabet) != "" {
			t.Fatalf("code %q outside the alphabet", c)
		}
		seen[c] = true
		shown := displayCode(c)
		for _, typed := range []string{shown, strings.ToLower(shown), c, " " + strings.ToLower(c[:4]) + " " + c[4:]} {
			if n, ok := normalizeCode(typed); !ok || n != c {
				t.Errorf("normalizeCode(%q) = %q, %v", typed, n, ok)
			}
		}
	}
	if len(seen) < 195 {
		t.Fatalf("only %d distinct codes in 200", len(seen))
	}
	for _, bad := range []string{"", "BCDF-GHJ", "BCDFGHJKL", "ABCD-EFGH", "BCDF_GHJK", "BCDF-GHJ0", "ВCDF-GHJK", strings.Repeat("B", 33)} {
		if n, ok := normalizeCode(bad); ok {
			t.Errorf("normalizeCode(%q) accepted as %q", bad, n)
		}
	}
}

func TestPolicy_ApplyIsPartialAndKeepsTheCurrency(t *testing.T) {
	var in PolicyIn
	if err := jsonx.Decode([]byte(`{"permissions":["CREATE_QUOTES"],"defaultExecutionMode":"AUTO",
		"spendingLimits":{"currency":"USD","perTransactionLimit":100,"dailyLimit":1000},
		"approvalThresholds":{"currency":"USD","amount":50}}`), &in); err != nil {
		t.Fatal(err)
	}
	if err := in.Validate("", true); err != nil {
		t.Fatal(err)
	}
	var p Policy
	if err := in.apply(&p, true); err != nil {
		t.Fatal(err)
	}
	var patch PolicyIn
	if err := jsonx.Decode([]byte(`{"spendingLimits":{"dailyLimit":null,"monthlyLimit":9}}`), &patch); err != nil {
		t.Fatal(err)
	}
	if err := patch.apply(&p, false); err != nil {
		t.Fatal(err)
	}
	if p.SpendingLimits.DailyLimit != nil || *p.SpendingLimits.MonthlyLimit != 9 || p.SpendingLimits.PerTransactionLimit != 100 ||
		p.DefaultExecutionMode != ModeAuto || *p.ApprovalThresholds.Amount != 50 || !p.Grants(PermCreateQuotes) {
		t.Fatalf("policy after patch: %+v", p)
	}
	var cur PolicyIn
	_ = jsonx.Decode([]byte(`{"spendingLimits":{"currency":"EUR"}}`), &cur)
	if err := cur.apply(&p, false); err == nil || p.SpendingLimits.Currency != "USD" {
		t.Fatalf("currency change: %v, currency %s", err, p.SpendingLimits.Currency)
	}
}

// FuzzNormalizeCode: any typed input either normalizes to a code of the
// alphabet or is refused; never a panic.
func FuzzNormalizeCode(f *testing.F) {
	for _, s := range []string{"BCDF-GHJK", "bcdf ghjk", "", "ABCD-EFGH", "ВCDF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := normalizeCode(s)
		if ok && (len(n) != CodeLength || strings.Trim(n, codeAlphabet) != "") {
			t.Fatalf("normalizeCode(%q) = %q", s, n)
		}
		_ = CodeRequest{Code: &s}.Validate()
	})
}

// FuzzPolicy: any JSON body either decodes and validates into a policy that
// applies and encodes, or is refused; never a panic.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{`{}`, `{"permissions":["CREATE_QUOTES"],"defaultExecutionMode":"AUTO","spendingLimits":{"currency":"USD","perTransactionLimit":1}}`,
		`{"accountRestrictions":{"allowedAccountIds":null,"accountRules":[{"accountId":"x"}]}}`, `{"approvalThresholds":{"amount":null}}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var in PolicyIn
		if err := jsonx.Decode(b, &in); err != nil {
			return
		}
		for _, full := range []bool{true, false} {
			if in.Validate("", full) != nil {
				continue
			}
			var p Policy
			if full {
				if err := in.apply(&p, true); err != nil {
					continue
				}
			} else {
				p = Policy{SpendingLimits: SpendingLimits{Currency: "USD"}}
				if err := in.apply(&p, false); err != nil {
					continue
				}
			}
			if _, err := json.Marshal(p); err != nil {
				t.Fatal(err)
			}
		}
	})
}
