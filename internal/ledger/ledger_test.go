package ledger_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

func TestCreateAccount_Rules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		for name, spec := range map[string]ledger.AccountSpec{
			"unknown currency": {Currency: "XXX", Kind: ledger.Internal},
			"no currency":      {Kind: ledger.Internal},
			"unknown kind":     {Currency: "USD", Kind: "CUSTOMER"},
			"hot internal":     {Currency: "USD", Kind: ledger.Internal, Hot: true},
		} {
			if _, err := f.l.CreateAccount(ctx, f.t, spec); !errors.Is(err, ledger.ErrInvalidAccount) {
				t.Errorf("%s: got %v, want ErrInvalidAccount", name, err)
			}
		}
		a, err := f.l.CreateAccount(ctx, f.t, ledger.AccountSpec{ID: "InternalAccount:x", Currency: "USD", Kind: ledger.Internal})
		if err != nil || a.ID != "InternalAccount:x" || a.Kind != ledger.Internal || a.Hot {
			t.Fatalf("create = %+v, %v", a, err)
		}
		if _, err := f.l.CreateAccount(ctx, f.t, ledger.AccountSpec{ID: a.ID, Currency: "USD", Kind: ledger.Internal}); !errors.Is(err, ledger.ErrAccountExists) {
			t.Fatalf("same id: got %v, want ErrAccountExists", err)
		}
		got, err := f.l.GetAccount(ctx, f.t, a.ID)
		if err != nil || got != a {
			t.Fatalf("get = %+v, %v; want %+v", got, err, a)
		}

		// Codes are unique per tenant and currency.
		sys := ledger.AccountSpec{Currency: "USD", Kind: ledger.System, Code: "OPS"}
		if _, err := f.l.CreateAccount(ctx, f.t, sys); err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.CreateAccount(ctx, f.t, sys); !errors.Is(err, ledger.ErrAccountExists) {
			t.Fatalf("same code: got %v, want ErrAccountExists", err)
		}
		sys.Currency = "EUR"
		if _, err := f.l.CreateAccount(ctx, f.t, sys); err != nil {
			t.Fatalf("same code, other currency: %v", err)
		}

		// SystemAccount is get-or-create, hot for world/clearing/fees/FX.
		w1 := f.system(t, ledger.CodeWorld, "USD")
		w2 := f.system(t, ledger.CodeWorld, "USD")
		if w1.ID != w2.ID || !w1.Hot || w1.Kind != ledger.System {
			t.Fatalf("world accounts %+v / %+v", w1, w2)
		}
		for code, hot := range map[string]bool{ledger.CodeClearing: true, "CLEARING_ACH": true, ledger.CodeServiceFees: true,
			ledger.CodePlatformFees: true, ledger.CodeFX: true, ledger.CodeCardHolds: false} {
			if a := f.system(t, code, "USD"); a.Hot != hot {
				t.Errorf("%s hot = %v, want %v", code, a.Hot, hot)
			}
		}
		f.audit(t) // checks hot accounts have no balance row and the others do
	})
}

func TestTenancy_AccountsAndTransfersAreScoped(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		other := &fixture{db: db, l: f.l, t: store.Tenant{PlatformID: f.t.PlatformID, Env: store.EnvProduction}}
		a := f.internal(t, "USD")
		tr := f.fund(t, a, 100)
		b := other.internal(t, "USD")
		if _, err := other.l.GetAccount(ctx, other.t, a.ID); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("other env reads account: %v", err)
		}
		if _, err := other.l.Transfer(ctx, other.t, mv(a, b, 10), ""); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("other env moves account: %v", err)
		}
		if _, err := other.l.Reverse(ctx, other.t, tr.ID); !errors.Is(err, ledger.ErrTransferNotFound) {
			t.Fatalf("other env reverses transfer: %v", err)
		}
		if _, err := other.l.Balance(ctx, other.t, a.ID); !errors.Is(err, ledger.ErrAccountNotFound) {
			t.Fatalf("other env reads balance: %v", err)
		}
		f.audit(t)
		other.audit(t)
	})
}

