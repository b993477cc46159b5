package rails

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

func payoutState(rail string, amount int64) JobState {
	return JobState{Payout: Payout{Tenant: store.Tenant{PlatformID: "p", Env: store.EnvSandbox},
		TransactionID: "Transaction:0195", Rail: rail, HoldID: "h", SendingAmount: amount, ReceivingAmount: amount,
		SendingCurrency: "USD", ReceivingCurrency: "USD", RemittanceInformation: "Invoice 42", StatementDescriptor: "PAYROLL"},
		SubmittedAt: time.Date(2026, 3, 2, 15, 4, 5, 0, time.UTC)}
}

// TestRailDetailsPerRail: R-TXN-19..22 — railDetails only on ONCHAIN, ACH,
// ACH_SAME_DAY, WIRE, FEDNOW and RTP, each with its variant's fields.
func TestRailDetailsPerRail(t *testing.T) {
	digits15 := regexp.MustCompile(`^[0-9]{15}$`)
	for _, rail := range []string{ACH, ACHSameDay} {
		d := PlanFor(payoutState(rail, 1000)).Initial
		if d == nil || d.PaymentRail != rail || d.Status != RailPending || !digits15.MatchString(d.TraceNumber) ||
			d.Addenda != "Invoice 42" || d.StatementDescriptor != "PAYROLL" {
			t.Fatalf("%s details: %+v", rail, d)
		}
	}
	w := PlanFor(payoutState(Wire, 1000)).Initial
	if w == nil || w.Status != RailPending || !regexp.MustCompile(`^20260302PSDSBX01[0-9]{6}$`).MatchString(w.IMAD) ||
		w.OriginatorToBeneficiaryInformation != "Invoice 42" || w.TraceNumber != "" {
		t.Fatalf("WIRE details: %+v", w)
	}
	for _, rail := range []string{RTP, FedNow} {
		d := PlanFor(payoutState(rail, 1000)).Initial
		if d == nil || d.Status != RailPending || len(d.EndToEndID) != 35 || d.RemittanceInformation != "Invoice 42" {
			t.Fatalf("%s details: %+v", rail, d)
		}
	}
	st := payoutState(Onchain, 1000)
	st.Network = "ETHEREUM"
	o := PlanFor(st).Initial
	if o == nil || o.Network != "ETHEREUM" || !regexp.MustCompile(`^0x[0-9a-f]{64}$`).MatchString(o.TransactionHash) {
		t.Fatalf("ONCHAIN details: %+v", o)
	}
	b, _ := json.Marshal(Advance(o, ActionSettle, time.Now()))
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if _, has := m["status"]; has { // R-TXN-20: no status on ONCHAIN
		t.Fatalf("ONCHAIN railDetails has a status: %s", b)
	}
	for _, rail := range []string{SEPA, SEPAInstant, SWIFT, Lightning, Spark, Internal, "", "PIX", "NEFT", "SOMETHING_NEW"} {
		if d := PlanFor(payoutState(rail, 1000)).Initial; d != nil {
			t.Fatalf("%q has railDetails %+v; only the six variants do (R-TXN-19)", rail, d)
		}
	}
}

// TestRailTypicalTimes: Part B payout timing.
func TestRailTypicalTimes(t *testing.T) {
	cases := []struct {
		rail, network string
		want          time.Duration
	}{
		{RTP, "", 5 * time.Second}, {FedNow, "", 5 * time.Second}, {SEPAInstant, "", 5 * time.Second},
		{Lightning, "", 5 * time.Second}, {Spark, "", 5 * time.Second}, {"", "", 5 * time.Second},
		{"PIX", "", 5 * time.Second}, {Onchain, "SOLANA", 5 * time.Second},
		{RTGS, "", 30 * time.Minute}, {Onchain, "ETHEREUM", 15 * time.Minute}, {Onchain, "BITCOIN", 30 * time.Minute},
		{SEPA, "", 24 * time.Hour}, {Wire, "", 24 * time.Hour}, {NEFT, "", 24 * time.Hour},
		{ACH, "", 48 * time.Hour}, {BankTransfer, "", 48 * time.Hour}, {"EFT", "", 48 * time.Hour},
		{SWIFT, "", 72 * time.Hour}, {ACHSameDay, "", 6 * time.Hour},
	}
	for _, c := range cases {
		st := payoutState(c.rail, 1000)
		st.Network = c.network
		p := PlanFor(st)
		if len(p.Steps) != 1 || p.Steps[0].After != c.want || p.Steps[0].Action != ActionSettle {
			t.Errorf("%s/%s: plan %+v, want settle after %v", c.rail, c.network, p.Steps, c.want)
		}
	}
	// The default sandbox factor makes ACH take three seconds.
	if got := Scale(48*time.Hour, DefaultClockFactor); got < 2900*time.Millisecond || got > 3100*time.Millisecond {
		t.Fatalf("ACH in sandbox takes %v", got)
	}
}

