package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Apply applies a batch inside the caller's transaction, in order, each
// transfer seeing the effects of those before it. It validates and checks the
// whole batch before it writes anything: on an error it has written nothing
// (except when a concurrent writer wins a race on a unique key, which on
// PostgreSQL aborts the transaction), and either way the caller rolls back.
//
// On PostgreSQL the balance rows of the batch's non-hot accounts are locked
// in ascending id order before anything is read from them, so concurrent
// batches never deadlock on them and every overdraft check sees the latest
// committed balance; each row then changes in one conditional UPDATE
// (unchanged version and, for INTERNAL accounts, no negative available
// balance). The same locks cover their statement buckets (the sums per hour
// and day that LedgerPostedSumBefore reads). Hot accounts are neither locked
// nor updated, and have no buckets.
func (s *Service) Apply(ctx context.Context, tx *store.Tx, t store.Tenant, batch []TransferSpec) ([]Transfer, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	// 1. Validate every spec on its own (pure; the input is not changed).
	plans := make([]plan, len(batch))
	index := make(map[string]int, len(batch))
	for i, spec := range batch {
		p, err := validate(spec)
		if err != nil {
			return nil, &BatchError{Index: i, TransferID: spec.ID, Err: err}
		}
		if p.id == "" {
			p.id = id.New(TransferIDPrefix)
		}
		if _, dup := index[p.id]; dup {
			return nil, &BatchError{Index: i, TransferID: p.id, Err: ErrDuplicateTransfer}
		}
		index[p.id] = i
		plans[i] = p
	}

	// 2. Find the stored transfers the batch refers to, and the accounts of
	// their postings (postings never change, so reading them unlocked is
	// safe).
	var refs []string
	for i, p := range plans {
		if ref := p.ref(); ref != "" {
			if j, inBatch := index[ref]; !inBatch {
				refs = append(refs, ref)
			} else if j >= i {
				return nil, &BatchError{Index: i, TransferID: p.id, Err: fmt.Errorf("%w: %s (later in the batch)", ErrTransferNotFound, ref)}
			}
		}
	}
	var accountIDs []string
	var refPostings map[string][]store.LedgerPosting
	if len(refs) > 0 {
		var err error
		if refPostings, err = tx.LedgerPostingsOf(ctx, t, refs); err != nil {
			return nil, err
		}
		for _, ps := range refPostings {
			for _, p := range ps {
				accountIDs = append(accountIDs, p.AccountID)
			}
		}
	}

	// 3. Load the accounts, and lock the balance rows of the non-hot ones.
	for _, p := range plans {
		for _, ps := range p.postings {
			accountIDs = append(accountIDs, ps.AccountID)
		}
	}
	accts, err := tx.LockLedgerAccounts(ctx, t, accountIDs)
	if err != nil {
		return nil, err
	}
	states := make(map[string]*state, len(accts))
	for aid, a := range accts {
		st := &state{acct: a}
		if !a.Hot {
			if a.Balance == nil {
				return nil, fmt.Errorf("ledger: account %s has no balance row", aid)
			}
			st.read, st.cur = *a.Balance, *a.Balance
		}
		states[aid] = st
	}
	suspense, err := s.lockSuspense(ctx, tx, t, plans, states)
	if err != nil {
		return nil, err
	}

	// Now read the referenced transfers' state (resolved, reversed): a
	// concurrent POST, VOID or REVERSAL touching a non-hot account held its
	// lock until it committed, so it is visible here. (One touching only hot
	// accounts is caught by the unique keys when we insert.) The same query
	// checks that the ids the caller chose are new, so that a clash is a clean
	// error rather than a failed insert (which would abort a PostgreSQL
	// transaction).
	var chosen []string
	for _, spec := range batch {
		if spec.ID != "" {
			chosen = append(chosen, spec.ID)
		}
	}
	known := map[string]*record{}
	if len(refs)+len(chosen) > 0 {
		trs, err := tx.LedgerTransfersByIDAnyTenant(ctx, append(append([]string(nil), refs...), chosen...))
		if err != nil {
			return nil, err
		}
		for _, cid := range chosen {
			if _, taken := trs[cid]; taken {
				return nil, &BatchError{Index: index[cid], TransferID: cid, Err: ErrDuplicateTransfer}
			}
		}
		for _, tid := range refs {
			row, ok := trs[tid]
			if !ok || row.Tenant != t || (len(refPostings[tid]) == 0 && Kind(row.Kind) != KindVoid) {
				continue // absent, another tenant's, or committed after we read the postings
			}
			r := &record{kind: Kind(row.Kind), resolved: row.ResolvedBy != "", reversed: row.ReversedBy != ""}
			for _, p := range refPostings[tid] {
				r.postings = append(r.postings, PostingSpec{AccountID: p.AccountID, Currency: p.Currency, Amount: p.Amount})
			}
			known[tid] = r
		}
	}

	// 4. Work out every transfer in order against the in-memory balances.
	now := tx.Now().UTC().Truncate(time.Microsecond)
	out := make([]Transfer, len(plans))
	for i, p := range plans {
		tr, err := step(p, known, states, suspense, now)
		if err != nil {
			return nil, &BatchError{Index: i, TransferID: p.id, Err: err}
		}
		tr.Tenant = t
		out[i] = tr
	}

	// 5. The balance-row changes, one per touched non-hot account, in
	// ascending account-id order.
	changed := make([]string, 0, len(states))
	for aid, st := range states {
		if !st.acct.Hot && st.touched {
			changed = append(changed, aid)
		}
	}
	sort.Strings(changed)
	changes := make([]store.LedgerBalanceChange, 0, len(changed))
	for _, aid := range changed {
		st := states[aid]
		dPosted, ok1 := sub(st.cur.Posted, st.read.Posted)
		dDebits, ok2 := sub(st.cur.PendingDebits, st.read.PendingDebits)
		dCredits, ok3 := sub(st.cur.PendingCredits, st.read.PendingCredits)
		_, ok4 := sub(dPosted, dDebits) // the store's floor condition adds this
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return nil, &AccountError{AccountID: aid, Err: ErrAmountOverflow}
		}
		changes = append(changes, store.LedgerBalanceChange{AccountID: aid, Version: st.read.Version, Posted: dPosted,
			PendingDebits: dDebits, PendingCredits: dCredits, FloorZero: AccountKind(st.acct.Kind) == Internal})
	}

	// 6. Write: transfers (in batch order, so one may name an earlier one),
	// postings and their buckets, then the balance rows.
	trRows := make([]store.LedgerTransfer, len(out))
	var psRows []store.LedgerPosting
	for i, tr := range out {
		trRows[i] = store.LedgerTransfer{ID: tr.ID, Tenant: t, Kind: string(tr.Kind), HoldID: tr.HoldID,
			ReversesID: tr.ReversesID, Reference: tr.Reference, Metadata: tr.Metadata, CreatedAt: now}
		for _, ps := range tr.Postings {
			psRows = append(psRows, store.LedgerPosting{ID: ps.ID, Tenant: t, TransferID: tr.ID, AccountID: ps.AccountID,
				Currency: ps.Currency, Amount: ps.Amount, Pending: ps.Pending, CreatedAt: now})
		}
	}
	// Statement buckets, for the accounts whose balance rows we hold locked
	// (hot accounts have none: buckets must not make them contended).
	var bucketed []store.LedgerPosting
	for _, ps := range psRows {
		if !ps.Pending && !states[ps.AccountID].acct.Hot {
			bucketed = append(bucketed, ps)
		}
	}
	failed, err := tx.WriteLedger(ctx, t, trRows, psRows, bucketed, changes, now)
	if err != nil {
		switch {
		case errors.Is(err, store.ErrLedgerHoldResolved):
			return nil, errors.Join(ErrHoldNotPending, err)
		case errors.Is(err, store.ErrLedgerTransferReversed):
			return nil, errors.Join(ErrAlreadyReversed, err)
		case errors.Is(err, store.ErrLedgerTransferExists):
			return nil, errors.Join(ErrDuplicateTransfer, err)
		}
		return nil, err
	}
	if failed != "" {
		// Impossible while the rows are locked (PostgreSQL) or the writer
		// is single (SQLite): the checks above saw these rows.
		return nil, fmt.Errorf("%w: %s", ErrBalanceRace, failed)
	}
	return out, nil
}