func TestTransfer_Validation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		e := f.internal(t, "EUR")
		w, we := f.system(t, ledger.CodeWorld, "USD"), f.system(t, ledger.CodeWorld, "EUR")
		f.fund(t, a, 1000)
		f.fund(t, e, 1000)
		before := f.counts(t)
		cases := []struct {
			name string
			spec ledger.TransferSpec
			want error
		}{
			{"one posting", ledger.TransferSpec{Postings: mv(a, b, 5)[:1]}, ledger.ErrTooFewPostings},
			{"no postings", ledger.TransferSpec{}, ledger.ErrTooFewPostings},
			{"unbalanced", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: a.ID, Currency: "USD", Amount: -5}, {AccountID: b.ID, Currency: "USD", Amount: 4}}}, ledger.ErrUnbalanced},
			{"balanced overall but not per currency", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: a.ID, Currency: "USD", Amount: -5}, {AccountID: e.ID, Currency: "EUR", Amount: 5}}}, ledger.ErrUnbalanced},
			{"zero amount", ledger.TransferSpec{Postings: append(mv(a, b, 5), ledger.PostingSpec{AccountID: w.ID, Currency: "USD"})},
				ledger.ErrInvalidAmount},
			{"min int64", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: w.ID, Currency: "USD", Amount: math.MinInt64}, {AccountID: a.ID, Currency: "USD", Amount: 1}}}, ledger.ErrAmountTooLarge},
			{"above MaxAmount", ledger.TransferSpec{Postings: mv(w, a, ledger.MaxAmount+1)}, ledger.ErrAmountTooLarge},
			{"sum overflows", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: a.ID, Currency: "USD", Amount: math.MaxInt64}, {AccountID: b.ID, Currency: "USD", Amount: 1},
				{AccountID: w.ID, Currency: "USD", Amount: math.MinInt64 + 1}}}, ledger.ErrAmountTooLarge},
			{"account twice", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: a.ID, Currency: "USD", Amount: -5}, {AccountID: a.ID, Currency: "USD", Amount: 5}}}, ledger.ErrDuplicateAccount},
			{"currency mismatch", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: a.ID, Currency: "EUR", Amount: -5}, {AccountID: we.ID, Currency: "EUR", Amount: 5}}}, ledger.ErrCurrencyMismatch},
			{"unknown account", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{AccountID: a.ID, Currency: "USD", Amount: -5}, {AccountID: "LedgerAccount:nope", Currency: "USD", Amount: 5}}}, ledger.ErrAccountNotFound},
			{"no account id", ledger.TransferSpec{Postings: []ledger.PostingSpec{
				{Currency: "USD", Amount: -5}, {AccountID: b.ID, Currency: "USD", Amount: 5}}}, ledger.ErrInvalidTransfer},
			{"unknown kind", ledger.TransferSpec{Kind: "MAGIC", Postings: mv(a, b, 5)}, ledger.ErrInvalidTransfer},
			{"transfer naming a hold", ledger.TransferSpec{Postings: mv(a, b, 5), HoldID: "x"}, ledger.ErrInvalidTransfer},
			{"void with postings", ledger.TransferSpec{Kind: ledger.KindVoid, HoldID: "x", Postings: mv(a, b, 5)}, ledger.ErrInvalidTransfer},
			{"post without hold", ledger.TransferSpec{Kind: ledger.KindPost}, ledger.ErrInvalidTransfer},
			{"reversal without target", ledger.TransferSpec{Kind: ledger.KindReversal}, ledger.ErrInvalidTransfer},
			{"bad metadata", ledger.TransferSpec{Postings: mv(a, b, 5), Metadata: json.RawMessage(`{"a":`)}, ledger.ErrInvalidTransfer},
			{"unknown reversal target", ledger.TransferSpec{Kind: ledger.KindReversal, ReversesID: "LedgerTransfer:nope"}, ledger.ErrTransferNotFound},
		}
		for _, c := range cases {
			_, err := f.l.Commit(ctx, f.t, []ledger.TransferSpec{c.spec})
			var be *ledger.BatchError
			if !errors.Is(err, c.want) || !errors.As(err, &be) || be.Index != 0 {
				t.Errorf("%s: got %v, want %v in a BatchError", c.name, err, c.want)
			}
		}
		var ae *ledger.AccountError
		_, err := f.l.Transfer(ctx, f.t, []ledger.PostingSpec{{AccountID: a.ID, Currency: "EUR", Amount: -5}, {AccountID: we.ID, Currency: "EUR", Amount: 5}}, "")
		if !errors.As(err, &ae) || ae.AccountID != a.ID {
			t.Fatalf("currency mismatch names %v", err)
		}
		if after := f.counts(t); after != before {
			t.Fatalf("refused transfers wrote rows: %+v -> %+v", before, after)
		}
		f.audit(t)
	})
}

