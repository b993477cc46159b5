package main

// The bench's model of its cards and card transactions (-cards): what each
// sandbox network message and each card change does, as the service
// decides it (internal/cards: decide.go, settle.go, returns.go), so the
// traffic can check every outcome the API shows and the final checks know
// what the ledger must hold. Pure: no I/O.

import (
	"fmt"
	"strings"
)

// Card transaction statuses, and what the bench sends to make declines.
const (
	stAuthorized = "AUTHORIZED"
	stPartial    = "PARTIALLY_SETTLED"
	stSettled    = "SETTLED"
	stDeclined   = "DECLINED"
	stVoided     = "VOIDED"

	benchMCC      = "5814"
	blockedMCC    = "7995" // on every bench card's blockedMccs
	benchMerchant = "BENCH MERCHANT"
	nsfSuffix     = "002" // the sandbox declines INSUFFICIENT_FUNDS
)

// benchCard is a card in the model. One worker owns it: no other sends
// messages on it or changes it, so its status and daily spend are known.
type benchCard struct {
	ID, AccountID, CustomerID string
	Status                    string // ACTIVE, FROZEN or CLOSED
	PerTxn, PerDay            int64  // its limits; 0: none
	Spent                     int64  // counted against today's limit
	// Unsure: a message on it went unresolved, so Spent may be low and a
	// limit decision may go either way.
	Unsure bool
}

// authKinds maps each authorization-family simulation to the kind of card
// transaction it makes.
var authKinds = map[string]string{
	"authorization":                  "AUTHORIZATION",
	"financial_authorization":        "FINANCIAL",
	"credit_authorization":           "CREDIT",
	"credit_authorization_advice":    "CREDIT",
	"financial_credit_authorization": "FINANCIAL_CREDIT",
}

// authMsg is an authorization-family message as the bench sends it.
type authMsg struct {
	Op              string // the simulation (a key of authKinds)
	Amount          int64
	MCC, Descriptor string
}

func (m authMsg) kind() string { return authKinds[m.Op] }
func (m authMsg) debit() bool  { return m.kind() == "AUTHORIZATION" || m.kind() == "FINANCIAL" }
func (m authMsg) single() bool { return m.kind() == "FINANCIAL" || m.kind() == "FINANCIAL_CREDIT" }

func (m authMsg) body() map[string]any {
	return map[string]any{"amount": m.Amount, "currency": map[string]any{"code": "USD"},
		"merchant": map[string]any{"descriptor": m.Descriptor, "mcc": m.MCC, "country": "US"}}
}

// declineReason is the service's decision on m for card c, in the order it
// decides: "" approves, else the cardDeclinedReason. Credits are refused
// only by the card's status.
func declineReason(c *benchCard, m authMsg) string {
	switch {
	case c.Status != "ACTIVE":
		return "CARD_NOT_ACTIVE"
	case !m.debit():
		return ""
	case m.MCC == blockedMCC:
		return "BLOCKED"
	case c.PerTxn > 0 && m.Amount > c.PerTxn, c.PerDay > 0 && c.Spent+m.Amount > c.PerDay:
		return "SPEND_LIMIT_EXCEEDED"
	case strings.HasSuffix(m.Descriptor, nsfSuffix):
		return "INSUFFICIENT_FUNDS"
	}
	return ""
}

// limitUnsure reports whether the decision on m may go either way because
// c's daily spend is not known.
func limitUnsure(c *benchCard, m authMsg) bool {
	return c.Unsure && c.PerDay > 0 && c.Status == "ACTIVE" && m.debit() && m.MCC != blockedMCC &&
		(c.PerTxn == 0 || m.Amount <= c.PerTxn)
}

// cardTx is the model of one card transaction: what it authorized, holds,
// settled, and had returned.
// Uncertain: a message on it went unresolved, so the model may be wrong.
type cardTx struct {
	ID, CardID, AccountID     string
	Kind                      string
	Credit                    bool // money in: a merchant credit
	Authorized, Held, Settled int64
	Status, Reason            string
	Uncertain                 bool
	Returns                   []cardReturn // its return rows (purchases only)
}

// cardReturn is a return row of a purchase; Reversed once a
// return_reversal VOIDED it.
type cardReturn struct {
	ID       string
	Amount   int64
	Reversed bool
}

func (t *cardTx) open() bool { return t.Status == stAuthorized || t.Status == stPartial }

// returned is what came back to the purchase and stayed (refundedAmount).
func (t *cardTx) returned() int64 {
	var n int64
	for _, r := range t.Returns {
		if !r.Reversed {
			n += r.Amount
		}
	}
	return n
}

// returnable reports whether a return may be sent on t: a settled purchase
// with money not yet returned.
func (t *cardTx) returnable() bool {
	return !t.Credit && t.Status == stSettled && t.Settled > t.returned()
}

// authorized is the model of the transaction m made on c, given the
// decision reason; an approved purchase counts against c's day.
func authorized(c *benchCard, m authMsg, id, reason string) *cardTx {
	t := &cardTx{ID: id, CardID: c.ID, AccountID: c.AccountID, Kind: m.kind(), Credit: !m.debit(), Authorized: m.Amount}
	switch {
	case reason != "":
		t.Status, t.Reason = stDeclined, reason
		return t
	case m.single():
		t.Status, t.Settled = stSettled, m.Amount
	default:
		t.Status, t.Held = stAuthorized, m.Amount
	}
	if m.debit() {
		c.Spent += m.Amount
	}
	return t
}

