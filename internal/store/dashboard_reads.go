package store

import (
	"context"
	"database/sql"
	"time"
)

// Reads the dashboard (internal/dashboard) needs beyond what the API lists.

// TransactionStat is the count and sent volume of a tenant's transactions of
// one status and currency.
type TransactionStat struct {
	Status   string
	Currency string
	Count    int64
	Volume   int64 // sent amounts, in the currency's smallest unit
}

// TransactionStatsSince counts the tenant's transactions created at or after
// since, by status and sent currency. idFloor bounds the scan through the
// id index (ids sort by creation time: id.Floor of a time safely before
// since, since a transaction may carry the id its quote was given earlier).
func (q Q) TransactionStatsSince(ctx context.Context, t Tenant, since time.Time, idFloor string) ([]TransactionStat, error) {
	rows, err := q.query(ctx, `SELECT status, sent_currency, COUNT(*), COALESCE(SUM(sent_amount), 0)
		FROM transactions WHERE platform_id = ? AND env = ? AND id >= ? AND created_at >= ?
		GROUP BY status, sent_currency ORDER BY status, sent_currency`,
		t.PlatformID, t.Env, idFloor, toMicros(since))
	if err != nil {
		return nil, err
	}
	var out []TransactionStat
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var s TransactionStat
		err := r.Scan(&s.Status, &s.Currency, &s.Count, &s.Volume)
		out = append(out, s)
		return err
	})
	return out, err
}

// LedgerTransfersByReference returns the tenant's ledger transfers whose
// reference is ref (a transaction's id), oldest first, with ResolvedBy and
// ReversedBy filled.
func (q Q) LedgerTransfersByReference(ctx context.Context, t Tenant, ref string) ([]LedgerTransfer, error) {
	rows, err := q.query(ctx, `SELECT id FROM ledger_transfers WHERE platform_id = ? AND env = ? AND reference = ?
		ORDER BY created_at, id LIMIT 200`, t.PlatformID, t.Env, ref)
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := ledgerEachRow(rows, func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		ids = append(ids, id)
		return err
	}); err != nil {
		return nil, err
	}
	byID, err := q.LedgerTransfersByID(ctx, t, ids)
	if err != nil {
		return nil, err
	}
	out := make([]LedgerTransfer, 0, len(ids))
	for _, id := range ids {
		if tr, ok := byID[id]; ok {
			out = append(out, tr)
		}
	}
	return out, nil
}
