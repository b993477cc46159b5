package quotes

import (
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/sca"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Quote statuses (R-QUOTE-21; the quote follows its transaction).
const (
	StatusPending              = "PENDING"
	StatusPendingAuthorization = "PENDING_AUTHORIZATION"
	StatusProcessing           = "PROCESSING"
	StatusCompleted            = "COMPLETED"
	StatusFailed               = "FAILED"
	StatusExpired              = "EXPIRED"
)

// Source and destination types.
const (
	SourceAccount         = "ACCOUNT"
	SourceRealtimeFunding = "REALTIME_FUNDING"
	DestAccount           = "ACCOUNT"
	DestUMAAddress        = "UMA_ADDRESS"
)

// Limits of the request's strings (Part B "Limits").
const (
	MaxRemittanceInformation = 80
	MaxStatementDescriptor   = 10
	MaxDescription           = 1024
	MaxDocuments             = 3
)

// PurposesOfPayment is the PurposeOfPayment enumeration (Part A).
var PurposesOfPayment = []string{"GIFT", "SELF", "GOODS_OR_SERVICES", "EDUCATION", "HEALTH_OR_MEDICAL",
	"REAL_ESTATE_PURCHASE", "TAX_PAYMENT", "LOAN_PAYMENT", "UTILITY_BILL", "DONATION", "TRAVEL", "FAMILY_SUPPORT",
	"SALARY_PAYMENT", "EXPORTED_GOODS_PREPAYMENT", "EXPORTED_GOODS_POSTPAYMENT", "SERVICE_CHARGES", "OFFICE_EXPENSES",
	"DELIVERY_FEES", "HOTEL_ACCOMMODATION", "COMMISSION_ON_GOODS", "COMMISSION_ON_SERVICES", "ACCOUNTING_SERVICES",
	"EXHIBITION_SERVICES", "OTHER"}

// PurposeRequired lists the receiving currencies whose corridor needs a
// purposeOfPayment (R-QUOTE-19: India).
var PurposeRequired = []string{"INR"}

// PaymentRails are the destination rails a request may name.
var PaymentRails = []string{pricing.RailACH, pricing.RailACHSameDay, pricing.RailWire, pricing.RailRTP,
	pricing.RailFedNow, "NEFT", pricing.RailFasterPayments, pricing.RailUPI, pricing.RailOnchain, pricing.RailSEPA,
	pricing.RailSEPAInstant, "IMPS", pricing.RailSPEI, pricing.RailPIX, pricing.RailPayNow, "FAST",
	pricing.RailInstaPay, pricing.RailBreB, pricing.RailMobileMoney, "UNIONPAY", "RTGS", "PESONET", "CIPS", "EFT",
	"ACH_COLOMBIA", pricing.RailSWIFT, pricing.RailLightning, "SPARK", pricing.RailBankTransfer}

// SourceIn is the request's source.
type SourceIn struct {
	SourceType    *string `json:"sourceType"`
	AccountID     *string `json:"accountId"`
	CustomerID    *string `json:"customerId"`
	Currency      *string `json:"currency"`
	CryptoNetwork *string `json:"cryptoNetwork"`
}

// DestinationIn is the request's destination.
type DestinationIn struct {
	DestinationType *string `json:"destinationType"`
	AccountID       *string `json:"accountId"`
	PaymentRail     *string `json:"paymentRail"`
	UmaAddress      *string `json:"umaAddress"`
	Currency        *string `json:"currency"`
}

// Request is the body of POST /quotes.
type Request struct {
	Source                *SourceIn                    `json:"source"`
	Destination           *DestinationIn               `json:"destination"`
	LockedCurrencySide    *string                      `json:"lockedCurrencySide"`
	LockedCurrencyAmount  *int64                       `json:"lockedCurrencyAmount"`
	ImmediatelyExecute    *bool                        `json:"immediatelyExecute"`
	RemittanceInformation *string                      `json:"remittanceInformation"`
	StatementDescriptor   *string                      `json:"statementDescriptor"`
	Description           *string                      `json:"description"`
	PurposeOfPayment      *string                      `json:"purposeOfPayment"`
	DocumentIDs           []string                     `json:"documentIds"`
	LookupID              *string                      `json:"lookupId"`
	PlatformFeeOverride   *pricing.PlatformFeeOverride `json:"platformFeeOverride"`
	SenderCustomerInfo    map[string]string            `json:"senderCustomerInfo"`
	// ScaFactor is the preferred factor of the SCA challenge a quote of a
	// customer who needs SCA carries (default SMS_OTP when enrolled).
	ScaFactor *string `json:"scaFactor"`

	// Set by package agents, never from a request body: a CHAIN_ADDRESS
	// destination shown with its address, and the least the quote may
	// deliver when it executes (R-AGENT-30).
	ChainAddress           *string `json:"-"`
	MinimumReceivingAmount *int64  `json:"-"`
	// AgentID is the agent asking for the quote: its transaction records
	// the agent from the start (R-TXN-38).
	AgentID string `json:"-"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Validate checks what can be checked from the request alone, listing every
// invalid field (R-QUOTE-02..20).
func (r *Request) Validate() error {
	var f apierr.Fields
	switch {
	case r.Source == nil:
		f.Add("source", apierr.Required, "is required")
	default:
		switch str(r.Source.SourceType) {
		case "":
			f.Add("source.sourceType", apierr.Required, "is required: ACCOUNT or REALTIME_FUNDING")
		case SourceAccount:
			if str(r.Source.AccountID) == "" {
				f.Add("source.accountId", apierr.Required, "is required for an ACCOUNT source")
			}
		case SourceRealtimeFunding:
			if str(r.Source.CustomerID) == "" {
				f.Add("source.customerId", apierr.Required, "is required for a REALTIME_FUNDING source")
			}
			if str(r.Source.Currency) == "" {
				f.Add("source.currency", apierr.Required, "is required for a REALTIME_FUNDING source")
			} else if _, ok := currency.Lookup(*r.Source.Currency); !ok {
				f.Add("source.currency", apierr.Enum, "is not a currency this server knows")
			}
		default:
			f.Add("source.sourceType", apierr.Enum, "must be ACCOUNT or REALTIME_FUNDING")
		}
	}
	switch {
	case r.Destination == nil:
		f.Add("destination", apierr.Required, "is required")
	default:
		d := r.Destination
		switch str(d.DestinationType) {
		case "":
			f.Add("destination.destinationType", apierr.Required, "is required: ACCOUNT or UMA_ADDRESS")
		case DestAccount:
			if str(d.AccountID) == "" {
				f.Add("destination.accountId", apierr.Required, "is required for an ACCOUNT destination")
			}
		case DestUMAAddress:
			if str(d.UmaAddress) == "" {
				f.Add("destination.umaAddress", apierr.Required, "is required for a UMA_ADDRESS destination")
			}
			if str(d.Currency) == "" {
				f.Add("destination.currency", apierr.Required, "is required for a UMA_ADDRESS destination")
			}
			if str(r.LookupID) == "" {
				f.Add("lookupId", apierr.Required, "is required for a UMA_ADDRESS destination (from GET /receiver/uma/{receiverUmaAddress})")
			}
		default:
			f.Add("destination.destinationType", apierr.Enum, "must be ACCOUNT or UMA_ADDRESS")
		}
		if d.PaymentRail != nil && !slices.Contains(PaymentRails, *d.PaymentRail) {
			f.Add("destination.paymentRail", apierr.Enum, "is not a payment rail this server knows")
		}
	}
	switch str(r.LockedCurrencySide) {
	case "":
		f.Add("lockedCurrencySide", apierr.Required, "is required: SENDING or RECEIVING")
	case string(pricing.Sending), string(pricing.Receiving):
	default:
		f.Add("lockedCurrencySide", apierr.Enum, "must be SENDING or RECEIVING")
	}
	if r.LockedCurrencyAmount == nil {
		f.Add("lockedCurrencyAmount", apierr.Required, "is required, an integer in the smallest unit")
	} else if *r.LockedCurrencyAmount <= 0 {
		f.Add("lockedCurrencyAmount", apierr.Minimum, "must be a positive integer in the smallest unit")
	} else if *r.LockedCurrencyAmount > ledger.MaxAmount {
		f.Add("lockedCurrencyAmount", apierr.Maximum, "must be at most %d (the largest amount the ledger takes)", ledger.MaxAmount)
	}
	if r.RemittanceInformation != nil && utf8.RuneCountInString(*r.RemittanceInformation) > MaxRemittanceInformation {
		f.Add("remittanceInformation", apierr.MaxLength, "must be at most %d characters", MaxRemittanceInformation)
	}
	if r.StatementDescriptor != nil && utf8.RuneCountInString(*r.StatementDescriptor) > MaxStatementDescriptor {
		f.Add("statementDescriptor", apierr.MaxLength, "must be at most %d characters", MaxStatementDescriptor)
	}
	if r.Description != nil && utf8.RuneCountInString(*r.Description) > MaxDescription {
		f.Add("description", apierr.MaxLength, "must be at most %d characters", MaxDescription)
	}
	if r.PurposeOfPayment != nil && !slices.Contains(PurposesOfPayment, *r.PurposeOfPayment) {
		f.Add("purposeOfPayment", apierr.Enum, "is not a PurposeOfPayment value")
	}
	if r.ScaFactor != nil && *r.ScaFactor != sca.FactorSMS && *r.ScaFactor != sca.FactorTOTP && *r.ScaFactor != sca.FactorPasskey {
		f.Add("scaFactor", apierr.Enum, "must be SMS_OTP, TOTP or PASSKEY")
	}
	if len(r.DocumentIDs) > MaxDocuments {
		f.Add("documentIds", apierr.MaxItems, "may hold at most %d document ids", MaxDocuments)
	}
	return f.Err()
}

// QuoteSource is the quote's source as answered.
type QuoteSource struct {
	SourceType string `json:"sourceType"`
	AccountID  string `json:"accountId,omitempty"`
	CustomerID string `json:"customerId,omitempty"`
	Currency   string `json:"currency,omitempty"`
}

// QuoteDestination is the quote's destination as answered.
type QuoteDestination struct {
	DestinationType string `json:"destinationType"`
	AccountID       string `json:"accountId,omitempty"`
	PaymentRail     string `json:"paymentRail,omitempty"`
	UmaAddress      string `json:"umaAddress,omitempty"`
	Currency        string `json:"currency,omitempty"`
	Address         string `json:"address,omitempty"`
}

// DestChainAddress is an agent quote's destination: a chain address paid in
// USDB (R-AGENT-30).
const DestChainAddress = "CHAIN_ADDRESS"

// Quote is the API resource (Part A "Quote").
type Quote struct {
	ID                      string              `json:"id"`
	Status                  string              `json:"status"`
	CreatedAt               time.Time           `json:"createdAt"`
	ExpiresAt               time.Time           `json:"expiresAt"`
	Source                  QuoteSource         `json:"source"`
	Destination             QuoteDestination    `json:"destination"`
	SendingCurrency         currency.Currency   `json:"sendingCurrency"`
	ReceivingCurrency       currency.Currency   `json:"receivingCurrency"`
	TotalSendingAmount      int64               `json:"totalSendingAmount"`
	TotalReceivingAmount    int64               `json:"totalReceivingAmount"`
	ExchangeRate            json.Number         `json:"exchangeRate"`
	FeesIncluded            int64               `json:"feesIncluded"`
	PlatformFeesIncluded    int64               `json:"platformFeesIncluded"`
	TransactionID           string              `json:"transactionId"`
	PaymentInstructions     json.RawMessage     `json:"paymentInstructions,omitempty"`
	CounterpartyInformation map[string]string   `json:"counterpartyInformation,omitempty"`
	RateDetails             pricing.RateDetails `json:"rateDetails"`
	PurposeOfPayment        string              `json:"purposeOfPayment,omitempty"`
	DocumentIDs             []string            `json:"documentIds,omitempty"`
	Description             string              `json:"description,omitempty"`
	RemittanceInformation   string              `json:"remittanceInformation,omitempty"`
	StatementDescriptor     string              `json:"statementDescriptor,omitempty"`
	LockedCurrencySide      string              `json:"lockedCurrencySide"`
	LockedCurrencyAmount    int64               `json:"lockedCurrencyAmount"`
	// ScaChallenge is the challenge to satisfy now while the quote is
	// PENDING_AUTHORIZATION (R-SCA-04, R-SCA-06).
	ScaChallenge *sca.Challenge `json:"scaChallenge,omitempty"`
	// ScaExemption names the exemption under which a quote of a customer
	// who needs SCA carries no challenge (LOW_VALUE, TRUSTED_BENEFICIARY).
	ScaExemption           string `json:"scaExemption,omitempty"`
	MinimumReceivingAmount int64  `json:"minimumReceivingAmount,omitempty"`
}

// How a quote's money is taken and where it goes.
const (
	FundInternal     = "INTERNAL"     // debit an internal account at execute
	FundInstructions = "INSTRUCTIONS" // paid into payment instructions; proceeds when funds arrive
	FundPull         = "PULL"         // pulled from an external account (transfer-in)

	ToInternal = "INTERNAL"
	ToExternal = "EXTERNAL"
	ToUMA      = "UMA" // another institution, over UMA (package uma)
)

// plan is what execution needs, stored with the quote.
type plan struct {
	Funding string `json:"funding"`
	// SourceInternalID is the internal account debited (for FundInstructions:
	// the source customer's account the funds arrive in).
	SourceInternalID  string `json:"sourceInternalId,omitempty"`
	SourceLedgerID    string `json:"sourceLedgerId,omitempty"`
	SourceExternalID  string `json:"sourceExternalId,omitempty"`
	SenderCustomerID  string `json:"senderCustomerId,omitempty"`
	To                string `json:"to"`
	DestInternalID    string `json:"destInternalId,omitempty"`
	DestLedgerID      string `json:"destLedgerId,omitempty"`
	DestCustomerID    string `json:"destCustomerId,omitempty"`
	DestExternalID    string `json:"destExternalId,omitempty"`
	Rail              string `json:"rail"`
	ImmediatelyExec   bool   `json:"immediatelyExecute,omitempty"`
	SendingCurrency   string `json:"sendingCurrency"`
	ReceivingCurrency string `json:"receivingCurrency"`
	// WalletPayload is set when the source is an EMBEDDED_WALLET: execution
	// needs a stamp over it by a session key of the wallet.
	WalletPayload string `json:"walletPayload,omitempty"`
	// WalletStamped: the stamp was checked when an SCA customer executed
	// the quote (its authorization then needs none).
	WalletStamped bool `json:"walletStamped,omitempty"`
	// SCA: the exemption applied, whether the customer authorized the
	// payout, the preferred factor, and the payment instructions withheld
	// until authorization.
	ScaExemption         string          `json:"scaExemption,omitempty"`
	ScaAuthorized        bool            `json:"scaAuthorized,omitempty"`
	ScaFactor            string          `json:"scaFactor,omitempty"`
	WithheldInstructions json.RawMessage `json:"withheldInstructions,omitempty"`
	// UMA destinations: the lookup, the receiver and the counterparty's
	// invoice (paid at execution), as quoted.
	UmaLookupID string `json:"umaLookupId,omitempty"`
	UmaAddress  string `json:"umaAddress,omitempty"`
	UmaInvoice  string `json:"umaInvoice,omitempty"`
	// owners are the platformCustomerIds of the customers whose internal
	// accounts the quote's request named, as resolve read them with the
	// accounts: never stored, so a stored quote's plan has none.
	owners map[string]string
}

// owner is customerID's platformCustomerId as resolve read it ("" for the
// platform's own), nil when it did not read it: the transaction's row is
// then read back from its insert (transactions.New.PlatformCustomerID).
func (p plan) owner(customerID string) *string {
	if customerID == "" {
		return new(string)
	}
	if v, ok := p.owners[customerID]; ok {
		return &v
	}
	return nil
}

// knowOwner records a's owner's platformCustomerId (read with a).
func (p *plan) knowOwner(a store.InternalAccount) {
	if a.CustomerID == "" {
		return
	}
	if p.owners == nil {
		p.owners = map[string]string{}
	}
	p.owners[a.CustomerID] = a.PlatformCustomerID
}

// document is the stored JSON of a quote.
type document struct {
	Quote Quote `json:"quote"`
	Plan  plan  `json:"plan"`
}