func TestTransfer_ValidationDoesNotMutateInput(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, a, 100)
		batch := []ledger.TransferSpec{
			{Postings: []ledger.PostingSpec{{AccountID: b.ID, Currency: "USD", Amount: 40}, {AccountID: a.ID, Currency: "USD", Amount: -40}},
				Metadata: json.RawMessage(`{"k": "v"}`)},
			{Postings: mv(a, b, 10), Kind: ledger.KindHold},
		}
		failing := append(append([]ledger.TransferSpec(nil), batch...), ledger.TransferSpec{Postings: mv(a, b, 1000)})
		snapshot := func(bs []ledger.TransferSpec) []ledger.TransferSpec {
			out := make([]ledger.TransferSpec, len(bs))
			for i, s := range bs {
				out[i] = s
				out[i].Postings = append([]ledger.PostingSpec(nil), s.Postings...)
				out[i].Metadata = append(json.RawMessage(nil), s.Metadata...)
			}
			return out
		}
		want := snapshot(failing)
		if _, err := f.l.Commit(ctx, f.t, failing); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("got %v", err)
		}
		if !reflect.DeepEqual(snapshot(failing), want) {
			t.Fatal("a refused batch changed its input")
		}
		want = snapshot(batch)
		out, err := f.l.Commit(ctx, f.t, batch)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(snapshot(batch), want) {
			t.Fatal("a committed batch changed its input")
		}
		if batch[0].ID != "" || batch[0].Kind != "" {
			t.Fatal("defaults were written into the input")
		}
		out[0].Metadata[0] = 'X' // the result shares nothing with the input
		if string(batch[0].Metadata) != `{"k": "v"}` {
			t.Fatal("result aliases the input's metadata")
		}
		got, err := f.l.GetTransfer(ctx, f.t, out[0].ID)
		if err != nil || got.Kind != ledger.KindTransfer || string(got.Metadata) != `{"k": "v"}` || len(got.Postings) != 2 ||
			got.Postings[0].AccountID != b.ID || got.Postings[0].Amount != 40 || got.Postings[1].Amount != -40 {
			t.Fatalf("stored transfer %+v, %v", got, err)
		}
		f.audit(t)
	})
}

func TestInternalAccount_NeverNegative(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, a, 100)
		_, err := f.l.Transfer(ctx, f.t, mv(a, b, 101), "")
		var ife *ledger.InsufficientFundsError
		if !errors.Is(err, ledger.ErrInsufficientFunds) || !errors.As(err, &ife) || ife.AccountID != a.ID || ife.Available != 100 || ife.Debit != 101 {
			t.Fatalf("overdraft: got %v", err)
		}
		if _, err := f.l.Transfer(ctx, f.t, mv(a, b, 100), ""); err != nil {
			t.Fatalf("spending the exact balance: %v", err)
		}
		f.wantBalance(t, a, 0, 0, 0)
		f.wantBalance(t, b, 100, 0, 0)
		if _, err := f.l.Transfer(ctx, f.t, mv(a, b, 1), ""); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("debit of an empty account: %v", err)
		}
		// System accounts may go negative, hot or not.
		holds := f.system(t, ledger.CodeCardHolds, "USD")
		if _, err := f.l.Transfer(ctx, f.t, mv(holds, b, 50), ""); err != nil {
			t.Fatal(err)
		}
		f.wantBalance(t, holds, -50, 0, 0)
		f.wantBalance(t, f.system(t, ledger.CodeWorld, "USD"), -100, 0, 0)
		f.audit(t)
	})
}