// cleared is t after a clearing of amount: what is held posts up to
// amount (a purchase clearing above it pulls the rest); final false keeps
// the remainder held (PARTIALLY_SETTLED) when some is left.
func cleared(t cardTx, amount int64, final bool) cardTx {
	posted := min(amount, t.Held)
	t.Settled += amount
	if !final && t.Held > posted {
		t.Held -= posted
		t.Status = stPartial
		return t
	}
	t.Held, t.Status = 0, stSettled
	return t
}

// released is t after amount of its hold is given back (0: all of it): a
// reversal, an expiry (a clearing of 0) or the card's closing. All of it
// voids an uncleared authorization and settles a partly cleared one.
func released(t cardTx, amount int64) cardTx {
	if amount > 0 && amount < t.Held {
		t.Held -= amount
		return t
	}
	t.Held = 0
	if t.Status == stAuthorized {
		t.Status = stVoided
	} else {
		t.Status = stSettled
	}
	return t
}

// advised is t after an advice or incremental authorization to a new
// total authorized amount: the hold moves by the difference.
func advised(t cardTx, total int64) cardTx {
	t.Held += total - t.Authorized
	t.Authorized = total
	return t
}

// adviceOK reports whether the service accepts an advice on t to total:
// something stays held and, for a purchase's increase, the card's limits
// allow it (the per-transaction limit against the total, the day against
// the increase).
func adviceOK(c *benchCard, t *cardTx, total int64) bool {
	delta := total - t.Authorized
	switch {
	case t.Held+delta <= 0:
		return false
	case delta <= 0 || t.Credit:
		return true
	case c.Unsure && c.PerDay > 0:
		return false
	}
	return (c.PerTxn == 0 || total <= c.PerTxn) && (c.PerDay == 0 || c.Spent+delta <= c.PerDay)
}

// withReturn is t after a return of amount (row id), and withoutReturn
// after the return_reversal of its i-th return.
func withReturn(t cardTx, id string, amount int64) cardTx {
	t.Returns = append(append([]cardReturn(nil), t.Returns...), cardReturn{ID: id, Amount: amount})
	return t
}

func withoutReturn(t cardTx, i int) cardTx {
	t.Returns = append([]cardReturn(nil), t.Returns...)
	t.Returns[i].Reversed = true
	return t
}

// compareCardTx compares the model of a card transaction with what the
// API shows; "" when they agree.
func compareCardTx(t *cardTx, v cardTxView) string {
	dir := "DEBIT"
	if t.Credit {
		dir = "CREDIT"
	}
	switch {
	case v.ID != t.ID:
		return fmt.Sprintf("read %q for %s", v.ID, t.ID)
	case v.CardID != t.CardID:
		return fmt.Sprintf("%s: card %s, want %s", t.ID, v.CardID, t.CardID)
	case v.Status != t.Status || v.Reason != t.Reason:
		return fmt.Sprintf("%s (%s): status %s %s, want %s %s", t.ID, t.Kind, v.Status, v.Reason, t.Status, t.Reason)
	case v.Direction != "" && v.Direction != dir:
		return fmt.Sprintf("%s: direction %s, want %s", t.ID, v.Direction, dir)
	case v.Authorized != t.Authorized || v.Settled != t.Settled || v.Refunded != t.returned():
		return fmt.Sprintf("%s (%s): authorized %d settled %d refunded %d, want %d, %d and %d", t.ID, t.Kind,
			v.Authorized, v.Settled, v.Refunded, t.Authorized, t.Settled, t.returned())
	}
	return ""
}

// returnProblem compares a return row with the model; "" when they agree.
func returnProblem(t *cardTx, r cardReturn, v cardTxView) string {
	want := stSettled
	if r.Reversed {
		want = stVoided
	}
	switch {
	case v.ID != r.ID || v.OriginalTransactionID != t.ID:
		return fmt.Sprintf("return %s: read %s of %q, want a return of %s", r.ID, v.ID, v.OriginalTransactionID, t.ID)
	case v.Status != want || v.Settled != r.Amount:
		return fmt.Sprintf("return %s: %s %d, want %s %d", r.ID, v.Status, v.Settled, want, r.Amount)
	case v.Direction != "" && v.Direction != "CREDIT":
		return fmt.Sprintf("return %s: direction %s", r.ID, v.Direction)
	}
	return ""
}

// cardMoney is what the model says the card traffic did to the run's USD
// accounts: purchases settled out, merchant credits and returns that
// stayed came in, and what is still held either way. Inexact when some
// transaction is uncertain.
func cardMoney(txs []*cardTx) (out, in, heldOut, heldIn int64, uncertain int) {
	for _, t := range txs {
		if t.Credit {
			in += t.Settled
			heldIn += t.Held
		} else {
			out += t.Settled
			in += t.returned()
			heldOut += t.Held
		}
		if t.Uncertain {
			uncertain++
		}
	}
	return
}
