package ledger_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The property test drives the ledger with random operations — transfers
// (two-leg, multi-leg, multi-currency, with fees), holds, full and partial
// posts, voids, reversals, invalid transfers and batches in which one member
// fails — and checks it against an independent in-memory model:
//
//   - the model predicts, for every operation, success or the exact error
//     and the failing batch member, and the ledger must agree;
//   - after every failed batch none of its transfers or postings exist;
//   - every 10 operations every balance row equals the model's balance and
//     no INTERNAL available balance is negative;
//   - every 2,500 operations and at the end: the ledger's row counts
//     (accounts, transfers, postings, and the sum of balance-row versions,
//     which moves on every balance update) equal the model's, so no failed
//     operation left anything behind; Audit passes (postings sum to zero per
//     transfer and currency, every balance row equals the sum of its
//     postings, no INTERNAL available balance is negative, balances sum to
//     zero per currency); and every account, hot ones included, has the
//     model's balance.
//
// PAYMENTS_LEDGER_SEED replays a seed; PAYMENTS_LEDGER_OPS changes the count.
// The engines run in parallel: they share nothing.
func TestProperty_10kRandomOps(t *testing.T) {
	ops := 10_000
	if testing.Short() {
		ops = 1_000
	}
	if s := os.Getenv("PAYMENTS_LEDGER_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			seed := rand.Uint64()
			if s := os.Getenv("PAYMENTS_LEDGER_SEED"); s != "" {
				seed, _ = strconv.ParseUint(s, 10, 64)
			}
			t.Logf("seed %d (replay with PAYMENTS_LEDGER_SEED=%d)", seed, seed)
			runProperty(t, e.Open(t), seed, ops)
		})
	}
}

func runProperty(t *testing.T, db *store.DB, seed uint64, ops int) {
	f := newFixture(t, db)
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), m: newModel(), f: f}
	g.setup(t)
	stats := map[string]int{}
	for op := 0; op < ops; op++ {
		name, batch := g.op()
		failAt, wantErr, failAccts := g.m.predict(batch)
		sent := g.someIDsLeftOut(batch)
		out, err := f.l.Commit(ctx, f.t, sent)
		switch {
		case failAt < 0 && err != nil:
			t.Fatalf("op %d (%s): unexpected error %v\nbatch %+v", op, name, err, batch)
		case failAt >= 0 && err == nil:
			t.Fatalf("op %d (%s): succeeded, model expected %v at %d\nbatch %+v", op, name, wantErr, failAt, batch)
		case failAt >= 0:
			var be *ledger.BatchError
			if !errors.Is(err, wantErr) || !errors.As(err, &be) || be.Index != failAt {
				t.Fatalf("op %d (%s): got %v, model expected %v at %d\nbatch %+v", op, name, err, wantErr, failAt, batch)
			}
			var ife *ledger.InsufficientFundsError
			if errors.As(err, &ife) && !slices.Contains(failAccts, ife.AccountID) {
				t.Fatalf("op %d (%s): insufficient funds on %s, model expected one of %v", op, name, ife.AccountID, failAccts)
			}
			if len(batch) > 1 {
				g.checkAbsent(t, op, sent)
				stats["failed batch"]++
			}
			stats["refused "+errName(wantErr)]++
		default:
			for i := range batch {
				if sent[i].ID == "" {
					batch[i].ID = out[i].ID // the model follows the ids the ledger chose
				}
			}
			g.m.commit(batch)
			stats[name]++
		}
		if op%10 == 9 {
			g.checkRows(t, op)
		}
		if op%2500 == 2499 {
			g.checkAll(t, op)
		}
	}
	g.checkAll(t, ops)
	c := f.counts(t)
	t.Logf("%d ops, %d transfers, %d postings: %v", ops, c.Transfers, c.Postings, stats)
	for _, must := range []string{"transfer", "hold", "post", "void", "reverse", "batch", "failed batch", "refused insufficient funds",
		"refused hold not pending", "refused already reversed"} {
		if stats[must] == 0 && ops >= 5000 {
			t.Errorf("no %q operation in %d: the generator is not covering the ledger", must, ops)
		}
	}
}

func errName(err error) string {
	switch {
	case errors.Is(err, ledger.ErrInsufficientFunds):
		return "insufficient funds"
	case errors.Is(err, ledger.ErrHoldNotPending):
		return "hold not pending"
	case errors.Is(err, ledger.ErrAlreadyReversed):
		return "already reversed"
	}
	return strings.TrimPrefix(err.Error(), "ledger: ")
}

