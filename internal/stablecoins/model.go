// Package stablecoins is stablecoin issuance: provider account links whose
// API credentials are kept sealed, registered provider-created stablecoins,
// and issuer operations (mints against fiat, burns back to fiat) carried by
// the provider asynchronously and recorded in the ledger.
//
// A provider is reached through the Provider interface: Sandbox simulates
// the provider the reference names (BRALE) durably, Production refuses with
// STABLECOIN_PROVIDER_ERROR while no provider endpoint is configured.
// Operations move through one transition table (transition.go); the
// background Runner advances due operations, each step in one database
// transaction with its ledger transfers and webhook events, so a restart
// neither loses nor repeats a step.
//
// Ledger (package ledger moves the money): per stablecoin, a SYSTEM account
// STABLECOIN_SUPPLY in the token's own unit (currency = the stablecoin id)
// and the tenant's WORLD account in that unit; a mint posts supply −N,
// world +N, so the issued supply is −balance(STABLECOIN_SUPPLY) = Σ mints −
// Σ burns. The fiat side moves between WORLD and the stablecoin's
// STABLECOIN_RESERVE account in its base currency.
package stablecoins

import (
	"encoding/json"
	"time"
)

// Providers and environments.
const (
	ProviderBrale = "BRALE"

	EnvSandbox    = "SANDBOX"
	EnvProduction = "PRODUCTION"
)

// Provider account link statuses.
const (
	AccountActive  = "ACTIVE"
	AccountInvalid = "INVALID"
	AccountRevoked = "REVOKED"
)

// Issuance statuses (the provider's, for the registered token).
const (
	IssuancePendingReview = "PENDING_REVIEW"
	IssuanceProvisioning  = "PROVISIONING"
	IssuanceProvisioned   = "PROVISIONED"
	IssuanceRejected      = "REJECTED"
	IssuanceFailed        = "FAILED"
)

// Service-operations (gridOperationsStatus) statuses.
const (
	GridNotEnabled      = "NOT_ENABLED"
	GridPendingApproval = "PENDING_APPROVAL"
	GridEnabling        = "ENABLING"
	GridEnabled         = "ENABLED"
	GridDisabled        = "DISABLED"
)

// Operation types and statuses.
const (
	TypeMint = "MINT"
	TypeBurn = "BURN"

	StatusCreated         = "CREATED"
	StatusPendingFunding  = "PENDING_FUNDING"
	StatusPendingProvider = "PENDING_PROVIDER"
	StatusProcessing      = "PROCESSING"
	StatusCompleted       = "COMPLETED"
	StatusFailed          = "FAILED"
	StatusExpired         = "EXPIRED"
)

// Networks a stablecoin may live on (the reference names SPARK).
const NetworkSpark = "SPARK"

// Mint funding and burn source types, and burn payout rails.
const (
	SourceWire                    = "WIRE"
	SourceACHDebit                = "ACH_DEBIT"
	SourceSameDayACHDebit         = "SAME_DAY_ACH_DEBIT"
	SourceExternalAccount         = "EXTERNAL_ACCOUNT"
	SourceGridInternalAccount     = "GRID_INTERNAL_ACCOUNT"
	SourceProviderInternalBalance = "PROVIDER_INTERNAL_BALANCE"

	RailWire          = "WIRE"
	RailACHCredit     = "ACH_CREDIT"
	RailSameDayCredit = "SAME_DAY_ACH_CREDIT"
	RailRTPCredit     = "RTP_CREDIT"
)

// Ledger account codes.
const (
	CodeSupply  = "STABLECOIN_SUPPLY"
	CodeReserve = "STABLECOIN_RESERVE"
)

// ProviderAccount is a provider account link as the API shows it: never
// its credentials.
type ProviderAccount struct {
	ID                  string     `json:"id"`
	Provider            string     `json:"provider"`
	ProviderAccountID   string     `json:"providerAccountId"`
	ProviderEnvironment string     `json:"providerEnvironment"`
	Status              string     `json:"status"`
	LastVerifiedAt      *time.Time `json:"lastVerifiedAt,omitempty"`
	CreatedAt           time.Time  `json:"createdAt"`
	UpdatedAt           time.Time  `json:"updatedAt"`
}