// plan is a validated spec.
type plan struct {
	id         string
	kind       Kind
	postings   []PostingSpec // a copy
	holdID     string
	reversesID string
	reference  string
	metadata   json.RawMessage // a copy
	toSuspense bool
}

func (p plan) ref() string {
	if p.holdID != "" {
		return p.holdID
	}
	return p.reversesID
}

// record is what the batch knows of a transfer it may refer to.
type record struct {
	kind     Kind
	postings []PostingSpec
	resolved bool // a hold that a POST or VOID resolved
	reversed bool
}

// state is an account during a batch: its balance row as read and as the
// batch has changed it so far.
type state struct {
	acct      store.LockedLedgerAccount
	read, cur store.LedgerBalance
	touched   bool
}

// validate checks a spec on its own and returns a plan that shares nothing
// with it.
func validate(spec TransferSpec) (plan, error) {
	p := plan{id: spec.ID, kind: spec.Kind, holdID: spec.HoldID, reversesID: spec.ReversesID, reference: spec.Reference,
		toSuspense: spec.ToSuspense}
	if p.kind == "" {
		p.kind = KindTransfer
	}
	if spec.Metadata != nil {
		if !json.Valid(spec.Metadata) {
			return plan{}, fmt.Errorf("%w: metadata is not valid JSON", ErrInvalidTransfer)
		}
		p.metadata = append(json.RawMessage(nil), spec.Metadata...)
	}
	switch p.kind {
	case KindTransfer, KindHold:
		if p.holdID != "" || p.reversesID != "" {
			return plan{}, fmt.Errorf("%w: a %s names no hold and reverses nothing", ErrInvalidTransfer, p.kind)
		}
		if err := validatePostings(spec.Postings); err != nil {
			return plan{}, err
		}
	case KindPost:
		if p.holdID == "" || p.reversesID != "" {
			return plan{}, fmt.Errorf("%w: a POST names the hold it posts, and only that", ErrInvalidTransfer)
		}
		if len(spec.Postings) > 0 {
			if err := validatePostings(spec.Postings); err != nil {
				return plan{}, err
			}
		}
	case KindVoid:
		if p.holdID == "" || p.reversesID != "" || len(spec.Postings) > 0 {
			return plan{}, fmt.Errorf("%w: a VOID names the hold it voids, and has no postings", ErrInvalidTransfer)
		}
	case KindReversal:
		if p.reversesID == "" || p.holdID != "" || len(spec.Postings) > 0 {
			return plan{}, fmt.Errorf("%w: a REVERSAL names the transfer it reverses, and has no postings", ErrInvalidTransfer)
		}
	default:
		return plan{}, fmt.Errorf("%w: unknown kind %q", ErrInvalidTransfer, spec.Kind)
	}
	p.postings = append([]PostingSpec(nil), spec.Postings...)
	return p, nil
}

