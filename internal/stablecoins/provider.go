package stablecoins

import (
	"context"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Credentials are a provider account's API credentials, unsealed only to
// call the provider.
type Credentials struct {
	ClientID, Secret, AccountID string
}

// Verification is what a provider says of a set of credentials.
type Verification struct {
	// AccountID is the provider's account the credentials belong to.
	AccountID string
	// Usable is false when the credentials are genuine but the account may
	// not issue (the link is stored INVALID).
	Usable bool
}

// Token is a provider-created token as the provider describes it.
type Token struct {
	Name, Symbol, BaseCurrency string
	Decimals                   int
	IssuanceStatus             string
}

// Address is an external account the provider is asked to know (Brale
// calls them addresses): a bank account or an on-chain wallet.
type Address struct {
	ExternalAccountID string
	Bank              bool
	Network           string // wallets
	Value             string // the wallet address, or the bank account number
}

// Order asks the provider for a mint or a burn.
type Order struct {
	OperationID string
	Type        string
	ValueType   string // the provider token identifier
	Amount      int64  // token smallest unit
	FiatAmount  int64  // base currency smallest unit
	Currency    string // base currency
	Funding     string // mint: WIRE; burn: EXTERNAL_ACCOUNT
	Network     string
	SourceID    string // provider address id of the burn source wallet
	DestID      string // provider address id of the destination
	Rail        string // burn payout rail
}

// Transfer is the provider's view of an order.
type Transfer struct {
	ID     string
	Status string // provider vocabulary, see Provider* constants
	// Instructions are set while the provider waits for funds.
	Instructions *FundingInstructions
	// FailureReason is set with ProviderFailed.
	FailureReason string
	// CheckAfter is when the provider expects to have news.
	CheckAfter time.Time
}

// Provider transfer statuses (sanitized, as providerStatus shows them).
const (
	ProviderAwaitingFunds = "awaiting_funds"
	ProviderPending       = "pending"
	ProviderProcessing    = "processing"
	ProviderComplete      = "complete"
	ProviderFailed        = "failed"
)

// Provider is a stablecoin provider's API. Every call may fail with an
// *apierr.Error (STABLECOIN_* codes) meant for the client.
type Provider interface {
	Environment() string
	Verify(ctx context.Context, c Credentials) (Verification, error)
	Token(ctx context.Context, c Credentials, valueType, network, networkTokenID string) (Token, error)
	LinkAddress(ctx context.Context, c Credentials, a Address) (string, error)
	CreateTransfer(ctx context.Context, c Credentials, o Order, now time.Time) (Transfer, error)
	// Refresh reports the transfer's current state: what the provider's
	// transfer webhook would say at now.
	Refresh(ctx context.Context, c Credentials, o Order, t Transfer, now time.Time) (Transfer, error)
}

// Production is the production provider adapter. No provider endpoint is
// configured in this deployment, so every call refuses with
// STABLECOIN_PROVIDER_ERROR and says why; it never pretends to succeed.
type Production struct{}

func (p Production) refuse() error {
	return apierr.New("STABLECOIN_PROVIDER_ERROR",
		"No BRALE production endpoint is configured for this service; production stablecoin operations are unavailable")
}

func (p Production) Environment() string { return EnvProduction }

func (p Production) Verify(context.Context, Credentials) (Verification, error) {
	return Verification{}, p.refuse()
}

func (p Production) Token(context.Context, Credentials, string, string, string) (Token, error) {
	return Token{}, p.refuse()
}

func (p Production) LinkAddress(context.Context, Credentials, Address) (string, error) {
	return "", p.refuse()
}

func (p Production) CreateTransfer(context.Context, Credentials, Order, time.Time) (Transfer, error) {
	return Transfer{}, p.refuse()
}

func (p Production) Refresh(context.Context, Credentials, Order, Transfer, time.Time) (Transfer, error) {
	return Transfer{}, p.refuse()
}