// Stablecoin is a registered stablecoin.
type Stablecoin struct {
	ID                          string    `json:"id"`
	Name                        string    `json:"name"`
	Symbol                      string    `json:"symbol"`
	BaseCurrency                string    `json:"baseCurrency"`
	Network                     string    `json:"network"`
	Decimals                    int       `json:"decimals"`
	IssuanceStatus              string    `json:"issuanceStatus"`
	GridOperationsStatus        string    `json:"gridOperationsStatus"`
	NetworkTokenIdentifier      string    `json:"networkTokenIdentifier"`
	Currency                    string    `json:"currency,omitempty"`
	Provider                    string    `json:"provider"`
	StablecoinProviderAccountID string    `json:"stablecoinProviderAccountId"`
	ProviderEnvironment         string    `json:"providerEnvironment"`
	ProviderTokenIdentifier     string    `json:"providerTokenIdentifier"`
	CreatedAt                   time.Time `json:"createdAt"`
	UpdatedAt                   time.Time `json:"updatedAt"`
}

// OperationSource is where an operation's value comes from.
type OperationSource struct {
	Type                  string `json:"type"`
	ExternalAccountID     string `json:"externalAccountId,omitempty"`
	AccountID             string `json:"accountId,omitempty"`
	SourceTokenIdentifier string `json:"sourceTokenIdentifier,omitempty"`
	CryptoNetwork         string `json:"cryptoNetwork,omitempty"`
}

// OperationDestination is where an operation's value goes.
type OperationDestination struct {
	AccountID string `json:"accountId"`
	Rail      string `json:"rail,omitempty"`
}

// FundingInstructions say where to send the value that funds an operation:
// a wire to the provider's bank account (mints) or tokens to the
// provider's address (burns from an external wallet).
type FundingInstructions struct {
	Rail          string `json:"rail"`
	Network       string `json:"network,omitempty"`
	Address       string `json:"address,omitempty"`
	ValueType     string `json:"valueType,omitempty"`
	BankName      string `json:"bankName,omitempty"`
	AccountNumber string `json:"accountNumber,omitempty"`
	RoutingNumber string `json:"routingNumber,omitempty"`
	Reference     string `json:"reference,omitempty"`
	Amount        string `json:"amount,omitempty"`
	Currency      string `json:"currency,omitempty"`
}

// EstimatedDelivery is a burn's fiat payout estimate.
type EstimatedDelivery struct {
	Rail     string `json:"rail"`
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
	Timing   string `json:"timing"`
}

// Operation is an issuer operation as the API shows it.
type Operation struct {
	ID                          string                `json:"id"`
	StablecoinID                string                `json:"stablecoinId"`
	OperationType               string                `json:"operationType"`
	Status                      string                `json:"status"`
	Amount                      string                `json:"amount"`
	Provider                    string                `json:"provider"`
	ProviderEnvironment         string                `json:"providerEnvironment"`
	StablecoinProviderAccountID string                `json:"stablecoinProviderAccountId"`
	Source                      *OperationSource      `json:"source,omitempty"`
	FundingInstructions         *FundingInstructions  `json:"fundingInstructions,omitempty"`
	Destination                 *OperationDestination `json:"destination,omitempty"`
	EstimatedDelivery           *EstimatedDelivery    `json:"estimatedDelivery,omitempty"`
	ExpiresAt                   *time.Time            `json:"expiresAt,omitempty"`
	ProviderStatus              string                `json:"providerStatus,omitempty"`
	FailureReason               string                `json:"failureReason,omitempty"`
	Description                 string                `json:"description,omitempty"`
	CreatedAt                   time.Time             `json:"createdAt"`
	UpdatedAt                   time.Time             `json:"updatedAt"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled
	}
	return b
}
