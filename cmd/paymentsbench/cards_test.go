package main

import (
	"context"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/ledger"
)

const simBody = `{"issuerTransactionToken":"tok","transaction":{"id":"Transaction:1","status":"AUTHORIZED","type":"CARD",
	"cardId":"Card:1","authorizedAmount":{"amount":500,"currency":{"code":"USD"}},"settledAmount":{"amount":0},
	"refundedAmount":{"amount":0}}}`

func TestDecodeCardTx(t *testing.T) {
	v, err := decodeCardTx([]byte(simBody), true)
	if err != nil || v.ID != "Transaction:1" || v.Status != "AUTHORIZED" || v.Type != "CARD" || v.CardID != "Card:1" || v.Authorized != 500 {
		t.Fatalf("simulation answer: %+v %v", v, err)
	}
	ret := `{"id":"Transaction:2","status":"SETTLED","type":"CARD","settledAmount":{"amount":40},"originalTransactionId":"Transaction:1"}`
	if v, err := decodeCardTx([]byte(ret), false); err != nil || v.Settled != 40 || v.OriginalTransactionID != "Transaction:1" {
		t.Fatalf("transaction: %+v %v", v, err)
	}
	for name, c := range map[string]struct {
		body string
		sim  bool
	}{
		"not JSON":              {`{`, false},
		"no transaction":        {`{"issuerTransactionToken":"tok"}`, true},
		"null transaction":      {`{"transaction":null}`, true},
		"no id":                 {`{"status":"SETTLED"}`, false},
		"no status":             {`{"id":"Transaction:1"}`, false},
		"negative amount":       {`{"id":"Transaction:1","status":"SETTLED","settledAmount":{"amount":-1}}`, false},
		"amount not an integer": {`{"id":"Transaction:1","status":"SETTLED","settledAmount":{"amount":1.5}}`, false},
		"the wrapped one plain": {simBody, false},
	} {
		if _, err := decodeCardTx([]byte(c.body), c.sim); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func FuzzDecodeCardTx(f *testing.F) {
	f.Add([]byte(simBody), true)
	f.Add([]byte(`{"id":"Transaction:2","status":"SETTLED","settledAmount":{"amount":40}}`), false)
	f.Add([]byte(`{"transaction":{}}`), true)
	f.Fuzz(func(t *testing.T, body []byte, sim bool) {
		v, err := decodeCardTx(body, sim)
		if err != nil {
			return
		}
		if v.ID == "" || v.Status == "" || v.Authorized < 0 || v.Settled < 0 || v.Refunded < 0 {
			t.Fatalf("accepted %q as %+v", body, v)
		}
	})
}

func TestCompareCardTx(t *testing.T) {
	model := &cardTx{ID: "T1", CardID: "C1", Authorized: 500, Settled: 300, Status: "SETTLED",
		Returns: []cardReturn{{ID: "R1", Amount: 100}, {ID: "R2", Amount: 50, Reversed: true}}}
	good := cardTxView{ID: "T1", CardID: "C1", Status: "SETTLED", Type: "CARD", Direction: "DEBIT", Authorized: 500, Settled: 300, Refunded: 100}
	if msg := compareCardTx(model, good); msg != "" {
		t.Fatalf("agreeing: %s", msg)
	}
	for name, change := range map[string]func(v *cardTxView){
		"another id":       func(v *cardTxView) { v.ID = "T2" },
		"another card":     func(v *cardTxView) { v.CardID = "C2" },
		"another status":   func(v *cardTxView) { v.Status = "AUTHORIZED" },
		"a decline reason": func(v *cardTxView) { v.Reason = "BLOCKED" },
		"a credit":         func(v *cardTxView) { v.Direction = "CREDIT" },
		"settled differs":  func(v *cardTxView) { v.Settled = 299 },
		"refunded differs": func(v *cardTxView) { v.Refunded = 150 },
		"authorized more":  func(v *cardTxView) { v.Authorized = 501 },
	} {
		v := good
		change(&v)
		if compareCardTx(model, v) == "" {
			t.Errorf("%s: want a difference", name)
		}
	}
	// An uncertain transaction need only exist, as a CARD transaction.
	unsure := &cardTx{ID: "T1", CardID: "C1", Uncertain: true, Status: "AUTHORIZED"}
	if msg := cardTxProblem(unsure, good, nil); msg != "" {
		t.Fatalf("uncertain: %s", msg)
	}
	if cardTxProblem(unsure, cardTxView{ID: "T1", Status: "SETTLED", Type: "OUTGOING"}, nil) == "" {
		t.Fatal("a non-CARD transaction passed")
	}
	ret := cardTxView{ID: "R2", Status: "VOIDED", Direction: "CREDIT", Settled: 50, OriginalTransactionID: "T1"}
	if msg := returnProblem(model, model.Returns[1], ret); msg != "" {
		t.Fatalf("reversed return: %s", msg)
	}
	if returnProblem(model, model.Returns[0], cardTxView{ID: "R1", Status: "VOIDED", Settled: 100, OriginalTransactionID: "T1"}) == "" {
		t.Fatal("a VOIDED return the model keeps passed")
	}
}

// The USD expectation moves by what the cards settled less what was
// returned and credited; other currencies and runs without cards are
// untouched.
func TestWithCards(t *testing.T) {
	base := func() []expected {
		return []expected{{currency: "USD", want: 10_000}, {currency: "EUR", want: 70}}
	}
	if got := withCards(base(), nil); got[0].want != 10_000 || got[1].want != 70 {
		t.Fatalf("no cards: %+v", got)
	}
	cr := newCardResult()
	cr.Txs = []*cardTx{
		{Settled: 500, Status: "SETTLED", Returns: []cardReturn{{Amount: 120}, {Amount: 9, Reversed: true}}},
		{Held: 80, Status: "AUTHORIZED"},
		{Status: "DECLINED", Authorized: 999},
		{Settled: 30, Status: "SETTLED"},
		{Credit: true, Settled: 40, Status: "SETTLED"},
		{Credit: true, Held: 7, Status: "AUTHORIZED"},
	}
	got := withCards(base(), cr)
	if got[0].want != 10_000-530+120+40 || got[1].want != 70 || got[0].note != "" {
		t.Fatalf("cards: %+v", got)
	}
	out, in, heldOut, heldIn, uncertain := cardMoney(cr.Txs)
	if out != 530 || in != 160 || heldOut != 80 || heldIn != 7 || uncertain != 0 {
		t.Fatalf("cardMoney: %d %d %d %d %d", out, in, heldOut, heldIn, uncertain)
	}
	cr.Txs[0].Uncertain = true
	if got := withCards(base(), cr); !strings.Contains(got[0].note, "inexact") {
		t.Fatalf("uncertain: %+v", got[0])
	}
	s := cr.summary(3)
	if s.Cards != 3 || s.Transactions != 6 || s.Settled != 530 || s.Returned != 120 || s.Credited != 40 {
		t.Fatalf("summary: %+v", s)
	}
	other := newCardResult()
	other.Ops["authorization"], other.Declined["BLOCKED"], other.Unresolved = 2, 1, 1
	other.mismatch("one %s", "surprise")
	other.Txs = []*cardTx{{Status: "VOIDED"}}
	cr.Ops["authorization"] = 3
	cr.merge(other)
	if cr.Ops["authorization"] != 5 || cr.Declined["BLOCKED"] != 1 || cr.Unresolved != 1 || len(cr.Txs) != 7 ||
		cr.Mismatches != 1 || cr.Mismatch != "one surprise" {
		t.Fatalf("merge: %+v", cr)
	}
}

func TestParseFlagsCards(t *testing.T) {
	o, err := parseFlags([]string{"-spawn", "-db", "sqlite:/tmp/x.db", "-cards", "0.3"}, &strings.Builder{})
	if err != nil || o.mix.Cards != 0.3 {
		t.Fatalf("%+v %v", o.mix, err)
	}
	if o, err := parseFlags([]string{"-spawn", "-db", "sqlite:/tmp/x.db"}, &strings.Builder{}); err != nil || o.mix.Cards != 0 {
		t.Fatalf("default: %+v %v", o.mix, err)
	}
	if _, err := parseFlags([]string{"-spawn", "-db", "sqlite:/tmp/x.db", "-cards", "0.3", "-delete-every", "2s"}, &strings.Builder{}); err == nil {
		t.Error("-cards with -delete-every accepted")
	}
	for _, v := range []string{"-0.1", "1", "1.5"} {
		if _, err := parseFlags([]string{"-spawn", "-db", "sqlite:/tmp/x.db", "-cards", v}, &strings.Builder{}); err == nil {
			t.Errorf("-cards %s accepted", v)
		}
	}
}

// The pending check passes with an open hold and fails when a balance's
// pending debits disagree with its hold postings.
func TestCardDBChecksSQL(t *testing.T) {
	for _, engine := range engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db, dbURL, tn := tinyStore(t, engine)
			chk, err := openDBChecker(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer chk.Close()
			var a, b string
			for name, p := range map[string]*string{"a": &a, "b": &b} {
				if err := chk.db.QueryRow(rebind(chk.engine, "SELECT id FROM ledger_accounts WHERE name = ?"), name).Scan(p); err != nil {
					t.Fatal(err)
				}
			}
			hold := ledger.TransferSpec{Kind: ledger.KindHold, Postings: []ledger.PostingSpec{
				{AccountID: a, Currency: "USD", Amount: -70}, {AccountID: b, Currency: "USD", Amount: 70}}}
			if _, err := ledger.New(db).Commit(ctx, tn, []ledger.TransferSpec{hold}); err != nil {
				t.Fatal(err)
			}
			const name = "db: every balance's pending debits and credits equal its open hold postings"
			pending := func() CheckResult {
				for _, r := range chk.cardDBChecks(ctx, setupResult{}, newCardResult()) {
					if r.Name == name {
						return r
					}
				}
				t.Fatal("no pending check")
				return CheckResult{}
			}
			if r := pending(); !r.Pass {
				t.Fatalf("open hold: %s", r.Detail)
			}
			// The others run on both engines; with no card traffic there is
			// nothing held for cards, no decline and no card row.
			for _, r := range chk.cardDBChecks(ctx, setupResult{}, newCardResult()) {
				if !r.Pass && r.Name != name {
					t.Errorf("%s: %s", r.Name, r.Detail)
				}
			}
			for _, r := range chk.LedgerChecks(ctx) {
				if !r.Pass {
					t.Fatalf("open hold: %s: %s", r.Name, r.Detail)
				}
			}
			if _, err := chk.db.Exec(rebind(chk.engine, "UPDATE ledger_balances SET pending_debits = pending_debits + 1 WHERE account_id = ?"), a); err != nil {
				t.Fatal(err)
			}
			if r := pending(); r.Pass {
				t.Fatal("a balance holding more than its hold postings passed")
			}
		})
	}
}

// The text report has a cards line (and the refusals) with card traffic, and
// none without.
func TestReportTextCards(t *testing.T) {
	var plain strings.Builder
	(&Report{Extra: map[string]any{}}).WriteText(&plain)
	if strings.Contains(plain.String(), "cards:") {
		t.Fatalf("a cards line without card traffic:\n%s", plain.String())
	}
	cr := newCardResult()
	cr.Txs = []*cardTx{{Settled: 500, Returns: []cardReturn{{Amount: 120}}, Status: "SETTLED"}}
	cr.Ops["authorization"], cr.Refused["clearing INVALID_STATE_TRANSITION"], cr.Declined["BLOCKED"] = 1, 2, 3
	var b strings.Builder
	(&Report{Extra: map[string]any{"cards": cr.summary(4)}}).WriteText(&b)
	for _, want := range []string{"cards: 4 cards, 1 card transactions (3 declined: map[BLOCKED:3])",
		"card messages and changes: map[authorization:1]", "500 cents of purchases settled, 0 of merchant credits, 120 returned",
		"card messages refused: map[clearing INVALID_STATE_TRANSITION:2]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
