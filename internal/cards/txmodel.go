package cards

import (
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Card transaction statuses (Part A "Card transaction"; AUTHORIZED and
// PARTIALLY_SETTLED from the reference). There is no REFUNDED (R-CARD-51).
const (
	TxAuthorized       = "AUTHORIZED"
	TxPartiallySettled = "PARTIALLY_SETTLED"
	TxSettled          = "SETTLED"
	TxDeclined         = "DECLINED"
	TxVoided           = "VOIDED"
	TxException        = "EXCEPTION"
)

// Decline reasons (R-CARD-50).
const (
	DeclineCardNotActive       = "CARD_NOT_ACTIVE"
	DeclineSpendLimit          = "SPEND_LIMIT_EXCEEDED"
	DeclineInsufficientFunds   = "INSUFFICIENT_FUNDS"
	DeclineNoFundingSource     = "NO_ELIGIBLE_FUNDING_SOURCE"
	DeclineBlocked             = "BLOCKED"
	DeclineUnsupportedNetwork  = "UNSUPPORTED_NETWORK"
	DeclineOther               = "OTHER"
	sandboxInsufficientSuffix  = "002"
	sandboxCardNotActiveSuffix = "003"
)

// Kinds of card transaction (stored in its details).
const (
	KindAuthorization   = "AUTHORIZATION"    // dual message: hold, then clearing
	KindFinancial       = "FINANCIAL"        // single message: settled at once
	KindCredit          = "CREDIT"           // merchant credit authorization: pending credit, then clearing
	KindFinancialCredit = "FINANCIAL_CREDIT" // merchant credit settled at once
	KindReturn          = "RETURN"           // a return (refund) of a settled purchase: its own CREDIT row
)

// Card transaction events: what the network did.
const (
	EvApproved       = "authorization approved"
	EvDeclined       = "authorization declined"
	EvSettledAtOnce  = "single-message authorization or return"
	EvResized        = "advice, incremental authorization or partial reversal"
	EvClearedPart    = "clearing, more expected"
	EvClearedFinal   = "final clearing"
	EvClearingShort  = "clearing the funding source cannot cover"
	EvReleased       = "reversal or expiry of what is held"
	EvReturned       = "return on the purchase, or its reversal"
	EvReturnReversed = "return reversed"
)

// TxMove is one row of the card transaction machine.
type TxMove struct{ From, Event, To string }

// TxMoves is the card transaction machine: every status a card transaction
// takes, and after what. A row whose From is "" creates the transaction.
var TxMoves = []TxMove{
	{"", EvApproved, TxAuthorized},
	{"", EvDeclined, TxDeclined},
	{"", EvSettledAtOnce, TxSettled},
	{TxAuthorized, EvResized, TxAuthorized},
	{TxPartiallySettled, EvResized, TxPartiallySettled},
	{TxAuthorized, EvClearedPart, TxPartiallySettled},
	{TxPartiallySettled, EvClearedPart, TxPartiallySettled},
	{TxAuthorized, EvClearedFinal, TxSettled},
	{TxPartiallySettled, EvClearedFinal, TxSettled},
	{TxAuthorized, EvClearingShort, TxException},
	{TxPartiallySettled, EvClearingShort, TxException},
	{TxAuthorized, EvReleased, TxVoided},
	{TxPartiallySettled, EvReleased, TxSettled},
	{TxSettled, EvReturned, TxSettled},
	{TxSettled, EvReturnReversed, TxVoided},
}

// txNext returns the status after event from status, if the table allows it.
func txNext(from, event string) (string, bool) {
	for _, m := range TxMoves {
		if m.From == from && m.Event == event {
			return m.To, true
		}
	}
	return "", false
}

// Merchant is the merchant of a simulated network message.
type Merchant struct {
	Descriptor *string `json:"descriptor"`
	Mcc        *string `json:"mcc"`
	Country    *string `json:"country"`
	City       *string `json:"city"`
	State      *string `json:"state"`
}

// CurrencyRef names a currency ({"code": "USD"}).
type CurrencyRef struct {
	Code *string `json:"code"`
}

// SimAuthorization is the body of the authorization-family simulations.
type SimAuthorization struct {
	Amount   *int64       `json:"amount"`
	Currency *CurrencyRef `json:"currency"`
	Merchant *Merchant    `json:"merchant"`
}

// Validate checks the body on its own; zeroAmount is for balance inquiries
// (no amount).
func (r *SimAuthorization) Validate(zeroAmount bool) error {
	var f apierr.Fields
	if !zeroAmount {
		switch {
		case r.Amount == nil:
			f.Add("amount", apierr.Required, "is required: the amount in the currency's smallest unit")
		case *r.Amount < 1:
			f.Add("amount", apierr.Minimum, "must be a positive integer")
		case *r.Amount > maxSimAmount:
			f.Add("amount", apierr.Maximum, "must be at most %d", maxSimAmount)
		}
		switch {
		case r.Currency == nil || r.Currency.Code == nil:
			f.Add("currency.code", apierr.Required, "is required: the currency of the amount, such as USD")
		default:
			if _, ok := currency.Lookup(*r.Currency.Code); !ok {
				f.Add("currency.code", apierr.Enum, "is not a known currency code")
			}
		}
	}
	validMerchant(&f, r.Merchant)
	return f.Err()
}

// maxSimAmount bounds simulated amounts (ten million units of a two-decimal
// currency).
const maxSimAmount = 1_000_000_000

func validMerchant(f *apierr.Fields, m *Merchant) {
	if m == nil {
		f.Add("merchant", apierr.Required, "is required: descriptor, mcc and country as the network reports them")
		return
	}
	if m.Descriptor == nil || strings.TrimSpace(*m.Descriptor) == "" || len(*m.Descriptor) > 100 {
		f.Add("merchant.descriptor", apierr.Required, "is required: 1 to 100 characters")
	}
	if m.Mcc != nil && !ValidMCC(*m.Mcc) {
		f.Add("merchant.mcc", apierr.Pattern, "must be a four-digit merchant category code")
	}
	if m.Country != nil && (len(*m.Country) != 2 || strings.ToUpper(*m.Country) != *m.Country) {
		f.Add("merchant.country", apierr.Pattern, "must be a two-letter ISO 3166-1 country code")
	}
	for name, v := range map[string]*string{"merchant.city": m.City, "merchant.state": m.State} {
		if v != nil && len(*v) > 100 {
			f.Add(name, apierr.MaxLength, "must be at most 100 characters")
		}
	}
}

func (m *Merchant) record() transactions.CardMerchant {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return transactions.CardMerchant{Descriptor: s(m.Descriptor), Mcc: s(m.Mcc), Country: s(m.Country),
		City: s(m.City), State: s(m.State)}
}

// SimOnTransaction is the body of simulations on an existing card
// transaction: clearing, advice, reversal, return (amount), return_reversal
// (none). Final: for a clearing, whether more clearings follow (false
// leaves the rest held: PARTIALLY_SETTLED); default true.
type SimOnTransaction struct {
	CardTransactionID *string `json:"cardTransactionId"`
	Amount            *int64  `json:"amount"`
	Final             *bool   `json:"final"`
}

// Validate checks the body on its own. amount: "required", "optional",
// "none"; zero allows 0 (a clearing of 0 is an expiry).
func (r *SimOnTransaction) Validate(amount string, zero bool) error {
	var f apierr.Fields
	switch {
	case r.CardTransactionID == nil:
		f.Add("cardTransactionId", apierr.Required, "is required: the card transaction (Transaction:…)")
	case !id.Valid(id.Transaction, *r.CardTransactionID):
		f.Add("cardTransactionId", apierr.Pattern, "must be a transaction id such as Transaction:0199a1b2-…")
	}
	min := int64(1)
	if zero {
		min = 0
	}
	switch {
	case r.Amount == nil && amount == "required":
		f.Add("amount", apierr.Required, "is required")
	case r.Amount != nil && amount == "none":
		f.Add("amount", apierr.AdditionalProperties, "is not taken here")
	case r.Amount != nil && (*r.Amount < min || *r.Amount > maxSimAmount):
		f.Add("amount", apierr.Minimum, "must be from %d to %d", min, maxSimAmount)
	}
	if r.Final != nil && amount == "none" {
		f.Add("final", apierr.AdditionalProperties, "is not taken here")
	}
	return f.Err()
}

// SimResult answers a simulation: the network's token, the message as
// recorded (PENDING: the card runner applies it), and the card transaction
// the message acts on as it is when accepted, when that transaction exists
// already (not for authorizations and returns, whose transaction the
// message creates: message.cardTransactionId names it).
type SimResult struct {
	IssuerTransactionToken string                    `json:"issuerTransactionToken"`
	Message                *Message                  `json:"message,omitempty"`
	Transaction            *transactions.Transaction `json:"transaction,omitempty"`
	// BalanceInquiry only.
	Approved         *bool                        `json:"approved,omitempty"`
	AvailableBalance *transactions.CurrencyAmount `json:"availableBalance,omitempty"`
	DeclinedReason   string                       `json:"cardDeclinedReason,omitempty"`
}