// No posting is above ledger.MaxAmount, yet sums over many postings pass
// int64: WORLD, hot, is the sum of every deposit. 9,300 deposits of
// MaxAmount take it below math.MinInt64; the ten accounts they went to
// hold 9.3e17 each. The audit still sums exactly and finds the ledger clean
// (it failed with integer overflow / bigint out of range), and WORLD's
// balance, which int64 cannot hold, is a clear ErrAmountOverflow.
func TestBalance_HotSumsPastInt64(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		w := f.system(t, ledger.CodeWorld, "USD")
		accts := make([]ledger.Account, 10)
		for i := range accts {
			accts[i] = f.internal(t, "USD")
		}
		const deposits, perBatch = 9300, 300
		for done := 0; done < deposits; done += perBatch {
			batch := make([]ledger.TransferSpec, perBatch)
			for i := range batch {
				batch[i] = ledger.TransferSpec{Postings: mv(w, accts[(done+i)%len(accts)], ledger.MaxAmount)}
			}
			if _, err := f.l.Commit(ctx, f.t, batch); err != nil {
				t.Fatal(err)
			}
		}
		f.audit(t)
		for _, a := range accts {
			f.wantBalance(t, a, deposits/10*ledger.MaxAmount, 0, 0)
		}
		if _, err := f.l.Balance(ctx, f.t, w.ID); !errors.Is(err, ledger.ErrAmountOverflow) {
			t.Fatalf("WORLD's balance below MinInt64: %v; want ErrAmountOverflow", err)
		}
		// Moving money back brings WORLD within range again.
		var back []ledger.TransferSpec
		for i := range 100 {
			back = append(back, ledger.TransferSpec{Postings: mv(accts[i%len(accts)], w, ledger.MaxAmount)})
		}
		if _, err := f.l.Commit(ctx, f.t, back); err != nil {
			t.Fatal(err)
		}
		f.wantBalance(t, w, -(deposits-100)*ledger.MaxAmount, 0, 0)
		f.audit(t)
	})
}

func TestHold_ReservesAvailableNotPosted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, a, 100)
		h, err := f.l.Hold(ctx, f.t, mv(a, b, 30), "card auth")
		if err != nil {
			t.Fatal(err)
		}
		if h.Kind != ledger.KindHold || len(h.Postings) != 2 || !h.Postings[0].Pending || !h.Postings[1].Pending {
			t.Fatalf("hold = %+v", h)
		}
		f.wantBalance(t, a, 100, 30, 0) // available 70
		f.wantBalance(t, b, 0, 0, 30)   // nothing available yet
		if _, err := f.l.Hold(ctx, f.t, mv(a, b, 71), ""); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("hold beyond available: %v", err)
		}
		if _, err := f.l.Transfer(ctx, f.t, mv(a, b, 71), ""); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("transfer beyond available: %v", err)
		}
		if _, err := f.l.Transfer(ctx, f.t, mv(b, a, 1), ""); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("pending credits are not available: %v", err)
		}
		if _, err := f.l.Transfer(ctx, f.t, mv(a, b, 70), ""); err != nil {
			t.Fatal(err)
		}
		f.wantBalance(t, a, 30, 30, 0)
		f.audit(t)
	})
}

func TestHold_PostVoidExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		clearing := f.system(t, ledger.CodeClearing, "USD")
		f.fund(t, a, 100)

		// Post in full.
		h1, err := f.l.Hold(ctx, f.t, mv(a, b, 30), "")
		if err != nil {
			t.Fatal(err)
		}
		p1, err := f.l.Post(ctx, f.t, h1.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p1.Kind != ledger.KindPost || p1.HoldID != h1.ID || len(p1.Postings) != 2 || p1.Postings[0].Pending || p1.Postings[0].Amount != -30 {
			t.Fatalf("post = %+v", p1)
		}
		f.wantBalance(t, a, 70, 0, 0)
		f.wantBalance(t, b, 30, 0, 0)
		if _, err := f.l.Post(ctx, f.t, h1.ID, nil); !errors.Is(err, ledger.ErrHoldNotPending) {
			t.Fatalf("second post: %v", err)
		}
		if _, err := f.l.Void(ctx, f.t, h1.ID); !errors.Is(err, ledger.ErrHoldNotPending) {
			t.Fatalf("void after post: %v", err)
		}
		got, err := f.l.GetTransfer(ctx, f.t, h1.ID)
		if err != nil || got.ResolvedBy != p1.ID {
			t.Fatalf("hold resolved by %q, %v", got.ResolvedBy, err)
		}

		// Void releases everything.
		h2, err := f.l.Hold(ctx, f.t, mv(a, clearing, 50), "payout")
		if err != nil {
			t.Fatal(err)
		}
		f.wantBalance(t, a, 70, 50, 0)
		f.wantBalance(t, clearing, 0, 0, 50)
		v, err := f.l.Void(ctx, f.t, h2.ID)
		if err != nil || v.Kind != ledger.KindVoid || len(v.Postings) != 0 {
			t.Fatalf("void = %+v, %v", v, err)
		}
		f.wantBalance(t, a, 70, 0, 0)
		f.wantBalance(t, clearing, 0, 0, 0)
		if _, err := f.l.Post(ctx, f.t, h2.ID, nil); !errors.Is(err, ledger.ErrHoldNotPending) {
			t.Fatalf("post after void: %v", err)
		}
		if _, err := f.l.Void(ctx, f.t, h2.ID); !errors.Is(err, ledger.ErrHoldNotPending) {
			t.Fatalf("second void: %v", err)
		}

		// Only holds are posted or voided.
		if _, err := f.l.Post(ctx, f.t, p1.ID, nil); !errors.Is(err, ledger.ErrNotAHold) {
			t.Fatalf("post a post: %v", err)
		}
		if _, err := f.l.Void(ctx, f.t, "LedgerTransfer:nope"); !errors.Is(err, ledger.ErrTransferNotFound) {
			t.Fatalf("void unknown: %v", err)
		}
		// A hold cannot be reversed (void it) and a void has nothing to reverse.
		h3, err := f.l.Hold(ctx, f.t, mv(a, b, 1), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.Reverse(ctx, f.t, h3.ID); !errors.Is(err, ledger.ErrNotReversible) {
			t.Fatalf("reverse a hold: %v", err)
		}
		if _, err := f.l.Reverse(ctx, f.t, v.ID); !errors.Is(err, ledger.ErrNotReversible) {
			t.Fatalf("reverse a void: %v", err)
		}
		f.audit(t)
	})
}