// validatePostings checks the shape of a posting list: two or more, each
// account once, non-zero amounts, debits equal to credits per currency with no
// sum overflowing.
func validatePostings(ps []PostingSpec) error {
	if len(ps) < 2 {
		return ErrTooFewPostings
	}
	seen := make(map[string]bool, len(ps))
	type sums struct{ debits, credits int64 }
	per := map[string]*sums{}
	for _, p := range ps {
		if p.AccountID == "" || p.Currency == "" {
			return fmt.Errorf("%w: a posting needs an account and a currency", ErrInvalidTransfer)
		}
		if seen[p.AccountID] {
			return &AccountError{AccountID: p.AccountID, Err: ErrDuplicateAccount}
		}
		seen[p.AccountID] = true
		if p.Amount == 0 {
			return fmt.Errorf("%w: zero amount on %s", ErrInvalidAmount, p.AccountID)
		}
		if p.Amount > MaxAmount || p.Amount < -MaxAmount {
			return fmt.Errorf("%w: %d on %s", ErrAmountTooLarge, p.Amount, p.AccountID)
		}
		s := per[p.Currency]
		if s == nil {
			s = &sums{}
			per[p.Currency] = s
		}
		var ok bool
		if p.Amount > 0 {
			s.credits, ok = add(s.credits, p.Amount)
		} else {
			s.debits, ok = add(s.debits, -p.Amount)
		}
		if !ok {
			return fmt.Errorf("%w: the %s postings", ErrAmountOverflow, p.Currency)
		}
	}
	for cur, s := range per {
		if s.debits != s.credits {
			return fmt.Errorf("%w: %s debits %d, credits %d", ErrUnbalanced, cur, s.debits, s.credits)
		}
	}
	return nil
}

