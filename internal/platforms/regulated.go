package platforms

import (
	"context"

	"github.com/paymentsd/paymentsd/internal/store"
)

// SetRegulated marks a platform as a regulated financial institution, or
// not. It is an operator action (and a test helper), not an API operation:
// a regulated platform's sandbox customers get their verification outcome at
// creation, without paperwork (R-SBX-12).
func SetRegulated(ctx context.Context, db *store.DB, platformID string, regulated bool) error {
	return db.InTx(ctx, func(tx *store.Tx) error { return tx.SetPlatformRegulated(ctx, platformID, regulated) })
}