// TestMagicAmounts: R-TXN-27, R-TXN-33 — the last three digits choose the
// outcome.
func TestMagicAmounts(t *testing.T) {
	for suffix, reason := range map[int64]string{901: ReasonQuoteExecutionFailed, 902: ReasonLimitExceeded,
		903: ReasonAccountCannotReceive, 904: ReasonAccountInvalid, 905: ReasonComplianceRejected} {
		for _, rail := range []string{ACH, Wire, RTP, Onchain, SEPA} {
			p := PlanFor(payoutState(rail, 12000+suffix))
			if len(p.Steps) != 1 || p.Steps[0].Action != ActionFail || p.Steps[0].FailureReason != reason {
				t.Errorf("%s amount ...%d: %+v", rail, suffix, p.Steps)
			}
		}
	}
	p := PlanFor(payoutState(ACH, 5906))
	if len(p.Steps) != 2 || p.Steps[0].Action != ActionSettle || p.Steps[1].Action != ActionReturn || p.Steps[1].After != 48*time.Hour {
		t.Fatalf("ACH ...906: %+v", p.Steps)
	}
	if p := PlanFor(payoutState(RTP, 5906)); len(p.Steps) != 1 || p.Steps[0].Action != ActionSettle {
		t.Fatalf("RTP ...906 (no returns on RTP): %+v", p.Steps)
	}
	if p := PlanFor(payoutState(ACH, 10000)); len(p.Steps) != 1 || p.Steps[0].Action != ActionSettle {
		t.Fatalf("plain amount: %+v", p.Steps)
	}
	prod := payoutState(ACH, 10000)
	prod.Payout.Tenant.Env = store.EnvProduction
	if p := PlanFor(prod); len(p.Steps) != 1 || p.Steps[0].FailureReason != ReasonQuoteExecutionFailed || p.Steps[0].After != 0 {
		t.Fatalf("production has no partner and must fail: %+v", p.Steps)
	}
}

// TestAdvance: R-TXN-21 — ACH statuses and their timestamps.
func TestAdvance(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d := PlanFor(payoutState(ACH, 1000)).Initial
	d = Advance(d, ActionSettle, at)
	if d.Status != RailSettled {
		t.Fatal(d.Status)
	}
	d = Advance(d, ActionReturn, at)
	if d.Status != RailReturned || d.ReturnedAt == nil || !d.ReturnedAt.Equal(at) {
		t.Fatalf("%+v", d)
	}
	d = Advance(d, ActionDishonor, at.Add(time.Hour))
	if d.Status != RailReturnDishonored || d.DishonoredAt == nil {
		t.Fatalf("%+v", d)
	}
	d = Advance(d, ActionContest, at.Add(2*time.Hour))
	if d.Status != RailReturnContested || d.ContestedAt == nil || d.ReturnedAt == nil {
		t.Fatalf("%+v", d)
	}
	if Advance(nil, ActionSettle, at) != nil {
		t.Fatal("nil details must stay nil")
	}
	if TraceNumber("a") != TraceNumber("a") || TraceNumber("a") == TraceNumber("b") {
		t.Fatal("trace numbers must be deterministic per transaction and differ between transactions")
	}
}