// step works out one transfer against the batch's state and applies it there.
func step(p plan, known map[string]*record, states map[string]*state, suspense map[string]string, now time.Time) (Transfer, error) {
	tr := Transfer{ID: p.id, Kind: p.kind, HoldID: p.holdID, ReversesID: p.reversesID, Reference: p.reference,
		Metadata: p.metadata, CreatedAt: now}
	// The balance effects: posted postings, pending ones, and released ones.
	var posted, pending, released []PostingSpec
	switch p.kind {
	case KindTransfer:
		posted = p.postings
	case KindHold:
		pending = p.postings
	case KindPost, KindVoid:
		hold, ok := known[p.holdID]
		switch {
		case !ok:
			return Transfer{}, fmt.Errorf("%w: %s", ErrTransferNotFound, p.holdID)
		case hold.kind != KindHold:
			return Transfer{}, fmt.Errorf("%w: %s is a %s", ErrNotAHold, p.holdID, hold.kind)
		case hold.resolved:
			return Transfer{}, fmt.Errorf("%w: %s", ErrHoldNotPending, p.holdID)
		}
		released = hold.postings
		if p.kind == KindPost {
			posted = hold.postings
			if len(p.postings) > 0 {
				if err := withinHold(p.postings, hold.postings); err != nil {
					return Transfer{}, err
				}
				posted = p.postings
			}
		}
		hold.resolved = true
	case KindReversal:
		orig, ok := known[p.reversesID]
		switch {
		case !ok:
			return Transfer{}, fmt.Errorf("%w: %s", ErrTransferNotFound, p.reversesID)
		case orig.kind != KindTransfer && orig.kind != KindPost && orig.kind != KindReversal:
			return Transfer{}, fmt.Errorf("%w: %s is a %s", ErrNotReversible, p.reversesID, orig.kind)
		case orig.reversed:
			return Transfer{}, fmt.Errorf("%w: %s", ErrAlreadyReversed, p.reversesID)
		}
		posted = make([]PostingSpec, len(orig.postings))
		for i, ps := range orig.postings {
			posted[i] = PostingSpec{AccountID: ps.AccountID, Currency: ps.Currency, Amount: -ps.Amount}
		}
		orig.reversed = true
	}

	// Credits to closed accounts: refused, or sent to suspense.
	var redirects []Redirect
	var err error
	if posted, redirects, err = closedCredits(p, posted, states, suspense, redirects); err != nil {
		return Transfer{}, err
	}
	if pending, redirects, err = closedCredits(p, pending, states, suspense, redirects); err != nil {
		return Transfer{}, err
	}
	tr.Redirects = redirects

	// Per account deltas, then the rules, then the new state.
	type delta struct{ posted, pendingDebits, pendingCredits int64 }
	deltas := map[string]*delta{}
	var order []string
	get := func(aid string) *delta {
		d := deltas[aid]
		if d == nil {
			d = &delta{}
			deltas[aid] = d
			order = append(order, aid)
		}
		return d
	}
	for _, ps := range append(append([]PostingSpec(nil), posted...), pending...) {
		st, ok := states[ps.AccountID]
		if !ok {
			return Transfer{}, &AccountError{AccountID: ps.AccountID, Err: ErrAccountNotFound}
		}
		if st.acct.Currency != ps.Currency {
			return Transfer{}, &AccountError{AccountID: ps.AccountID,
				Err: fmt.Errorf("%w: posting in %s, account in %s", ErrCurrencyMismatch, ps.Currency, st.acct.Currency)}
		}
	}
	for _, ps := range posted {
		get(ps.AccountID).posted = ps.Amount // at most one posting per account and list
	}
	for _, ps := range pending {
		if ps.Amount < 0 {
			get(ps.AccountID).pendingDebits = -ps.Amount
		} else {
			get(ps.AccountID).pendingCredits = ps.Amount
		}
	}
	for _, ps := range released {
		if _, ok := states[ps.AccountID]; !ok {
			return Transfer{}, &AccountError{AccountID: ps.AccountID, Err: ErrAccountNotFound}
		}
		d := get(ps.AccountID)
		if ps.Amount < 0 {
			d.pendingDebits += ps.Amount // releases -amount
		} else {
			d.pendingCredits -= ps.Amount
		}
	}
	next := make(map[string]store.LedgerBalance, len(order))
	for _, aid := range order {
		st, d := states[aid], deltas[aid]
		if st.acct.Hot {
			continue
		}
		b := st.cur
		var ok1, ok2, ok3 bool
		b.Posted, ok1 = add(b.Posted, d.posted)
		b.PendingDebits, ok2 = add(b.PendingDebits, d.pendingDebits)
		b.PendingCredits, ok3 = add(b.PendingCredits, d.pendingCredits)
		if !ok1 || !ok2 || !ok3 {
			return Transfer{}, &AccountError{AccountID: aid, Err: ErrAmountOverflow}
		}
		if b.PendingDebits < 0 || b.PendingCredits < 0 {
			return Transfer{}, fmt.Errorf("ledger: account %s would have negative pending amounts", aid)
		}
		if AccountKind(st.acct.Kind) == Internal {
			before, okb := sub(st.cur.Posted, st.cur.PendingDebits)
			after, oka := sub(b.Posted, b.PendingDebits)
			if !okb || !oka {
				return Transfer{}, &AccountError{AccountID: aid, Err: ErrAmountOverflow}
			}
			if after < 0 && after < before {
				return Transfer{}, &InsufficientFundsError{AccountID: aid, Available: before, Debit: before - after}
			}
		}
		next[aid] = b
	}
	for aid, b := range next {
		states[aid].cur = b
		states[aid].touched = true
	}

	// The stored postings.
	for _, ps := range posted {
		tr.Postings = append(tr.Postings, Posting{ID: id.New(PostingIDPrefix), TransferID: tr.ID, AccountID: ps.AccountID,
			Currency: ps.Currency, Amount: ps.Amount, CreatedAt: now})
	}
	for _, ps := range pending {
		tr.Postings = append(tr.Postings, Posting{ID: id.New(PostingIDPrefix), TransferID: tr.ID, AccountID: ps.AccountID,
			Currency: ps.Currency, Amount: ps.Amount, Pending: true, CreatedAt: now})
	}
	known[tr.ID] = &record{kind: tr.Kind, postings: append(append([]PostingSpec(nil), posted...), pending...)}
	return tr, nil
}

