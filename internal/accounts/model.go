package accounts

import (
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// Internal account types (R-IACCT-01).
const (
	TypeFiat           = "INTERNAL_FIAT"
	TypeCrypto         = "INTERNAL_CRYPTO"
	TypeEmbeddedWallet = "EMBEDDED_WALLET"
	TypeRuleBased      = "RULE_BASED"
)

// Types is the enumeration of the type filter.
var Types = []string{TypeFiat, TypeCrypto, TypeEmbeddedWallet, TypeRuleBased}

// Statuses of an internal account. Accounts are ACTIVE from creation; the
// others are reserved for provisioning that waits on a partner, closing and
// compliance freezes.
const (
	StatusPending = "PENDING"
	StatusActive  = "ACTIVE"
	StatusClosed  = "CLOSED"
	StatusFrozen  = "FROZEN"
	StatusFailed  = "FAILED"
)

// RuleBasedCurrency is the only currency of rule-based accounts (R-IACCT-04).
const RuleBasedCurrency = "USD"

// StatementCurrency is the currency of the accounts that have statements
// (R-STMT-10).
const StatementCurrency = "USD"

// MaxFundAmount bounds one sandbox deposit (in the smallest unit).
const MaxFundAmount = 100_000_000_000

// InternalAccount is the API's internal account.
type InternalAccount struct {
	ID         string `json:"id"`
	CustomerID string `json:"customerId,omitempty"`
	Type       string `json:"type"`
	Status     string `json:"status"`
	// Balance is what can be spent now: posted minus what holds reserve.
	Balance transactions.CurrencyAmount `json:"balance"`
	// TotalBalance counts held money and pending credits too.
	TotalBalance               transactions.CurrencyAmount `json:"totalBalance"`
	FundingPaymentInstructions []PaymentInstructions       `json:"fundingPaymentInstructions"`
	CardCapabilities           CardCapabilities            `json:"cardCapabilities"`
	RoutingRule                *RoutingRule                `json:"routingRule,omitempty"`
	// Suspense marks a platform suspense account (see suspense.go).
	Suspense bool `json:"suspense,omitempty"`
	// PrivateEnabled is present on EMBEDDED_WALLET accounts only (R-IACCT-02).
	PrivateEnabled *bool     `json:"privateEnabled,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// PaymentInstructions tell a depositor how to pay into the account (Part A
// "PaymentInstructions").
type PaymentInstructions struct {
	InstructionsNotes   string              `json:"instructionsNotes,omitempty"`
	IsPlatformAccount   bool                `json:"isPlatformAccount"`
	AccountOrWalletInfo AccountOrWalletInfo `json:"accountOrWalletInfo"`
}

// AccountOrWalletInfo is one way to pay: a bank account (by accountType,
// with that scheme's fields) or a wallet address.
type AccountOrWalletInfo struct {
	AccountType   string   `json:"accountType"`
	PaymentRails  []string `json:"paymentRails,omitempty"`
	AccountNumber string   `json:"accountNumber,omitempty"`
	RoutingNumber string   `json:"routingNumber,omitempty"`
	IBAN          string   `json:"iban,omitempty"`
	SwiftCode     string   `json:"swiftCode,omitempty"`
	SortCode      string   `json:"sortCode,omitempty"`
	ClabeNumber   string   `json:"clabeNumber,omitempty"`
	PixKey        string   `json:"pixKey,omitempty"`
	PixKeyType    string   `json:"pixKeyType,omitempty"`
	Country       string   `json:"country,omitempty"`
	BankName      string   `json:"bankName,omitempty"`
	Address       string   `json:"address,omitempty"`
	Network       string   `json:"network,omitempty"`
	AssetType     string   `json:"assetType,omitempty"`
	Reference     string   `json:"reference,omitempty"`
}

// CardCapabilities say what a card funded by the account could do: those
// of the card program that funds from accounts of its type and currency
// (CardPrograms), all false when none does.
type CardCapabilities struct {
	SupportsSpendLimits               bool `json:"supportsSpendLimits"`
	SupportsSpendLimitsAtIssuance     bool `json:"supportsSpendLimitsAtIssuance"`
	SupportsTransactionCountLimit     bool `json:"supportsTransactionCountLimit"`
	Supports3dSecurePassword          bool `json:"supports3dSecurePassword"`
	SupportsPanReveal                 bool `json:"supportsPanReveal"`
	SupportsDigitalWalletTokenization bool `json:"supportsDigitalWalletTokenization"`
}

// CardPrograms, registered by package cards (as drivers register with
// database/sql), gives the capabilities of the cards an account of that type
// and currency may fund, and whether any card program funds from it.
var CardPrograms func(accountType, currency string) (CardCapabilities, bool)

// RoutingRule is what a RULE_BASED account does with money it receives: it
// sweeps all of it, at once, to the destination account (R-IACCT-07).
type RoutingRule struct {
	DestinationAccountID string `json:"destinationAccountId"`
}

// CreateRequest is the body of POST /internal-accounts.
type CreateRequest struct {
	Type        *string           `json:"type"`
	CustomerID  *string           `json:"customerId"`
	Currency    *string           `json:"currency"`
	RoutingRule *RoutingRuleInput `json:"routingRule"`
}

// RoutingRuleInput is a routing rule as sent; the destination defaults to
// the owner's USD account.
type RoutingRuleInput struct {
	DestinationAccountID *string `json:"destinationAccountId"`
}

// Validate checks a create request on its own (R-IACCT-03, R-IACCT-04,
// R-ERR-02); the service checks the customer and the destination.
func (r *CreateRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Type == nil:
		f.Add("type", apierr.Required, "is required; only RULE_BASED accounts are created this way")
	case *r.Type != TypeRuleBased:
		f.Add("type", apierr.Enum, "must be RULE_BASED: the other account types are provisioned automatically for the platform and each customer, per supported currency")
	}
	if r.CustomerID != nil && !id.Valid(id.Customer, *r.CustomerID) {
		f.Add("customerId", apierr.Pattern, "must be a customer id such as Customer:0199a1b2-…; omit it for a platform account")
	}
	if r.Currency != nil && *r.Currency != RuleBasedCurrency {
		f.Add("currency", apierr.Enum, "must be USD: rule-based accounts hold US dollars only")
	}
	if r.RoutingRule != nil && r.RoutingRule.DestinationAccountID != nil && !id.Valid(id.InternalAccount, *r.RoutingRule.DestinationAccountID) {
		f.Add("routingRule.destinationAccountId", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
	}
	return f.Err()
}

// FundRequest is the body of POST /sandbox/internal-accounts/{accountId}/fund.
type FundRequest struct {
	Amount *int64 `json:"amount"`
	// Currency, when sent, must be the account's.
	Currency *string `json:"currency"`
	// Reference is what the depositor quoted; it defaults to the account's
	// funding reference.
	Reference *string `json:"reference"`
}

// MaxReferenceLength bounds a deposit's reference (a wire's
// originator-to-beneficiary information is 140 characters).
const MaxReferenceLength = 140

// Validate checks a fund request on its own.
func (r *FundRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.Amount == nil:
		f.Add("amount", apierr.Required, "is required: the deposit in the account currency's smallest unit")
	case *r.Amount < 1:
		f.Add("amount", apierr.Minimum, "must be at least 1 (the currency's smallest unit)")
	case *r.Amount > MaxFundAmount:
		f.Add("amount", apierr.Maximum, "must be at most %d", int64(MaxFundAmount))
	}
	if r.Currency != nil && (len(*r.Currency) < 3 || len(*r.Currency) > 5 || strings.ToUpper(*r.Currency) != *r.Currency) {
		f.Add("currency", apierr.Pattern, "must be a currency code such as USD")
	}
	if r.Reference != nil {
		switch n := len([]rune(*r.Reference)); {
		case n < 1:
			f.Add("reference", apierr.MinLength, "must not be empty; omit it to use the account's reference")
		case n > MaxReferenceLength:
			f.Add("reference", apierr.MaxLength, "must be at most %d characters", MaxReferenceLength)
		}
	}
	return f.Err()
}

// ConfirmStatementRequest is the body of POST
// /internal-accounts/{id}/confirm-statement.
type ConfirmStatementRequest struct {
	StatementMonth *string `json:"statementMonth"`
}

// StatementConfirmation is the answer to confirm-statement: the month and
// when its delivery to the customer was first confirmed.
type StatementConfirmation struct {
	AccountID      string    `json:"accountId"`
	StatementMonth string    `json:"statementMonth"`
	ConfirmedAt    time.Time `json:"confirmedAt"`
	// FetchedAt is when the platform first fetched that exact month's
	// balance changes, if it did.
	FetchedAt *time.Time `json:"fetchedAt,omitempty"`
}

// BalanceChange is one row of a statement (R-STMT-04): a posted change of
// the account's balance, signed, fees included.
type BalanceChange struct {
	ID            string    `json:"id"`
	Amount        int64     `json:"amount"`
	EffectiveAt   time.Time `json:"effectiveAt"`
	TransactionID string    `json:"transactionId,omitempty"`
}