// checkRows compares every balance row with the model.
func (g *gen) checkRows(t *testing.T, op int) {
	t.Helper()
	rows, err := g.f.db.Read().ListLedgerBalances(ctx, g.f.t)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range g.m.accts {
		row, ok := rows[a.id]
		if a.hot {
			if ok {
				t.Fatalf("op %d: hot account %s has a balance row", op, a.name)
			}
			continue
		}
		if !ok || row.Posted != a.posted || row.PendingDebits != a.pd || row.PendingCredits != a.pc {
			t.Fatalf("op %d: %s balance row %+v, model posted %d pending-%d pending+%d", op, a.name, row, a.posted, a.pd, a.pc)
		}
		if a.kind == ledger.Internal && row.Posted-row.PendingDebits < 0 {
			t.Fatalf("op %d: internal %s is negative: %+v", op, a.name, row)
		}
	}
}

// someIDsLeftOut copies a batch, leaving out (for the ledger to choose) half
// of the ids that no later member of the batch refers to.
func (g *gen) someIDsLeftOut(batch []ledger.TransferSpec) []ledger.TransferSpec {
	referenced := map[string]bool{}
	for _, s := range batch {
		referenced[s.HoldID], referenced[s.ReversesID] = true, true
	}
	out := slices.Clone(batch)
	for i := range out {
		if !referenced[out[i].ID] && g.r.IntN(2) == 0 {
			out[i].ID = ""
		}
	}
	return out
}