func TestHold_PartialPost(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		fees := f.system(t, ledger.CodeServiceFees, "USD")
		f.fund(t, a, 100)
		hold := []ledger.PostingSpec{
			{AccountID: a.ID, Currency: "USD", Amount: -60},
			{AccountID: b.ID, Currency: "USD", Amount: 55},
			{AccountID: fees.ID, Currency: "USD", Amount: 5},
		}
		h, err := f.l.Hold(ctx, f.t, hold, "")
		if err != nil {
			t.Fatal(err)
		}
		for name, post := range map[string][]ledger.PostingSpec{
			"larger": {{AccountID: a.ID, Currency: "USD", Amount: -61}, {AccountID: b.ID, Currency: "USD", Amount: 61}},
			"sign":   {{AccountID: a.ID, Currency: "USD", Amount: 10}, {AccountID: b.ID, Currency: "USD", Amount: -10}},
			"foreign": {{AccountID: a.ID, Currency: "USD", Amount: -10},
				{AccountID: f.system(t, ledger.CodeWorld, "USD").ID, Currency: "USD", Amount: 10}},
		} {
			if _, err := f.l.Post(ctx, f.t, h.ID, post); !errors.Is(err, ledger.ErrPostExceedsHold) {
				t.Errorf("%s: got %v, want ErrPostExceedsHold", name, err)
			}
		}
		if _, err := f.l.Post(ctx, f.t, h.ID, mv(a, b, 1)[:1]); !errors.Is(err, ledger.ErrTooFewPostings) {
			t.Fatalf("one posting: %v", err)
		}
		// Capture 40 of the 60 (no fee): 20 goes back to available.
		p, err := f.l.Post(ctx, f.t, h.ID, mv(a, b, 40))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Postings) != 2 {
			t.Fatalf("post = %+v", p)
		}
		f.wantBalance(t, a, 60, 0, 0)
		f.wantBalance(t, b, 40, 0, 0)
		f.wantBalance(t, fees, 0, 0, 0)
		f.audit(t)
	})
}

func TestReverse_OnceWithNegatedPostings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, a, 100)
		tr, err := f.l.Transfer(ctx, f.t, mv(a, b, 40), "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := f.l.Reverse(ctx, f.t, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != ledger.KindReversal || r.ReversesID != tr.ID || len(r.Postings) != 2 ||
			r.Postings[0].AccountID != a.ID || r.Postings[0].Amount != 40 || r.Postings[1].Amount != -40 {
			t.Fatalf("reversal = %+v", r)
		}
		f.wantBalance(t, a, 100, 0, 0)
		f.wantBalance(t, b, 0, 0, 0)
		if _, err := f.l.Reverse(ctx, f.t, tr.ID); !errors.Is(err, ledger.ErrAlreadyReversed) {
			t.Fatalf("second reversal: %v", err)
		}
		// A reversal of a reversal re-applies the original.
		rr, err := f.l.Reverse(ctx, f.t, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		f.wantBalance(t, b, 40, 0, 0)
		// A reversal that would overdraw an internal account is refused.
		if _, err := f.l.Transfer(ctx, f.t, mv(b, a, 40), ""); err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.Reverse(ctx, f.t, rr.ID); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("overdrawing reversal: %v", err)
		}
		// The original and the reversal are both kept: append-only.
		got, err := f.l.GetTransfer(ctx, f.t, tr.ID)
		if err != nil || got.ReversedBy != r.ID || len(got.Postings) != 2 {
			t.Fatalf("original = %+v, %v", got, err)
		}
		f.audit(t)
	})
}

