package ledger

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Audit checks the tenant's whole ledger against its invariants and returns
// nil, or ErrInvariant joined with every violation found:
//
//   - every transfer's postings sum to zero per currency, and every posting
//     belongs to a transfer and an account that exist;
//   - every transfer but a VOID has two or more postings, a VOID none;
//   - every non-hot account has a balance row, no hot account has one, and
//     every balance row equals the sum of its account's postings (posted, and
//     pending of unresolved holds);
//   - no INTERNAL account has a negative available balance;
//   - per currency, posted balances sum to zero and so do pending ones;
//   - every statement bucket (hour and day sums of an account's posted
//     postings) equals the sum of its postings.
//
// It reads every posting of the tenant: it is for tests and operators, not
// for request paths. It reads outside a transaction, so run it while the
// tenant's ledger is quiet.
func (s *Service) Audit(ctx context.Context, t store.Tenant) error {
	q := s.db.Read()
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	unbalanced, err := q.LedgerUnbalancedTransfers(ctx, t)
	if err != nil {
		return err
	}
	for _, id := range unbalanced {
		bad("transfer %s: postings do not sum to zero in some currency", id)
	}
	orphans, err := q.LedgerPostingsWithoutTransfer(ctx, t)
	if err != nil {
		return err
	}
	for _, id := range orphans {
		bad("postings of unknown transfer %s", id)
	}
	counts, err := q.LedgerPostingCounts(ctx, t)
	if err != nil {
		return err
	}
	for _, c := range counts {
		if isVoid := Kind(c.Kind) == KindVoid; (isVoid && c.Postings != 0) || (!isVoid && c.Postings < 2) {
			bad("transfer %s (%s) has %d postings", c.TransferID, c.Kind, c.Postings)
		}
	}

	var accts []store.LedgerAccount
	for after := ""; ; {
		page, err := q.ListLedgerAccounts(ctx, t, after, 500)
		if err != nil {
			return err
		}
		accts = append(accts, page...)
		if len(page) < 500 {
			break
		}
		after = page[len(page)-1].ID
	}
	stored, err := q.ListLedgerBalances(ctx, t)
	if err != nil {
		return err
	}
	derived, err := q.DerivedLedgerBalances(ctx, t)
	if err != nil {
		return err
	}
	// Sums are exact (math/big): a hot account's, and a currency's total
	// over every account, may pass int64 though every balance row fits.
	type totals struct{ posted, pending big.Int }
	per := map[string]*totals{}
	known := map[string]bool{}
	zero := new(big.Int)
	for _, a := range accts {
		known[a.ID] = true
		d, ok := derived[a.ID]
		if !ok {
			d = store.LedgerSums{AccountID: a.ID, Posted: zero, PendingDebits: zero, PendingCredits: zero}
		}
		row, hasRow := stored[a.ID]
		switch {
		case a.Hot && hasRow:
			bad("hot account %s has a balance row", a.ID)
		case !a.Hot && !hasRow:
			bad("account %s has no balance row", a.ID)
		case !a.Hot && (d.Posted.Cmp(big.NewInt(row.Posted)) != 0 || d.PendingDebits.Cmp(big.NewInt(row.PendingDebits)) != 0 ||
			d.PendingCredits.Cmp(big.NewInt(row.PendingCredits)) != 0):
			bad("account %s: balance row posted=%d pending-=%d pending+=%d, postings say posted=%s pending-=%s pending+=%s",
				a.ID, row.Posted, row.PendingDebits, row.PendingCredits, d.Posted, d.PendingDebits, d.PendingCredits)
		}
		available := new(big.Int).Sub(d.Posted, d.PendingDebits)
		if AccountKind(a.Kind) == Internal && available.Sign() < 0 {
			bad("internal account %s has available balance %s", a.ID, available)
		}
		tot := per[a.Currency]
		if tot == nil {
			tot = &totals{}
			per[a.Currency] = tot
		}
		tot.posted.Add(&tot.posted, d.Posted)
		tot.pending.Add(&tot.pending, d.PendingCredits)
		tot.pending.Sub(&tot.pending, d.PendingDebits)
	}
	for aid := range derived {
		if !known[aid] {
			bad("postings on unknown account %s", aid)
		}
	}
	curs := make([]string, 0, len(per))
	for c := range per {
		curs = append(curs, c)
	}
	sort.Strings(curs)
	for _, c := range curs {
		if per[c].posted.Sign() != 0 || per[c].pending.Sign() != 0 {
			bad("%s: balances sum to posted %s, pending %s (want 0, 0)", c, &per[c].posted, &per[c].pending)
		}
	}
	buckets, err := q.LedgerBucketMismatches(ctx, t)
	if err != nil {
		return err
	}
	for _, m := range buckets {
		bad("account %s: bucket of %d µs at %d holds %d, postings say %d",
			m.AccountID, m.Span, m.BucketStart, m.Stored, m.Postings)
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.Join(append([]error{ErrInvariant}, problems...)...)
}
