package cards

import (
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// R-AGENT-37: the decisions agents' cards add to a purchase: the effective
// MCC blocks (agent defaults, platform, card), one open purchase for
// SINGLE_USE, one merchant for MERCHANT_LOCKED; a platform card has none.
func TestAgentDecline_R_AGENT_37(t *testing.T) {
	mcc := func(s string) *string { return &s }
	single := store.Card{AgentID: "Agent:a", AgentKind: AgentSingleUse, BlockedMCCs: []string{"5812"}}
	locked := store.Card{AgentID: "Agent:a", AgentKind: AgentMerchantLocked, BlockedMCCs: []string{}}
	cases := []struct {
		name     string
		c        store.Card
		platform []string
		merchant string
		mcc      *string
		open     int
		want     string
	}{
		{"platform card: no agent rule", store.Card{BlockedMCCs: []string{}}, nil, "X", mcc("7995"), 3, ""},
		{"agent default block", single, nil, "X", mcc("7995"), 0, DeclineBlocked},
		{"crypto quasi-cash", locked, nil, "X", mcc("6051"), 0, DeclineBlocked},
		{"platform block", single, []string{"5933"}, "X", mcc("5933"), 0, DeclineBlocked},
		{"card's own block", single, nil, "X", mcc("5812"), 0, DeclineBlocked},
		{"single use, first purchase", single, nil, "X", mcc("5943"), 0, ""},
		{"single use, one already open", single, nil, "X", mcc("5943"), 1, DeclineCardNotActive},
		{"no MCC reported", single, nil, "X", nil, 0, ""},
		{"merchant locked, not yet locked", locked, nil, "A", mcc("5943"), 0, ""},
		{"merchant locked, same merchant", withLock(locked, "A"), nil, "A", mcc("5943"), 2, ""},
		{"merchant locked, other merchant", withLock(locked, "A"), nil, "B", mcc("5943"), 0, DeclineBlocked},
	}
	for _, tc := range cases {
		if got := agentDecline(tc.c, tc.platform, tc.merchant, tc.mcc, tc.open); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func withLock(c store.Card, merchant string) store.Card {
	c.LockedMerchant = merchant
	return c
}

// R-AGENT-23: effectiveBlockedMccs is the sorted union, without repeats.
func TestEffectiveBlockedMCCs_R_AGENT_23(t *testing.T) {
	got := EffectiveBlockedMCCs(store.Card{BlockedMCCs: []string{"5812", "7995"}}, []string{"5933", "5812"})
	want := slices.Sorted(slices.Values(append(slices.Clone(AgentDefaultBlockedMCCs), "5812", "5933")))
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, m := range AgentDefaultBlockedMCCs {
		if !ValidMCC(m) {
			t.Fatalf("default %q is not an MCC", m)
		}
	}
}

// An agent's SINGLE_USE card closes from every live status once its
// purchase clears, and keeps its funding (returns still credit it).
func TestTransitions_SingleUseSpent(t *testing.T) {
	for _, from := range []string{StatusActive, StatusFrozen, StatusPendingAuth} {
		tr, ok := next(from, TriggerSingleUseSpent)
		if !ok || tr.To != StatusClosed || tr.Reason != ReasonSingleUseSpent {
			t.Fatalf("%s: %+v %v", from, tr, ok)
		}
	}
	for _, from := range []string{StatusProcessing, StatusClosed, StatusPendingKYC} {
		if _, ok := next(from, TriggerSingleUseSpent); ok {
			t.Fatalf("%s closes on a purchase", from)
		}
	}
}