// lockSuspense returns, when a ToSuspense transfer of the batch touches a
// closed account, the suspense account of each closed account's currency
// (by currency), locked and added to states. The suspense rows are locked
// after the batch's others, out of the ascending order: a PostgreSQL
// deadlock this may rarely cause is retried by InTx.
func (s *Service) lockSuspense(ctx context.Context, tx *store.Tx, t store.Tenant, plans []plan, states map[string]*state) (map[string]string, error) {
	redirecting := false
	for _, p := range plans {
		redirecting = redirecting || p.toSuspense
	}
	if !redirecting || s.Suspense == nil {
		return nil, nil
	}
	out := map[string]string{}
	var ids []string
	for _, st := range states {
		cur := st.acct.Currency
		if !st.acct.Closed || out[cur] != "" {
			continue
		}
		aid, err := s.Suspense(ctx, tx, t, cur)
		if err != nil {
			return nil, err
		}
		out[cur] = aid
		if _, have := states[aid]; !have {
			ids = append(ids, aid)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	accts, err := tx.LockLedgerAccounts(ctx, t, ids)
	if err != nil {
		return nil, err
	}
	for _, aid := range ids {
		a, ok := accts[aid]
		if !ok || a.Hot || a.Balance == nil || a.Closed {
			return nil, fmt.Errorf("%w: suspense account %s is missing, hot or closed", ErrInvariant, aid)
		}
		states[aid] = &state{acct: a, read: *a.Balance, cur: *a.Balance}
	}
	return out, nil
}

// closedCredits checks a transfer's postings for credits to closed
// accounts: refused with ErrAccountClosed, unless the transfer goes to
// suspense, whose account (in the same currency) then takes the credit,
// merged with any posting the transfer already has on it.
func closedCredits(p plan, ps []PostingSpec, states map[string]*state, suspense map[string]string, redirects []Redirect) ([]PostingSpec, []Redirect, error) {
	var out []PostingSpec
	for i, ps1 := range ps {
		st := states[ps1.AccountID]
		if st == nil || !st.acct.Closed || ps1.Amount <= 0 {
			continue
		}
		to := suspense[ps1.Currency]
		if !p.toSuspense || to == "" {
			return nil, nil, &AccountError{AccountID: ps1.AccountID, Err: ErrAccountClosed}
		}
		if out == nil {
			out = append([]PostingSpec(nil), ps...)
		}
		out[i].AccountID = to
		redirects = append(redirects, Redirect{ClosedAccountID: ps1.AccountID, SuspenseAccountID: to,
			Currency: ps1.Currency, Amount: ps1.Amount})
	}
	if out == nil {
		return ps, redirects, nil
	}
	// Merge postings now on the same account; drop those that cancel out.
	merged := make([]PostingSpec, 0, len(out))
	at := map[string]int{}
	for _, ps1 := range out {
		if i, ok := at[ps1.AccountID]; ok {
			merged[i].Amount += ps1.Amount
			continue
		}
		at[ps1.AccountID] = len(merged)
		merged = append(merged, ps1)
	}
	kept := merged[:0]
	for _, ps1 := range merged {
		if ps1.Amount != 0 {
			kept = append(kept, ps1)
		}
	}
	return kept, redirects, nil
}

// withinHold checks posted amounts against a hold: only the hold's accounts,
// same currency and sign, each no larger.
func withinHold(post, hold []PostingSpec) error {
	held := make(map[string]PostingSpec, len(hold))
	for _, h := range hold {
		held[h.AccountID] = h
	}
	for _, p := range post {
		h, ok := held[p.AccountID]
		switch {
		case !ok:
			return &AccountError{AccountID: p.AccountID, Err: fmt.Errorf("%w: account not in the hold", ErrPostExceedsHold)}
		case h.Currency != p.Currency:
			return &AccountError{AccountID: p.AccountID, Err: ErrCurrencyMismatch}
		case (p.Amount < 0) != (h.Amount < 0), abs(p.Amount) > abs(h.Amount):
			return &AccountError{AccountID: p.AccountID,
				Err: fmt.Errorf("%w: %d against a hold of %d", ErrPostExceedsHold, p.Amount, h.Amount)}
		}
	}
	return nil
}

func add(a, b int64) (int64, bool) {
	c := a + b
	return c, (c > a) == (b > 0)
}

func sub(a, b int64) (int64, bool) {
	c := a - b
	return c, (c < a) == (b > 0)
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}