func TestBatch_AllOrNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, a, 100)
		h, err := f.l.Hold(ctx, f.t, mv(a, b, 10), "")
		if err != nil {
			t.Fatal(err)
		}
		before := f.counts(t)
		_, err = f.l.Commit(ctx, f.t, []ledger.TransferSpec{
			{Postings: mv(a, b, 20)},
			{Kind: ledger.KindPost, HoldID: h.ID},
			{Kind: ledger.KindHold, Postings: mv(a, b, 5)},
			{Postings: mv(b, a, 1000)},
		})
		var be *ledger.BatchError
		if !errors.As(err, &be) || be.Index != 3 || !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("got %v, want insufficient funds at index 3", err)
		}
		if after := f.counts(t); after != before {
			t.Fatalf("failed batch left rows: %+v -> %+v", before, after)
		}
		f.wantBalance(t, a, 100, 10, 0)
		// The hold is still pending.
		if _, err := f.l.Void(ctx, f.t, h.ID); err != nil {
			t.Fatal(err)
		}
		f.audit(t)
	})
}

func TestBatch_AppliesInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		w := f.system(t, ledger.CodeWorld, "USD")
		// Funds received earlier in a batch can be spent later in it...
		out, err := f.l.Commit(ctx, f.t, []ledger.TransferSpec{
			{Postings: mv(w, a, 50)},
			{Postings: mv(a, b, 50)},
		})
		if err != nil || len(out) != 2 {
			t.Fatalf("fund then spend: %v", err)
		}
		// ...but not before they arrive, even if the batch nets out.
		_, err = f.l.Commit(ctx, f.t, []ledger.TransferSpec{
			{Postings: mv(a, b, 50)},
			{Postings: mv(w, a, 50)},
		})
		if !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("spend then fund: %v", err)
		}
		// Holds, posts, reversals may name earlier members of the batch.
		out, err = f.l.Commit(ctx, f.t, []ledger.TransferSpec{
			{ID: "LedgerTransfer:h", Kind: ledger.KindHold, Postings: mv(b, a, 30)},
			{Kind: ledger.KindPost, HoldID: "LedgerTransfer:h"},
			{ID: "LedgerTransfer:t", Postings: mv(a, b, 5)},
			{Kind: ledger.KindReversal, ReversesID: "LedgerTransfer:t"},
		})
		if err != nil || out[0].ID != "LedgerTransfer:h" {
			t.Fatalf("in-batch references: %v", err)
		}
		f.wantBalance(t, a, 30, 0, 0)
		f.wantBalance(t, b, 20, 0, 0)
		for name, batch := range map[string][]ledger.TransferSpec{
			"post twice": {
				{ID: "LedgerTransfer:h2", Kind: ledger.KindHold, Postings: mv(b, a, 1)},
				{Kind: ledger.KindPost, HoldID: "LedgerTransfer:h2"},
				{Kind: ledger.KindVoid, HoldID: "LedgerTransfer:h2"}},
			"reverse twice": {
				{ID: "LedgerTransfer:t2", Postings: mv(b, a, 1)},
				{Kind: ledger.KindReversal, ReversesID: "LedgerTransfer:t2"},
				{Kind: ledger.KindReversal, ReversesID: "LedgerTransfer:t2"}},
			"forward reference": {
				{Kind: ledger.KindVoid, HoldID: "LedgerTransfer:h3"},
				{ID: "LedgerTransfer:h3", Kind: ledger.KindHold, Postings: mv(b, a, 1)}},
			"id twice": {
				{ID: "LedgerTransfer:x", Postings: mv(b, a, 1)},
				{ID: "LedgerTransfer:x", Postings: mv(b, a, 1)}},
			"stored id": {{ID: "LedgerTransfer:h", Postings: mv(b, a, 1)}},
		} {
			want := map[string]error{"post twice": ledger.ErrHoldNotPending, "reverse twice": ledger.ErrAlreadyReversed,
				"forward reference": ledger.ErrTransferNotFound, "id twice": ledger.ErrDuplicateTransfer,
				"stored id": ledger.ErrDuplicateTransfer}[name]
			before := f.counts(t)
			if _, err := f.l.Commit(ctx, f.t, batch); !errors.Is(err, want) {
				t.Errorf("%s: got %v, want %v", name, err, want)
			}
			if after := f.counts(t); after != before {
				t.Errorf("%s: failed batch left rows", name)
			}
		}
		if out, err := f.l.Commit(ctx, f.t, nil); err != nil || out != nil {
			t.Fatalf("empty batch: %v, %v", out, err)
		}
		f.audit(t)
	})
}

