// Package cards issues virtual cards to a platform's verified customers and
// runs their lifecycle: the status machine (one transition table), the
// asynchronous issuer adapter, limits and MCC lists, and the card
// transactions of the sandbox card network, whose money moves only through
// package ledger (authorizations hold, clearings post). It knows nothing
// about HTTP.
//
// The card number (PAN) is generated here on a test BIN and stored only
// sealed (store.InsertCard); cards, events, errors and logs carry last4
// alone. CVV, PIN, reveal and tokenization belong to package carddata,
// which reads the number through SensitiveData.
package cards

import (
	"slices"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"time"
)

// Card statuses (Part A "Card").
const (
	StatusProcessing  = "PROCESSING"
	StatusActive      = "ACTIVE"
	StatusFrozen      = "FROZEN"
	StatusPendingAuth = "PENDING_AUTH"
	StatusPendingKYC  = "PENDING_KYC"
	StatusClosed      = "CLOSED"
)

// Statuses is the status enumeration (R-CARD-25).
var Statuses = []string{StatusProcessing, StatusActive, StatusFrozen, StatusPendingAuth, StatusPendingKYC, StatusClosed}

// Status reasons.
const (
	ReasonDelegationRequired = "DELEGATION_REQUIRED"
	ReasonIssuerRejected     = "ISSUER_REJECTED"
	ReasonClosedByPlatform   = "CLOSED_BY_PLATFORM"
	ReasonSingleUseSpent     = "SINGLE_USE_SPENT"
)

// FormVirtual is the one card form issued.
const FormVirtual = "VIRTUAL"

// Card is a card as the API shows it: never its number, CVV or a reveal
// URL (R-CARD-28).
type Card struct {
	ID                     string       `json:"id"`
	CustomerID             string       `json:"customerId"`
	Status                 string       `json:"status"`
	StatusReason           *string      `json:"statusReason"`
	Form                   string       `json:"form"`
	FundingSource          *string      `json:"fundingSource"`
	MaxSpendPerTransaction *int64       `json:"maxSpendPerTransaction"`
	MaxSpendPerDay         *int64       `json:"maxSpendPerDay"`
	MaxTransactionsPerDay  *int64       `json:"maxTransactionsPerDay"`
	PlatformCardID         string       `json:"platformCardId"`
	Brand                  string       `json:"brand"`
	Last4                  string       `json:"last4"`
	ExpMonth               int          `json:"expMonth"`
	ExpYear                int          `json:"expYear"`
	Currency               string       `json:"currency"`
	ProcessorRef           string       `json:"processorRef,omitempty"`
	IssuerRef              string       `json:"issuerRef,omitempty"`
	PinStatus              string       `json:"pinStatus,omitempty"`
	PinUnblockAvailableAt  *time.Time   `json:"pinUnblockAvailableAt,omitempty"`
	CardCapabilities       Capabilities `json:"cardCapabilities"`
	AllowedMccs            []string     `json:"allowedMccs"`
	BlockedMccs            []string     `json:"blockedMccs"`
	AgentID                string       `json:"agentId,omitempty"`
	DefaultMccBlocksLifted bool         `json:"defaultMccBlocksLifted"`
	CreatedAt              time.Time    `json:"createdAt"`
	UpdatedAt              time.Time    `json:"updatedAt"`
}

// Capabilities say what a card of a program can do (R-CARD-27).
type Capabilities struct {
	SupportsSpendLimits               bool `json:"supportsSpendLimits"`
	SupportsSpendLimitsAtIssuance     bool `json:"supportsSpendLimitsAtIssuance"`
	SupportsTransactionCountLimit     bool `json:"supportsTransactionCountLimit"`
	Supports3dSecurePassword          bool `json:"supports3dSecurePassword"`
	SupportsPanReveal                 bool `json:"supportsPanReveal"`
	SupportsDigitalWalletTokenization bool `json:"supportsDigitalWalletTokenization"`
}

// Program is a card program: the currency its cards transact in, the
// accounts that may fund them, its brand and test BIN, what its cards can do,
// and who decides authorizations.
type Program struct {
	Currency string
	// Funding lists the account types and currencies that may fund a card:
	// "INTERNAL_FIAT/USD", "EMBEDDED_WALLET/USDB".
	Funding      []string
	Brand        string
	BIN          string
	Capabilities Capabilities
	// IssuerDecides: the issuer makes authorization decisions, so the
	// service enforces no limits and a funding change cannot accompany a
	// status change (R-CARD-36).
	IssuerDecides bool
}

// Programs are the card programs, by card currency. USD cards (funded in
// USD or from a USDB embedded wallet) are decided by this service and
// support every limit; EUR cards are decided by their issuer, which takes
// no limits from us.
var Programs = map[string]Program{
	"USD": {Currency: "USD", Funding: []string{"INTERNAL_FIAT/USD", "EMBEDDED_WALLET/USDB"}, Brand: "VISA", BIN: "400000",
		Capabilities: Capabilities{SupportsSpendLimits: true, SupportsSpendLimitsAtIssuance: true,
			SupportsTransactionCountLimit: true, SupportsPanReveal: true, SupportsDigitalWalletTokenization: true}},
	"EUR": {Currency: "EUR", Funding: []string{"INTERNAL_FIAT/EUR"}, Brand: "MASTERCARD", BIN: "510510", IssuerDecides: true,
		Capabilities: Capabilities{Supports3dSecurePassword: true, SupportsPanReveal: true}},
}

// The internal accounts report the capabilities of the program they fund
// (R-CARD-27).
func init() {
	accounts.CardPrograms = func(accountType, currency string) (accounts.CardCapabilities, bool) {
		p, ok := programFor(accountType, currency)
		return accounts.CardCapabilities(p.Capabilities), ok
	}
}

// programFor returns the program an account of that type and currency may
// fund, if any.
func programFor(accountType, currency string) (Program, bool) {
	for _, p := range Programs {
		if slices.Contains(p.Funding, accountType+"/"+currency) {
			return p, true
		}
	}
	return Program{}, false
}

// Sensitive is what only package carddata may read of a card: its number
// and expiry, with the status and cardholder it checks them against.
type Sensitive struct {
	PAN                     string
	ExpiryMonth, ExpiryYear int
	Status                  string
	CustomerID              string
}