// checkAbsent checks a refused batch left none of its transfers or postings.
func (g *gen) checkAbsent(t *testing.T, op int, batch []ledger.TransferSpec) {
	t.Helper()
	var ids []string
	for _, s := range batch {
		if s.ID != "" {
			ids = append(ids, s.ID)
		}
	}
	q := g.f.db.Read()
	trs, err := q.LedgerTransfersByID(ctx, g.f.t, ids)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := q.LedgerPostingsOf(ctx, g.f.t, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 0 || len(ps) != 0 {
		t.Fatalf("op %d: refused batch left %d transfers and postings of %d", op, len(trs), len(ps))
	}
}

// checkAll audits the whole ledger and compares every account's balance,
// hot ones included, with the model.
func (g *gen) checkAll(t *testing.T, op int) {
	t.Helper()
	if err := g.f.l.Audit(ctx, g.f.t); err != nil {
		t.Fatalf("op %d: %v", op, err)
	}
	// Exactly the model's rows and balance updates: no failed operation left
	// anything behind.
	want := store.LedgerCounts{Accounts: int64(len(g.m.accts)), Transfers: int64(len(g.m.trs)), Postings: g.m.postings,
		BalanceVersions: g.m.versions}
	if c := g.f.counts(t); c != want {
		t.Fatalf("op %d: ledger counts %+v, model %+v", op, c, want)
	}
	g.checkRows(t, op)
	for _, a := range g.m.accts {
		b, err := g.f.l.Balance(ctx, g.f.t, a.id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Posted != a.posted || b.PendingDebits != a.pd || b.PendingCredits != a.pc || b.Available != a.posted-a.pd {
			t.Fatalf("op %d: %s balance %+v, model posted %d pending-%d pending+%d", op, a.name, b, a.posted, a.pd, a.pc)
		}
	}
}

// The model.

type mAcct struct {
	id, name, cur  string
	kind           ledger.AccountKind
	hot            bool
	posted, pd, pc int64
}

type mTr struct {
	kind               ledger.Kind
	postings           []ledger.PostingSpec
	resolved, reversed bool
}

type model struct {
	accts    map[string]*mAcct
	trs      map[string]*mTr
	holds    []string // every hold id
	pending  []string // the holds not yet posted or voided
	targets  []string // every transfer id
	postings int64    // how many postings the ledger should hold
	versions int64    // the sum of the balance rows' versions
}

func newModel() *model { return &model{accts: map[string]*mAcct{}, trs: map[string]*mTr{}} }

// predict works out a batch on a scratch copy: the index of the failing
// member (-1 if none), the error expected, and for insufficient funds the
// accounts that may be named.
func (m *model) predict(batch []ledger.TransferSpec) (int, error, []string) {
	for i, s := range batch {
		if err := shapeError(s); err != nil {
			return i, err, nil
		}
	}
	_, _, failAt, err, accts := m.run(batch)
	return failAt, err, accts
}

// commit applies a batch the ledger accepted.
func (m *model) commit(batch []ledger.TransferSpec) {
	bal, trs, failAt, err, _ := m.run(batch)
	if failAt >= 0 {
		panic(fmt.Sprintf("commit of a failing batch: %v", err))
	}
	for aid, b := range bal {
		*m.accts[aid] = b
		if !b.hot {
			m.versions++ // one balance-row update per account and batch
		}
	}
	for tid, tr := range trs {
		if tr.kind == ledger.KindHold && tr.resolved {
			m.pending = slices.DeleteFunc(m.pending, func(h string) bool { return h == tid })
		}
		if _, old := m.trs[tid]; !old {
			if tr.kind == ledger.KindHold {
				m.holds = append(m.holds, tid)
				if !tr.resolved {
					m.pending = append(m.pending, tid)
				}
			}
			m.targets = append(m.targets, tid)
			m.postings += int64(len(tr.postings))
		}
		m.trs[tid] = tr
	}
}

// shapeError is the validation of one spec on its own.
func shapeError(s ledger.TransferSpec) error {
	kind := s.Kind
	if kind == "" {
		kind = ledger.KindTransfer
	}
	needPostings := kind == ledger.KindTransfer || kind == ledger.KindHold || (kind == ledger.KindPost && len(s.Postings) > 0)
	if !needPostings {
		return nil
	}
	if len(s.Postings) < 2 {
		return ledger.ErrTooFewPostings
	}
	sums := map[string]int64{}
	seen := map[string]bool{}
	for _, p := range s.Postings {
		if seen[p.AccountID] {
			return ledger.ErrDuplicateAccount
		}
		seen[p.AccountID] = true
		if p.Amount == 0 {
			return ledger.ErrInvalidAmount
		}
		sums[p.Currency] += p.Amount
	}
	for _, v := range sums {
		if v != 0 {
			return ledger.ErrUnbalanced
		}
	}
	return nil
}

func (m *model) run(batch []ledger.TransferSpec) (map[string]mAcct, map[string]*mTr, int, error, []string) {
	bal := map[string]mAcct{} // the accounts the batch touches, as it leaves them
	get := func(aid string) mAcct {
		if b, ok := bal[aid]; ok {
			return b
		}
		return *m.accts[aid]
	}
	trs := map[string]*mTr{}
	lookup := func(tid string) (*mTr, bool) {
		if tr, ok := trs[tid]; ok {
			return tr, true
		}
		tr, ok := m.trs[tid]
		if !ok {
			return nil, false
		}
		cp := *tr
		trs[tid] = &cp
		return &cp, true
	}
	for i, s := range batch {
		kind := s.Kind
		if kind == "" {
			kind = ledger.KindTransfer
		}
		var posted, pending, released []ledger.PostingSpec
		switch kind {
		case ledger.KindTransfer:
			posted = s.Postings
		case ledger.KindHold:
			pending = s.Postings
		case ledger.KindPost, ledger.KindVoid:
			h, ok := lookup(s.HoldID)
			switch {
			case !ok:
				return nil, nil, i, ledger.ErrTransferNotFound, nil
			case h.kind != ledger.KindHold:
				return nil, nil, i, ledger.ErrNotAHold, nil
			case h.resolved:
				return nil, nil, i, ledger.ErrHoldNotPending, nil
			}
			released = h.postings
			if kind == ledger.KindPost {
				posted = h.postings
				if len(s.Postings) > 0 {
					posted = s.Postings
					for _, p := range s.Postings {
						j := slices.IndexFunc(h.postings, func(q ledger.PostingSpec) bool { return q.AccountID == p.AccountID })
						if j < 0 || (p.Amount < 0) != (h.postings[j].Amount < 0) || abs(p.Amount) > abs(h.postings[j].Amount) {
							return nil, nil, i, ledger.ErrPostExceedsHold, nil
						}
					}
				}
			}
			h.resolved = true
		case ledger.KindReversal:
			o, ok := lookup(s.ReversesID)
			switch {
			case !ok:
				return nil, nil, i, ledger.ErrTransferNotFound, nil
			case o.kind == ledger.KindHold || o.kind == ledger.KindVoid:
				return nil, nil, i, ledger.ErrNotReversible, nil
			case o.reversed:
				return nil, nil, i, ledger.ErrAlreadyReversed, nil
			}
			for _, p := range o.postings {
				posted = append(posted, ledger.PostingSpec{AccountID: p.AccountID, Currency: p.Currency, Amount: -p.Amount})
			}
			o.reversed = true
		}
		for _, p := range append(slices.Clone(posted), pending...) {
			a, ok := m.accts[p.AccountID]
			if !ok {
				return nil, nil, i, ledger.ErrAccountNotFound, nil
			}
			if a.cur != p.Currency {
				return nil, nil, i, ledger.ErrCurrencyMismatch, nil
			}
		}
		next := map[string]mAcct{}
		cur := func(aid string) mAcct {
			if b, ok := next[aid]; ok {
				return b
			}
			return get(aid)
		}
		for _, p := range released {
			b := cur(p.AccountID)
			if p.Amount < 0 {
				b.pd += p.Amount
			} else {
				b.pc -= p.Amount
			}
			next[p.AccountID] = b
		}
		for _, p := range posted {
			b := cur(p.AccountID)
			b.posted += p.Amount
			next[p.AccountID] = b
		}
		for _, p := range pending {
			b := cur(p.AccountID)
			if p.Amount < 0 {
				b.pd -= p.Amount
			} else {
				b.pc += p.Amount
			}
			next[p.AccountID] = b
		}
		var short []string
		for aid, b := range next {
			old := get(aid)
			if b.kind == ledger.Internal && b.posted-b.pd < 0 && b.posted-b.pd < old.posted-old.pd {
				short = append(short, aid)
			}
		}
		if len(short) > 0 {
			return nil, nil, i, ledger.ErrInsufficientFunds, short
		}
		for aid, b := range next {
			bal[aid] = b
		}
		var all []ledger.PostingSpec
		all = append(append(all, posted...), pending...)
		trs[s.ID] = &mTr{kind: kind, postings: all}
	}
	return bal, trs, -1, nil, nil
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// The generator.

var propCurrencies = []string{"USD", "EUR", "JPY"}

type gen struct {
	r        *rand.Rand
	m        *model
	f        *fixture
	internal map[string][]string          // currency -> INTERNAL account ids
	sys      map[string]map[string]string // currency -> code -> account id
}

func (g *gen) setup(t *testing.T) {
	g.internal, g.sys = map[string][]string{}, map[string]map[string]string{}
	add := func(a ledger.Account, name string) {
		g.m.accts[a.ID] = &mAcct{id: a.ID, name: name, cur: a.Currency, kind: a.Kind, hot: a.Hot}
	}
	for _, cur := range propCurrencies {
		g.sys[cur] = map[string]string{}
		for _, code := range []string{ledger.CodeWorld, ledger.CodeClearing, ledger.CodeServiceFees, ledger.CodeFX, ledger.CodeCardHolds} {
			a := g.f.system(t, code, cur)
			g.sys[cur][code] = a.ID
			add(a, cur+"/"+code)
		}
		for i := 0; i < 4; i++ {
			a := g.f.internal(t, cur)
			g.internal[cur] = append(g.internal[cur], a.ID)
			add(a, fmt.Sprintf("%s/internal%d", cur, i))
		}
	}
}

func (g *gen) pick(ids []string) string { return ids[g.r.IntN(len(ids))] }

func (g *gen) cur() string { return propCurrencies[g.r.IntN(len(propCurrencies))] }

// amount is a debit size for account aid: usually within its available
// balance, sometimes beyond it.
func (g *gen) amount(aid string) int64 {
	a := g.m.accts[aid]
	avail := a.posted - a.pd
	if avail < 1 || g.r.IntN(4) == 0 {
		return 1 + g.r.Int64N(max(avail, 1000)*2)
	}
	return 1 + g.r.Int64N(avail)
}

func tid() string { return id.New(ledger.TransferIDPrefix) }

func leg(aid, cur string, amount int64) ledger.PostingSpec {
	return ledger.PostingSpec{AccountID: aid, Currency: cur, Amount: amount}
}

// op returns one operation: a batch of one or more specs.
func (g *gen) op() (string, []ledger.TransferSpec) {
	switch n := g.r.IntN(100); {
	case n < 12:
		return "batch", g.batch()
	case n < 16:
		return "invalid", []ledger.TransferSpec{g.invalid()}
	default:
		name, s := g.spec(nil)
		return name, s
	}
}

// spec returns a random operation of one or two specs; inBatch lists the
// ids of transfers created earlier in the same batch (for references).
func (g *gen) spec(inBatch []ledger.TransferSpec) (string, []ledger.TransferSpec) {
	cur := g.cur()
	in, sys := g.internal[cur], g.sys[cur]
	a, b := g.pick(in), g.pick(in)
	for b == a {
		b = g.pick(in)
	}
	switch n := g.r.IntN(100); {
	case n < 12: // deposit from the world
		x := 1 + g.r.Int64N(100_000)
		return "deposit", []ledger.TransferSpec{{ID: tid(), Postings: []ledger.PostingSpec{
			leg(sys[ledger.CodeWorld], cur, -x), leg(a, cur, x)}}}
	case n < 30: // A -> B, sometimes with a fee
		x := g.amount(a)
		ps := []ledger.PostingSpec{leg(a, cur, -x), leg(b, cur, x)}
		if fee := x / 50; fee > 0 && g.r.IntN(2) == 0 {
			ps[1].Amount -= fee
			ps = append(ps, leg(sys[ledger.CodeServiceFees], cur, fee))
		}
		return "transfer", []ledger.TransferSpec{{ID: tid(), Postings: ps}}
	case n < 36: // one debit, several credits
		x := g.amount(a)
		c := g.pick(in)
		for c == a || c == b {
			c = g.pick(in)
		}
		p1 := g.r.Int64N(x + 1)
		ps := []ledger.PostingSpec{leg(a, cur, -x), leg(b, cur, p1), leg(c, cur, x-p1), leg(sys[ledger.CodeClearing], cur, 0)}
		ps = slices.DeleteFunc(ps, func(p ledger.PostingSpec) bool { return p.Amount == 0 })
		if len(ps) < 2 {
			ps = []ledger.PostingSpec{leg(a, cur, -x), leg(b, cur, x)}
		}
		return "transfer", []ledger.TransferSpec{{ID: tid(), Postings: ps}}
	case n < 42: // FX: A in one currency to B in another through the FX position
		cur2 := g.cur()
		for cur2 == cur {
			cur2 = g.cur()
		}
		x := g.amount(a)
		y := 1 + g.r.Int64N(x*2)
		b2 := g.pick(g.internal[cur2])
		return "transfer", []ledger.TransferSpec{{ID: tid(), Postings: []ledger.PostingSpec{
			leg(a, cur, -x), leg(sys[ledger.CodeFX], cur, x), leg(g.sys[cur2][ledger.CodeFX], cur2, -y), leg(b2, cur2, y)}}}
	case n < 46: // payout: A -> world, or card holds -> A (system may go negative)
		if g.r.IntN(2) == 0 {
			x := g.amount(a)
			return "transfer", []ledger.TransferSpec{{ID: tid(), Postings: []ledger.PostingSpec{leg(a, cur, -x), leg(sys[ledger.CodeWorld], cur, x)}}}
		}
		x := 1 + g.r.Int64N(5000)
		return "transfer", []ledger.TransferSpec{{ID: tid(), Postings: []ledger.PostingSpec{leg(sys[ledger.CodeCardHolds], cur, -x), leg(a, cur, x)}}}
	case n < 62: // hold
		to := []string{b, sys[ledger.CodeClearing], sys[ledger.CodeCardHolds]}[g.r.IntN(3)]
		x := g.amount(a)
		hold := ledger.TransferSpec{ID: tid(), Kind: ledger.KindHold, Postings: []ledger.PostingSpec{leg(a, cur, -x), leg(to, cur, x)}}
		if g.r.IntN(8) == 0 { // a hold and its resolution in one batch
			return "hold", []ledger.TransferSpec{hold, {ID: tid(), Kind: []ledger.Kind{ledger.KindPost, ledger.KindVoid}[g.r.IntN(2)], HoldID: hold.ID}}
		}
		return "hold", []ledger.TransferSpec{hold}
	case n < 76: // post a hold, fully or partly
		h, ok := g.hold(inBatch)
		if !ok {
			return g.spec(inBatch)
		}
		s := ledger.TransferSpec{ID: tid(), Kind: ledger.KindPost, HoldID: h}
		if hp := g.holdPostings(h, inBatch); g.r.IntN(3) == 0 && len(hp) == 2 {
			x := abs(hp[0].Amount)
			part := 1 + g.r.Int64N(x)
			if g.r.IntN(10) == 0 {
				part = x + 1 // beyond the hold
			}
			s.Postings = []ledger.PostingSpec{leg(hp[0].AccountID, hp[0].Currency, sign(hp[0].Amount)*part),
				leg(hp[1].AccountID, hp[1].Currency, sign(hp[1].Amount)*part)}
		}
		return "post", []ledger.TransferSpec{s}
	case n < 86: // void a hold
		h, ok := g.hold(inBatch)
		if !ok {
			return g.spec(inBatch)
		}
		return "void", []ledger.TransferSpec{{ID: tid(), Kind: ledger.KindVoid, HoldID: h}}
	default: // reverse something
		var ids []string
		for _, s := range inBatch {
			ids = append(ids, s.ID)
		}
		if len(g.m.targets) == 0 && len(ids) == 0 {
			return g.spec(inBatch)
		}
		target := ""
		if len(ids) > 0 && g.r.IntN(3) == 0 {
			target = g.pick(ids)
		} else if len(g.m.targets) > 0 {
			// Mostly recent transfers, sometimes any.
			k := len(g.m.targets)
			if g.r.IntN(2) == 0 {
				target = g.m.targets[k-1-g.r.IntN(min(k, 20))]
			} else {
				target = g.pick(g.m.targets)
			}
		} else {
			target = g.pick(ids)
		}
		return "reverse", []ledger.TransferSpec{{ID: tid(), Kind: ledger.KindReversal, ReversesID: target}}
	}
}

func sign(a int64) int64 {
	if a < 0 {
		return -1
	}
	return 1
}

// hold picks a hold: mostly a pending one, sometimes any (to provoke
// ErrHoldNotPending), or one earlier in the batch.
func (g *gen) hold(inBatch []ledger.TransferSpec) (string, bool) {
	var batchHolds []string
	for _, s := range inBatch {
		if s.Kind == ledger.KindHold {
			batchHolds = append(batchHolds, s.ID)
		}
	}
	if len(batchHolds) > 0 && g.r.IntN(2) == 0 {
		return g.pick(batchHolds), true
	}
	if len(g.m.holds) == 0 {
		return "", false
	}
	if len(g.m.pending) > 0 && g.r.IntN(5) > 0 {
		return g.pick(g.m.pending), true
	}
	return g.pick(g.m.holds), true
}

func (g *gen) holdPostings(h string, inBatch []ledger.TransferSpec) []ledger.PostingSpec {
	if tr, ok := g.m.trs[h]; ok {
		return tr.postings
	}
	for _, s := range inBatch {
		if s.ID == h {
			return s.Postings
		}
	}
	return nil
}

// batch is 2 to 8 operations in one transaction; half the time one member
// is made to fail (invalid, unknown account or overdraft), which must leave
// nothing behind.
func (g *gen) batch() []ledger.TransferSpec {
	// Members that succeed on their own (by the model), so that whole
	// batches commit too.
	var out []ledger.TransferSpec
	for n, tries := 2+g.r.IntN(7), 0; len(out) < n && tries < 50; tries++ {
		_, s := g.spec(out)
		if failAt, _, _ := g.m.predict(append(slices.Clone(out), s...)); failAt < 0 {
			out = append(out, s...)
		}
	}
	if len(out) == 0 {
		_, out = g.spec(nil)
	}
	if g.r.IntN(2) == 0 {
		bad := g.invalid()
		if g.r.IntN(2) == 0 { // an overdraft instead
			cur := g.cur()
			a, b := g.pick(g.internal[cur]), g.sys[cur][ledger.CodeWorld]
			x := g.m.accts[a].posted + 1_000_000_000
			bad = ledger.TransferSpec{ID: tid(), Postings: []ledger.PostingSpec{leg(a, cur, -x), leg(b, cur, x)}}
		}
		i := g.r.IntN(len(out) + 1)
		out = slices.Insert(out, i, bad)
	}
	return out
}

// invalid is a transfer the ledger must refuse whatever the balances.
func (g *gen) invalid() ledger.TransferSpec {
	cur := g.cur()
	a, b := g.pick(g.internal[cur]), g.sys[cur][ledger.CodeWorld]
	s := ledger.TransferSpec{ID: tid(), Postings: []ledger.PostingSpec{leg(b, cur, -10), leg(a, cur, 10)}}
	switch g.r.IntN(6) {
	case 0:
		s.Postings[1].Amount = 9 // unbalanced
	case 1:
		s.Postings = s.Postings[:1] // one leg
	case 2:
		s.Postings = append(s.Postings, leg(a, cur, 0)) // zero amount (and a duplicate account)
		s.Postings[2].AccountID = g.sys[cur][ledger.CodeClearing]
	case 3:
		other := g.cur()
		for other == cur {
			other = g.cur()
		}
		s.Postings[0].Currency, s.Postings[1].Currency = other, other // currency mismatch
	case 4:
		s.Postings[1].AccountID = id.New(ledger.AccountIDPrefix) // unknown account
	case 5:
		s.Postings[1].AccountID = b // same account twice
	}
	return s
}