func TestApply_InsideCallersTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		f.fund(t, a, 100)
		before := f.counts(t)
		errBoom := errors.New("boom")
		err := db.InTx(ctx, func(tx *store.Tx) error {
			if _, err := f.l.Apply(ctx, tx, f.t, []ledger.TransferSpec{{Postings: mv(a, b, 60)}}); err != nil {
				return err
			}
			bal, err := f.l.BalanceTx(ctx, tx, f.t, a.ID)
			if err != nil || bal.Posted != 40 {
				t.Errorf("balance inside the transaction = %+v, %v", bal, err)
			}
			// A second Apply in the same transaction sees the first.
			if _, err := f.l.Apply(ctx, tx, f.t, []ledger.TransferSpec{{Postings: mv(a, b, 41)}}); !errors.Is(err, ledger.ErrInsufficientFunds) {
				t.Errorf("second apply: %v", err)
			}
			return errBoom // the caller's own later step fails
		})
		if !errors.Is(err, errBoom) {
			t.Fatal(err)
		}
		if f.counts(t) != before {
			t.Fatal("rolled-back transaction left ledger rows")
		}
		f.wantBalance(t, a, 100, 0, 0)
		err = db.InTx(ctx, func(tx *store.Tx) error {
			acct, err := f.l.CreateAccountTx(ctx, tx, f.t, ledger.AccountSpec{Currency: "USD", Kind: ledger.Internal})
			if err != nil {
				return err
			}
			_, err = f.l.Apply(ctx, tx, f.t, []ledger.TransferSpec{{Postings: mv(a, acct, 60)}})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		f.wantBalance(t, a, 40, 0, 0)
		f.audit(t)
	})
}

// Two writers racing to resolve one hold, or to reverse one transfer: exactly
// one wins, whatever the engine and whether the accounts are hot.
func TestConcurrent_ResolveAndReverseExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a := f.internal(t, "USD")
		w, clearing := f.system(t, ledger.CodeWorld, "USD"), f.system(t, ledger.CodeClearing, "USD")
		f.fund(t, a, 1000)
		for round := 0; round < 3; round++ {
			hotHold, err := f.l.Hold(ctx, f.t, mv(w, clearing, 10), "")
			if err != nil {
				t.Fatal(err)
			}
			hold, err := f.l.Hold(ctx, f.t, mv(a, clearing, 10), "")
			if err != nil {
				t.Fatal(err)
			}
			tr, err := f.l.Transfer(ctx, f.t, mv(w, clearing, 10), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{hotHold.ID, hold.ID, tr.ID} {
				var wg sync.WaitGroup
				var mu sync.Mutex
				wins, losses := 0, 0
				for g := 0; g < 8; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var err error
						switch {
						case target == tr.ID:
							_, err = f.l.Reverse(ctx, f.t, target)
						case g%2 == 0:
							_, err = f.l.Post(ctx, f.t, target, nil)
						default:
							_, err = f.l.Void(ctx, f.t, target)
						}
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							wins++
						case errors.Is(err, ledger.ErrHoldNotPending), errors.Is(err, ledger.ErrAlreadyReversed):
							losses++
						default:
							t.Errorf("unexpected error: %v", err)
						}
					}()
				}
				wg.Wait()
				if wins != 1 || losses != 7 {
					t.Fatalf("%d wins, %d losses; want 1 and 7", wins, losses)
				}
			}
		}
		f.audit(t)
	})
}

