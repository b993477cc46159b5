package rails

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/big"
	"strings"
	"sync/atomic"
	"time"
)

// Rail names (PaymentRail values of Part A and the rails Part B's payout
// timing names, spelled as enum values).
const (
	ACH          = "ACH"
	ACHSameDay   = "ACH_SAME_DAY"
	Wire         = "WIRE"
	RTP          = "RTP"
	FedNow       = "FEDNOW"
	SEPA         = "SEPA"
	SEPAInstant  = "SEPA_INSTANT"
	Onchain      = "ONCHAIN"
	Lightning    = "LIGHTNING"
	Spark        = "SPARK"
	Internal     = "INTERNAL"
	SWIFT        = "SWIFT"
	RTGS         = "RTGS"
	NEFT         = "NEFT"
	BankTransfer = "BANK_TRANSFER"
)

// Rail-level statuses reported in railDetails (R-TXN-21, R-TXN-22).
const (
	RailPending          = "PENDING"
	RailSettled          = "SETTLED"
	RailReturned         = "RETURNED"
	RailReturnDishonored = "RETURN_DISHONORED"
	RailReturnContested  = "RETURN_CONTESTED"
	RailReversed         = "REVERSED"
	RailFailed           = "FAILED"
)

// failureReason values (R-TXN-27).
const (
	ReasonQuoteExecutionFailed = "QUOTE_EXECUTION_FAILED"
	ReasonPayoutReturned       = "PAYOUT_RETURNED"
	ReasonLimitExceeded        = "LIMIT_EXCEEDED"
	ReasonAccountCannotReceive = "ACCOUNT_CANNOT_RECEIVE"
	ReasonAccountInvalid       = "ACCOUNT_INVALID"
	ReasonComplianceRejected   = "COMPLIANCE_REJECTED"
)

// Details is a railDetails object (Part A, R-TXN-19..22), discriminated by
// paymentRail. Only the fields of the rail's variant are set.
type Details struct {
	PaymentRail string `json:"paymentRail"`
	Status      string `json:"status,omitempty"` // not on ONCHAIN
	// ACH and ACH_SAME_DAY.
	TraceNumber         string     `json:"traceNumber,omitempty"`
	Addenda             string     `json:"addenda,omitempty"`
	StatementDescriptor string     `json:"statementDescriptor,omitempty"`
	ReturnedAt          *time.Time `json:"returnedAt,omitempty"`
	DishonoredAt        *time.Time `json:"dishonoredAt,omitempty"`
	ContestedAt         *time.Time `json:"contestedAt,omitempty"`
	ReversedAt          *time.Time `json:"reversedAt,omitempty"`
	// WIRE.
	IMAD                               string `json:"imad,omitempty"`
	OriginatorToBeneficiaryInformation string `json:"originatorToBeneficiaryInformation,omitempty"`
	// FEDNOW and RTP.
	EndToEndID            string `json:"endToEndId,omitempty"`
	RemittanceInformation string `json:"remittanceInformation,omitempty"`
	// ONCHAIN.
	TransactionHash string `json:"transactionHash,omitempty"`
	Network         string `json:"network,omitempty"`
}

// Actions a step applies.
const (
	ActionSettle = "SETTLE" // the rail completed: COMPLETED
	ActionFail   = "FAIL"   // the rail failed: FAILED, refunded
	ActionReturn = "RETURN" // an ACH payout came back after completion: FAILED PAYOUT_RETURNED, refunded
)

// Step is one thing that happens to a payout on its rail, After (in rail
// time, before the sandbox clock factor) the previous one.
type Step struct {
	After         time.Duration
	Action        string
	FailureReason string
}

// Plan is a payout's course on its rail.
type Plan struct {
	Rail    string
	Initial *Details // railDetails at submission (nil on rails without a variant)
	Steps   []Step
}

// Rail is a rail adapter. The sandbox simulators below implement it; a
// production adapter would submit the payment to a partner and report the
// same steps as the partner's notifications arrive.
type Rail interface {
	// Name is the PaymentRail value.
	Name() string
	// Typical is the typical time from execution to settlement (Part B,
	// payout timing) on network (crypto rails) or in general.
	Typical(network string) time.Duration
	// Details is the railDetails of a newly submitted payout, or nil when
	// the rail has no railDetails variant (R-TXN-19).
	Details(st JobState) *Details
}

// Typical times (Part B, "Payout timing"): instant rails take seconds.
const (
	instantTime = 5 * time.Second
	day         = 24 * time.Hour
)

type achRail struct{ sameDay bool }

func (r achRail) Name() string {
	if r.sameDay {
		return ACHSameDay
	}
	return ACH
}

func (r achRail) Typical(string) time.Duration {
	if r.sameDay {
		return 6 * time.Hour // settles in one of the same-day windows
	}
	return 2 * day
}

