package ledger

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/paymentsd/paymentsd/internal/store"
)

// Audit checks the tenant's whole ledger against its invariants and returns
// nil, or ErrInvariant joined with every violation found:
//
//   - every transfer's postings sum to zero per currency;
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
	type totals struct{ posted, pending int64 }
	per := map[string]*totals{}
	known := map[string]bool{}
	for _, a := range accts {
		known[a.ID] = true
		d := derived[a.ID]
		row, hasRow := stored[a.ID]
		switch {
		case a.Hot && hasRow:
			bad("hot account %s has a balance row", a.ID)
		case !a.Hot && !hasRow:
			bad("account %s has no balance row", a.ID)
		case !a.Hot && (row.Posted != d.Posted || row.PendingDebits != d.PendingDebits || row.PendingCredits != d.PendingCredits):
			bad("account %s: balance row posted=%d pending-=%d pending+=%d, postings say posted=%d pending-=%d pending+=%d",
				a.ID, row.Posted, row.PendingDebits, row.PendingCredits, d.Posted, d.PendingDebits, d.PendingCredits)
		}
		if AccountKind(a.Kind) == Internal && d.Posted-d.PendingDebits < 0 {
			bad("internal account %s has available balance %d", a.ID, d.Posted-d.PendingDebits)
		}
		tot := per[a.Currency]
		if tot == nil {
			tot = &totals{}
			per[a.Currency] = tot
		}
		tot.posted += d.Posted
		tot.pending += d.PendingCredits - d.PendingDebits
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
		if per[c].posted != 0 || per[c].pending != 0 {
			bad("%s: balances sum to posted %d, pending %d (want 0, 0)", c, per[c].posted, per[c].pending)
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