// Hot accounts keep no balance row, so a transaction holding one open does
// not make another transfer through the same hot accounts wait.
func TestHotAccounts_DoNotSerializeTransfers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		if db.Engine() != store.Postgres {
			t.Skip("SQLite has a single writer: nothing runs concurrently to block")
		}
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		w, fees := f.system(t, ledger.CodeWorld, "USD"), f.system(t, ledger.CodeServiceFees, "USD")
		f.fund(t, a, 100)
		f.fund(t, b, 100)
		inside, release := make(chan struct{}), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- db.InTx(ctx, func(tx *store.Tx) error {
				_, err := f.l.Apply(ctx, tx, f.t, []ledger.TransferSpec{{Postings: []ledger.PostingSpec{
					{AccountID: a.ID, Currency: "USD", Amount: -10}, {AccountID: w.ID, Currency: "USD", Amount: 9},
					{AccountID: fees.ID, Currency: "USD", Amount: 1}}}})
				close(inside)
				<-release
				return err
			})
		}()
		<-inside
		start := time.Now()
		_, err := f.l.Transfer(ctx, f.t, []ledger.PostingSpec{
			{AccountID: b.ID, Currency: "USD", Amount: -10}, {AccountID: w.ID, Currency: "USD", Amount: 9},
			{AccountID: fees.ID, Currency: "USD", Amount: 1}}, "")
		elapsed := time.Since(start)
		close(release)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if elapsed > 2*time.Second {
			t.Fatalf("a transfer through hot accounts waited %v for another transaction", elapsed)
		}
		f.wantBalance(t, fees, 2, 0, 0)
		f.audit(t)
	})
}

// R-STMT-07 (openingBalance + Σ amounts == closingBalance on every page) and
// R-STMT-02 (the window is [startDate, endDate)), read straight from postings.
func TestStatement_R_STMT_07_OpeningPlusChangesIsClosing_R_STMT_02_HalfOpen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		a, b := f.internal(t, "USD"), f.internal(t, "USD")
		base := time.Date(2025, 10, 1, 12, 0, 0, 0, time.UTC)
		clock := base
		db.SetClock(func() time.Time { return clock })
		defer db.SetClock(time.Now)
		f.fund(t, a, 1000)
		var times []time.Time
		for i := 0; i < 25; i++ {
			clock = base.Add(time.Duration(i+1) * time.Minute)
			times = append(times, clock)
			var err error
			if i%3 == 2 {
				_, err = f.l.Transfer(ctx, f.t, mv(b, a, int64(i)), "")
			} else {
				_, err = f.l.Transfer(ctx, f.t, mv(a, b, int64(i+1)), "")
			}
			if err != nil {
				t.Fatal(err)
			}
			if i%5 == 0 { // pending postings never show on statements
				if _, err := f.l.Hold(ctx, f.t, mv(a, b, 1), ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		q := db.Read()
		from, to := times[3], times[20] // half-open: the change at times[20] is out
		opening, err := q.LedgerPostedSumBefore(ctx, f.t, a.ID, &from)
		if err != nil {
			t.Fatal(err)
		}
		closing, err := q.LedgerPostedSumBefore(ctx, f.t, a.ID, &to)
		if err != nil {
			t.Fatal(err)
		}
		var cursor *store.LedgerPostingCursor
		sum, rows := opening, 0
		var last time.Time
		for {
			page, err := q.LedgerStatement(ctx, f.t, a.ID, &from, &to, cursor, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page {
				if p.Pending || p.CreatedAt.Before(from) || !p.CreatedAt.Before(to) || p.CreatedAt.Before(last) {
					t.Fatalf("row %+v out of window or order", p)
				}
				last = p.CreatedAt
				sum += p.Amount
				rows++
			}
			if len(page) < 4 {
				break
			}
			cursor = &store.LedgerPostingCursor{CreatedAt: page[len(page)-1].CreatedAt, ID: page[len(page)-1].ID}
		}
		if rows != 17 || sum != closing {
			t.Fatalf("%d rows, opening %d + changes = %d, closing %d", rows, opening, sum, closing)
		}
		total, err := q.LedgerPostedSumBefore(ctx, f.t, a.ID, nil)
		if err != nil || total != f.balance(t, a).Posted {
			t.Fatalf("sum of all postings %d, balance %d, %v", total, f.balance(t, a).Posted, err)
		}
		f.audit(t)
	})
}

func TestIsTokenCurrency(t *testing.T) {
	for cur, want := range map[string]bool{
		id.New(id.Stablecoin): true, "Stablecoin:not-a-uuid": false, "USD": false, "": false,
		id.New(id.StablecoinOperation): false, "Stablecoin:01A21596-B325-7EB3-BF15-7E7499784311": false,
	} {
		if got := ledger.IsTokenCurrency(cur); got != want {
			t.Errorf("IsTokenCurrency(%q) = %v, want %v", cur, got, want)
		}
	}
}