func (r achRail) Details(st JobState) *Details {
	p := st.Payout
	return &Details{PaymentRail: r.Name(), Status: RailPending, TraceNumber: TraceNumber(p.TransactionID),
		Addenda: p.RemittanceInformation, StatementDescriptor: p.StatementDescriptor}
}

type wireRail struct{}

func (wireRail) Name() string                 { return Wire }
func (wireRail) Typical(string) time.Duration { return day }
func (wireRail) Details(st JobState) *Details {
	return &Details{PaymentRail: Wire, Status: RailPending, IMAD: IMAD(st.Payout.TransactionID, st.SubmittedAt),
		OriginatorToBeneficiaryInformation: st.Payout.RemittanceInformation}
}

// instantRail is a real-time rail; RTP and FedNow report railDetails.
type instantRail struct {
	name    string
	details bool
}

func (r instantRail) Name() string                 { return r.name }
func (r instantRail) Typical(string) time.Duration { return instantTime }
func (r instantRail) Details(st JobState) *Details {
	if !r.details {
		return nil
	}
	return &Details{PaymentRail: r.name, Status: RailPending, EndToEndID: EndToEndID(st.Payout.TransactionID),
		RemittanceInformation: st.Payout.RemittanceInformation}
}

// bankRail is a batch bank rail without a railDetails variant.
type bankRail struct {
	name    string
	typical time.Duration
}

func (r bankRail) Name() string                 { return r.name }
func (r bankRail) Typical(string) time.Duration { return r.typical }
func (r bankRail) Details(JobState) *Details    { return nil }

type onchainRail struct{}

func (onchainRail) Name() string { return Onchain }
func (onchainRail) Typical(network string) time.Duration {
	switch network {
	case "ETHEREUM":
		return 15 * time.Minute
	case "BITCOIN":
		return 30 * time.Minute // 10 minutes to an hour
	}
	return instantTime // Solana, Base, Polygon, Plasma, Tron
}
func (onchainRail) Details(st JobState) *Details {
	network := st.Network
	if network == "" {
		network = "SOLANA"
		if st.Payout.ReceivingCurrency == "BTC" {
			network = "BITCOIN"
		}
	}
	return &Details{PaymentRail: Onchain, TransactionHash: TransactionHash(st.Payout.TransactionID, network), Network: network}
}

var registry = map[string]Rail{}

func register(rs ...Rail) {
	for _, r := range rs {
		registry[r.Name()] = r
	}
}

func init() {
	register(achRail{}, achRail{sameDay: true}, wireRail{}, onchainRail{},
		instantRail{name: RTP, details: true}, instantRail{name: FedNow, details: true})
	for _, n := range []string{SEPAInstant, "UPI", "IMPS", "SPEI", "PIX", "FASTER_PAYMENTS", "PAYNOW", "FAST",
		"INSTAPAY", "BRE_B", "MOBILE_MONEY", "UNIONPAY", Internal, Lightning, Spark} {
		register(instantRail{name: n})
	}
	register(bankRail{RTGS, 30 * time.Minute})
	for _, n := range []string{SEPA, NEFT, "PESONET", "CIPS"} {
		register(bankRail{n, day})
	}
	for _, n := range []string{BankTransfer, "EFT", "ACH_COLOMBIA"} {
		register(bankRail{n, 2 * day})
	}
	register(bankRail{SWIFT, 3 * day})
}

// For returns the adapter of a rail. An empty rail is an internal
// transfer; an unknown one is a bank rail of about a day without railDetails.
func For(name string) Rail {
	if name == "" {
		name = Internal
	}
	if r, ok := registry[name]; ok {
		return r
	}
	return bankRail{name, day}
}

// Magic amounts (sandbox): the last three digits of the sending amount, in
// the smallest unit, choose a payout's outcome. Any other amount completes.
var Magic = map[int64]string{
	901: ReasonQuoteExecutionFailed,
	902: ReasonLimitExceeded,
	903: ReasonAccountCannotReceive,
	904: ReasonAccountInvalid,
	905: ReasonComplianceRejected,
	906: ReasonPayoutReturned, // ACH and ACH_SAME_DAY: completes, then is returned
}

// MagicApproval: an incoming sandbox deposit whose amount ends in 907 waits
// for the platform's approval (POST /transactions/{id}/approve or reject).
const MagicApproval = 907

// Outcome is the outcome magic values choose for an amount: "" (completes),
// a failureReason, or PAYOUT_RETURNED.
func Outcome(amount int64) string {
	if amount < 0 {
		amount = -amount
	}
	return Magic[amount%1000]
}

