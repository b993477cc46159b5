package cards

// Triggers of card status transitions: requests (PATCH status) and system
// events (the issuer's answer, delegation changes).
const (
	TriggerProvisioned           = "issuer provisions"
	TriggerProvisionedWithoutKey = "issuer provisions; USDB funding without an active delegated key"
	TriggerIssuerRejected        = "issuer rejects"
	TriggerRequestActive         = "PATCH status ACTIVE"
	TriggerRequestFrozen         = "PATCH status FROZEN"
	TriggerRequestClosed         = "PATCH status CLOSED"
	TriggerDelegationLost        = "funding without an active delegated key"
	TriggerDelegationRestored    = "funding usable again"
	TriggerSingleUseSpent        = "an agent's SINGLE_USE card settles its one purchase"
)

// Transition is one row of the card status machine.
type Transition struct {
	From, Trigger, To, Reason string
	// NeedsUsableFunding: the move is allowed only when the funding source
	// may be used (USD, or USDB with an active delegated key).
	NeedsUsableFunding bool
}

// Transitions is the card status machine of Part A "Card", the only place
// that says which status may follow which. CLOSED has no way out.
var Transitions = []Transition{
	{From: StatusProcessing, Trigger: TriggerProvisioned, To: StatusActive, NeedsUsableFunding: true},
	{From: StatusProcessing, Trigger: TriggerProvisionedWithoutKey, To: StatusPendingAuth, Reason: ReasonDelegationRequired},
	{From: StatusProcessing, Trigger: TriggerIssuerRejected, To: StatusClosed, Reason: ReasonIssuerRejected},
	{From: StatusActive, Trigger: TriggerRequestFrozen, To: StatusFrozen},
	{From: StatusFrozen, Trigger: TriggerRequestActive, To: StatusActive, NeedsUsableFunding: true},
	{From: StatusPendingAuth, Trigger: TriggerRequestActive, To: StatusActive, NeedsUsableFunding: true},
	{From: StatusPendingAuth, Trigger: TriggerRequestFrozen, To: StatusFrozen},
	{From: StatusActive, Trigger: TriggerRequestClosed, To: StatusClosed, Reason: ReasonClosedByPlatform},
	{From: StatusPendingAuth, Trigger: TriggerRequestClosed, To: StatusClosed, Reason: ReasonClosedByPlatform},
	{From: StatusFrozen, Trigger: TriggerRequestClosed, To: StatusClosed, Reason: ReasonClosedByPlatform},
	{From: StatusActive, Trigger: TriggerDelegationLost, To: StatusPendingAuth, Reason: ReasonDelegationRequired},
	{From: StatusPendingAuth, Trigger: TriggerDelegationRestored, To: StatusActive, NeedsUsableFunding: true},
	// An agent's SINGLE_USE purchase card closes once its one purchase
	// clears (R-AGENT-37); its funding stays bound for returns.
	{From: StatusActive, Trigger: TriggerSingleUseSpent, To: StatusClosed, Reason: ReasonSingleUseSpent},
	{From: StatusFrozen, Trigger: TriggerSingleUseSpent, To: StatusClosed, Reason: ReasonSingleUseSpent},
	{From: StatusPendingAuth, Trigger: TriggerSingleUseSpent, To: StatusClosed, Reason: ReasonSingleUseSpent},
}

// requestTriggers maps a requested status to its trigger. PENDING_AUTH,
// PROCESSING and PENDING_KYC cannot be requested (R-CARD-20).
var requestTriggers = map[string]string{
	StatusActive: TriggerRequestActive,
	StatusFrozen: TriggerRequestFrozen,
	StatusClosed: TriggerRequestClosed,
}

// RequestableStatuses are the statuses PATCH may ask for.
var RequestableStatuses = []string{StatusActive, StatusFrozen, StatusClosed}

// next returns the transition from a status on a trigger, if the table has
// one.
func next(from, trigger string) (Transition, bool) {
	for _, tr := range Transitions {
		if tr.From == from && tr.Trigger == trigger {
			return tr, true
		}
	}
	return Transition{}, false
}
