package cards

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// authRequest is an authorization as the decision sees it.
type authRequest struct {
	amount   int64
	currency string
	merchant Merchant
	debit    bool // a purchase (limits, MCC lists, funds) rather than a credit
}

// decide makes the authorization decision for a card: "" approves,
// otherwise the cardDeclinedReason (R-CARD-11, R-CARD-38..40, R-CARD-50).
// Nothing is written.
func (s *Service) decide(ctx context.Context, tx *store.Tx, c store.Card, r authRequest, l *legs) (string, error) {
	desc := *r.merchant.Descriptor
	if c.Status != StatusActive || strings.HasSuffix(desc, sandboxCardNotActiveSuffix) {
		return DeclineCardNotActive, nil
	}
	if r.currency != c.Currency {
		return DeclineUnsupportedNetwork, nil
	}
	usable, err := fundingUsable(ctx, tx.Q, c.Tenant, c)
	if err != nil || !usable {
		return DeclineNoFundingSource, err
	}
	if !r.debit {
		return "", nil
	}
	if blockedMCC(c, r.merchant.Mcc) {
		return DeclineBlocked, nil
	}
	if reason, err := s.agentRules(ctx, tx, c, r); err != nil || reason != "" {
		return reason, err
	}
	if over, err := s.overLimits(ctx, tx, c, r.amount, true); err != nil || over {
		if over {
			return DeclineSpendLimit, nil
		}
		return "", err
	}
	if strings.HasSuffix(desc, sandboxInsufficientSuffix) {
		return DeclineInsufficientFunds, nil
	}
	avail, err := s.available(ctx, tx, c, *l)
	if err != nil || avail < r.amount {
		return DeclineInsufficientFunds, err
	}
	return "", nil
}

// blockedMCC: on the card's block list, or off its allow list when it has
// one (a merchant without an MCC passes only without an allow list).
func blockedMCC(c store.Card, mcc *string) bool {
	m := ""
	if mcc != nil {
		m = *mcc
	}
	if m != "" && slices.Contains(c.BlockedMCCs, m) {
		return true
	}
	return len(c.AllowedMCCs) > 0 && !slices.Contains(c.AllowedMCCs, m)
}

// caps are a card's limits: the lower of the card's and the platform's
// cardConfigs where both are set (R-CARD-40); nil is no limit.
type caps struct{ perTxn, perDay, count *int64 }

func lower(a, b *int64) *int64 {
	switch {
	case a == nil:
		return b
	case b == nil || *a <= *b:
		return a
	}
	return b
}

// capsOf reads the platform's limits through the deciding transaction q:
// as of that transaction, and without a second connection from the pool.
func capsOf(ctx context.Context, q store.Q, c store.Card) (caps, error) {
	p, err := platformconfig.CardConfigsOf(ctx, q, c.Tenant)
	if err != nil {
		return caps{}, err
	}
	return caps{perTxn: lower(c.MaxSpendPerTransaction, p.MaxSpendPerTransaction),
		perDay: lower(c.MaxSpendPerDay, p.MaxSpendPerDay), count: lower(c.MaxTransactionsPerDay, p.MaxTransactionsPerDay)}, nil
}

// day is the UTC calendar day of an instant (daily limits, R-CARD-39).
func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// overLimits reports whether spending amount more today (a new
// authorization when counted) breaks a limit. An amount exactly at a limit
// passes (R-CARD-38). Cards whose issuer decides have none of ours.
func (s *Service) overLimits(ctx context.Context, tx *store.Tx, c store.Card, amount int64, counted bool) (bool, error) {
	if Programs[c.Currency].IssuerDecides {
		return false, nil
	}
	k, err := capsOf(ctx, tx.Q, c)
	if err != nil {
		return false, err
	}
	if counted && k.perTxn != nil && amount > *k.perTxn {
		return true, nil
	}
	spent, n, err := tx.CardDaySpend(ctx, c.Tenant, c.ID, day(tx.Now()))
	if err != nil {
		return false, err
	}
	if k.perDay != nil && spent+amount > *k.perDay {
		return true, nil
	}
	return counted && k.count != nil && n+1 > *k.count, nil
}