// PlanFor plans a payout: its rail's initial railDetails and the steps the
// magic amount selects. Production payouts fail: no rail partner is
// configured yet.
func PlanFor(st JobState) Plan {
	r := For(st.Payout.Rail)
	typical := r.Typical(st.Network)
	plan := Plan{Rail: r.Name(), Initial: r.Details(st)}
	outcome := Outcome(st.Payout.SendingAmount)
	if st.Payout.Tenant.Env != "" && st.Payout.Tenant.Env != "sandbox" {
		plan.Steps = []Step{{After: 0, Action: ActionFail, FailureReason: ReasonQuoteExecutionFailed}}
		return plan
	}
	switch {
	case outcome == "":
		plan.Steps = []Step{{After: typical, Action: ActionSettle}}
	case outcome == ReasonPayoutReturned && (plan.Rail == ACH || plan.Rail == ACHSameDay):
		// Completes, then the receiving bank returns it within two banking days.
		plan.Steps = []Step{{After: typical, Action: ActionSettle}, {After: 2 * day, Action: ActionReturn}}
	case outcome == ReasonPayoutReturned:
		plan.Steps = []Step{{After: typical, Action: ActionSettle}}
	default:
		plan.Steps = []Step{{After: typical, Action: ActionFail, FailureReason: outcome}}
	}
	return plan
}

// Advance returns the railDetails after an action at time at (nil stays
// nil). ONCHAIN details carry no status.
func Advance(d *Details, action string, at time.Time) *Details {
	if d == nil {
		return nil
	}
	n := *d
	if n.PaymentRail == Onchain {
		return &n
	}
	at = at.UTC().Truncate(time.Microsecond)
	switch action {
	case ActionSettle:
		n.Status = RailSettled
	case ActionFail:
		n.Status = RailFailed
	case ActionReturn:
		n.Status, n.ReturnedAt = RailReturned, &at
	case ActionDishonor:
		n.Status, n.DishonoredAt = RailReturnDishonored, &at
	case ActionContest:
		n.Status, n.ContestedAt = RailReturnContested, &at
	}
	return &n
}

// Actions on incoming ACH deposits (sandbox).
const (
	ActionDishonor = "DISHONOR"
	ActionContest  = "CONTEST"
)

// DefaultClockFactor scales rail time to sandbox time: ACH's two days take
// three seconds (1/57600), a one-day wire 1.5 s, SWIFT 4.5 s; instant rails
// settle at once.
const DefaultClockFactor = 1.0 / 57600

var factorBits atomic.Uint64

func init() { SetClockFactor(DefaultClockFactor) }

// SetClockFactor sets the sandbox clock factor of this process (0 makes
// every step due at once; 1 is real rail time). Negative or NaN values are
// ignored.
func SetClockFactor(f float64) {
	if f >= 0 && !math.IsInf(f, 0) {
		factorBits.Store(math.Float64bits(f))
	}
}

// ClockFactor is the sandbox clock factor in force.
func ClockFactor() float64 { return math.Float64frombits(factorBits.Load()) }

func clockFactor() float64 { return ClockFactor() }

// Scale turns rail time into sandbox time.
func Scale(d time.Duration, factor float64) time.Duration {
	return time.Duration(float64(d) * factor)
}

func digest(parts ...string) []byte {
	sum := sha256.Sum256([]byte("paymentsd-rails|" + strings.Join(parts, "|")))
	return sum[:]
}

func decimalDigits(b []byte, n int) string {
	s := new(big.Int).SetBytes(b).Text(10)
	for len(s) < n {
		s = "0" + s
	}
	return s[len(s)-n:]
}

// SandboxODFI is the 8-digit routing prefix of sandbox ACH trace numbers
// (the sandbox bank's ABA routing number without its check digit).
const SandboxODFI = "12345678"

// TraceNumber is a payout's 15-digit ACH trace number: the originating
// bank's 8-digit routing prefix and a 7-digit sequence.
func TraceNumber(transactionID string) string {
	return SandboxODFI + decimalDigits(digest("trace", transactionID), 7)
}

// IMAD is a Fedwire input message accountability data: the 8-digit cycle
// date, an 8-character source id and a 6-digit sequence.
func IMAD(transactionID string, at time.Time) string {
	return at.UTC().Format("20060102") + "PSDSBX01" + decimalDigits(digest("imad", transactionID), 6)
}

// EndToEndID is a 35-character ISO 20022 end-to-end id.
func EndToEndID(transactionID string) string {
	return "PSD" + strings.ToUpper(hex.EncodeToString(digest("e2e", transactionID)))[:32]
}

// TransactionHash is a (fake, well-formed) transaction hash on network:
// 0x-prefixed hex on EVM chains, hex elsewhere.
func TransactionHash(transactionID, network string) string {
	h := hex.EncodeToString(digest("hash", network, transactionID))
	switch network {
	case "ETHEREUM", "BASE", "POLYGON", "PLASMA":
		return "0x" + h
	}
	return h
}
