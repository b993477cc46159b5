// Package transactions is the Transaction resource (Part A "Transaction"):
// the record the API reports for money that moved, its storage and its
// events. Money itself moves only through package ledger; a capability that
// moves money writes the ledger transfer and the transaction in one database
// transaction (Record), with the transfer's reference set to the
// transaction's id, so statements can link a balance change to its
// transaction. It knows nothing about HTTP.
//
// Issue 4 creates INCOMING transactions (sandbox deposits and rule-based
// sweeps); outgoing payments and quotes extend the same record.
package transactions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Types (R-TXN-06).
const (
	TypeIncoming = "INCOMING"
	TypeOutgoing = "OUTGOING"
	TypeCard     = "CARD"
)

// Types is the enumeration of the type filter.
var Types = []string{TypeIncoming, TypeOutgoing, TypeCard}

// Directions (R-TXN-06).
const (
	Credit = "CREDIT"
	Debit  = "DEBIT"
)

// Statuses named by Part A (R-TXN-41) and the reference's list; a transaction
// may report others later (R-VER-02).
const (
	StatusCreated              = "CREATED"
	StatusPending              = "PENDING"
	StatusPendingAuthorization = "PENDING_AUTHORIZATION"
	StatusProcessing           = "PROCESSING"
	StatusCompleted            = "COMPLETED"
	StatusRejected             = "REJECTED"
	StatusFailed               = "FAILED"
	StatusRefunded             = "REFUNDED"
	StatusExpired              = "EXPIRED"
)

// Statuses is the enumeration of the status filter.
var Statuses = []string{StatusCreated, StatusPending, StatusPendingAuthorization, StatusProcessing, StatusCompleted,
	StatusRejected, StatusFailed, StatusRefunded, StatusExpired}

// pendingReason values (R-TXN-30): why a PENDING transaction is held. The
// spec names COUNTERPARTY_DECLARATION_REQUIRED; the others are the
// reference's. Only COMPLIANCE_REVIEW is set today (an incoming payment
// waiting for the platform's approval); the other three belong to incoming
// deposits from self-custody crypto wallets, which the service does not
// receive yet.
const (
	PendingCounterpartyDeclarationRequired = "COUNTERPARTY_DECLARATION_REQUIRED"
	PendingWalletVerificationRequired      = "WALLET_VERIFICATION_REQUIRED"
	PendingCounterpartyInformationRequired = "COUNTERPARTY_INFORMATION_REQUIRED"
	PendingComplianceReview                = "COMPLIANCE_REVIEW"
)

// PendingReasons are the pendingReason values.
var PendingReasons = []string{PendingCounterpartyDeclarationRequired, PendingWalletVerificationRequired,
	PendingCounterpartyInformationRequired, PendingComplianceReview}

// Source and destination types.
const (
	SideAccount         = "ACCOUNT"
	SideRealtimeFunding = "REALTIME_FUNDING"
)

// CurrencyAmount is an amount in a currency's smallest unit (R-CONV-06).
type CurrencyAmount struct {
	Amount   int64             `json:"amount"`
	Currency currency.Currency `json:"currency"`
}

// Amount builds a CurrencyAmount of a known currency code.
func Amount(amount int64, code string) CurrencyAmount {
	c, ok := currency.Lookup(code)
	if !ok {
		c = currency.Currency{Code: code, Name: code, Symbol: code}
	}
	return CurrencyAmount{Amount: amount, Currency: c}
}

// Source is where a transaction's money came from (R-TXN-25, R-TXN-26): an
// account of this service, or an external funding source described by the
// flat originator fields.
type Source struct {
	SourceType string `json:"sourceType"`
	AccountID  string `json:"accountId,omitempty"`
	Currency   string `json:"currency,omitempty"`
	CustomerID string `json:"customerId,omitempty"`

	AccountHolderName     string `json:"accountHolderName,omitempty"`
	AccountIdentifier     string `json:"accountIdentifier,omitempty"`
	BankName              string `json:"bankName,omitempty"`
	BankIdentifier        string `json:"bankIdentifier,omitempty"`
	PaymentRail           string `json:"paymentRail,omitempty"`
	RemittanceInformation string `json:"remittanceInformation,omitempty"`
	EndToEndID            string `json:"endToEndId,omitempty"`
	TraceNumber           string `json:"traceNumber,omitempty"`

	// RailDetails is the per-rail record of this side (R-TXN-19; package
	// rails defines the shapes), OnChainTransaction its deprecated
	// on-chain form (R-TXN-24).
	RailDetails        json.RawMessage `json:"railDetails,omitempty"`
	OnChainTransaction json.RawMessage `json:"onChainTransaction,omitempty"`
}

// Destination is where a transaction's money went.
type Destination struct {
	DestinationType string `json:"destinationType"`
	AccountID       string `json:"accountId,omitempty"`
	Currency        string `json:"currency,omitempty"`
	// PaymentRail is the rail the payout was asked to use (quotes).
	PaymentRail        string          `json:"paymentRail,omitempty"`
	RailDetails        json.RawMessage `json:"railDetails,omitempty"`
	OnChainTransaction json.RawMessage `json:"onChainTransaction,omitempty"`
}

// Refund reports the refund of a transaction (R-TXN-31).
type Refund struct {
	Reference   string     `json:"reference"`
	InitiatedAt time.Time  `json:"initiatedAt"`
	Status      string     `json:"status"`
	SettledAt   *time.Time `json:"settledAt,omitempty"`
	Reason      string     `json:"reason,omitempty"`
}

// Refund statuses (R-TXN-40).
const (
	RefundPending   = "PENDING"
	RefundCompleted = "COMPLETED"
	RefundFailed    = "FAILED"
)

// ReconciliationInstructions match a payment to its transaction (R-TXN-17).
type ReconciliationInstructions struct {
	Reference string `json:"reference,omitempty"`
	// TransactionHash reports the inter-institution settlement leg of a UMA
	// payment: the Lightning payment hash (R-TXN-17).
	TransactionHash string `json:"transactionHash,omitempty"`
}

// Transaction is the API's transaction.
type Transaction struct {
	ID                 string          `json:"id"`
	Status             string          `json:"status"`
	Type               string          `json:"type"`
	Direction          string          `json:"direction"`
	Source             Source          `json:"source"`
	Destination        Destination     `json:"destination"`
	CustomerID         string          `json:"customerId,omitempty"`
	PlatformCustomerID string          `json:"platformCustomerId,omitempty"`
	RuleBasedAccountID string          `json:"ruleBasedAccountId,omitempty"`
	SentAmount         CurrencyAmount  `json:"sentAmount"`
	ReceivedAmount     *CurrencyAmount `json:"receivedAmount,omitempty"`
	ExchangeRate       json.Number     `json:"exchangeRate,omitempty"`
	Fees               int64           `json:"fees"`
	// Outgoing only: platformFees (inside fees), the settling rail (null
	// until known), rateDetails and paymentInstructions (R-TXN-08..12).
	PlatformFees               *int64                      `json:"platformFees,omitempty"`
	PaymentRail                json.RawMessage             `json:"paymentRail,omitempty"`
	RateDetails                json.RawMessage             `json:"rateDetails,omitempty"`
	PaymentInstructions        json.RawMessage             `json:"paymentInstructions,omitempty"`
	CounterpartyInformation    json.RawMessage             `json:"counterpartyInformation,omitempty"`
	Refund                     *Refund                     `json:"refund,omitempty"`
	ReconciliationInstructions *ReconciliationInstructions `json:"reconciliationInstructions,omitempty"`
	QuoteID                    string                      `json:"quoteId,omitempty"`
	Description                string                      `json:"description,omitempty"`
	FailureReason              string                      `json:"failureReason,omitempty"`
	PendingReason              string                      `json:"pendingReason,omitempty"`
	// ScaExemption names the SCA exemption an outgoing payment went under
	// without a challenge (LOW_VALUE, TRUSTED_BENEFICIARY).
	ScaExemption string `json:"scaExemption,omitempty"`
	// AgentID is the agent that initiated the transaction (R-TXN-38).
	AgentID   string     `json:"agentId,omitempty"`
	SettledAt *time.Time `json:"settledAt,omitempty"`
	CreatedAt time.Time  `json:"createdAt"`
	UpdatedAt time.Time  `json:"updatedAt"`
	// CARD transactions only: the card fields, at the top level.
	*CardFields
}

// New describes a transaction to record.
type New struct {
	ID        string // required: also the reference of its ledger transfer
	Type      string
	Status    string
	Direction string
	// CustomerID owns the account concerned ("" for the platform).
	CustomerID         string
	AccountID          string // the internal account credited or debited
	Source             Source
	Destination        Destination
	SentAmount         int64
	SentCurrency       string
	ReceivedAmount     *int64
	ReceivedCurrency   string
	Fees               int64
	RuleBasedAccountID string
	Reference          string
	Description        string
	LedgerTransferID   string
	SettledAt          *time.Time

	// Outgoing payments (quotes).
	QuoteID                 string
	PaymentRail             string
	PlatformFees            int64
	ExchangeRate            string // decimal text; "" = unknown (1 is implied for one currency)
	RateDetails             json.RawMessage
	PaymentInstructions     json.RawMessage
	CounterpartyInformation json.RawMessage
	FailureReason           string
	HoldID                  string
	// PendingReason says why a PENDING transaction is held (R-TXN-30).
	PendingReason string
	// ScaExemption is the SCA exemption the payout went under (package sca).
	ScaExemption string

	// Card transactions (package cards).
	CardID      string
	CardDetails json.RawMessage

	// AgentID is the agent that initiated the transaction (R-TXN-38).
	AgentID string

	// PlatformCustomerID, when set, is CustomerID's platformCustomerId as
	// the caller read it with the customer (ignored for the platform's own
	// transactions): the row is then inserted with the database
	// transaction's last statement, with the other rows of its batch
	// (store.CreateTransactionAtCommit), not at once.
	PlatformCustomerID *string
}

// Record stores a transaction inside the caller's database transaction and
// emits its status event there (INCOMING_PAYMENT.<STATUS> or
// OUTGOING_PAYMENT.<STATUS>, data the transaction), so the record and its
// event commit with the money movement or not at all.
func Record(ctx context.Context, tx *store.Tx, t store.Tenant, n New) (Transaction, error) {
	out, _, err := RecordChanged(ctx, tx, t, n)
	return out, err
}

// newRow is the row of a transaction about to be stored.
func newRow(tx *store.Tx, t store.Tenant, n New) (store.Transaction, error) {
	if n.ID == "" || n.Type == "" || n.Status == "" || n.Direction == "" {
		return store.Transaction{}, errors.New("transactions: id, type, status and direction are required")
	}
	if n.PendingReason != "" && (n.Status != StatusPending || !slices.Contains(PendingReasons, n.PendingReason)) {
		return store.Transaction{}, fmt.Errorf("transactions: pendingReason %q on a %s transaction", n.PendingReason, n.Status)
	}
	src, err := json.Marshal(n.Source)
	if err != nil {
		return store.Transaction{}, err
	}
	dst, err := json.Marshal(n.Destination)
	if err != nil {
		return store.Transaction{}, err
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	return store.Transaction{
		ID: n.ID, Tenant: t, Type: n.Type, Status: n.Status, Direction: n.Direction, CustomerID: n.CustomerID,
		AccountID: n.AccountID, SourceAccountID: n.Source.AccountID, DestinationAccountID: n.Destination.AccountID,
		Source: src, Destination: dst, SentAmount: n.SentAmount, SentCurrency: n.SentCurrency,
		ReceivedAmount: n.ReceivedAmount, ReceivedCurrency: n.ReceivedCurrency, Fees: n.Fees,
		RuleBasedAccountID: n.RuleBasedAccountID, Reference: n.Reference, Description: n.Description,
		LedgerTransferID: n.LedgerTransferID, SettledAt: n.SettledAt, CreatedAt: now, UpdatedAt: now,
		QuoteID: n.QuoteID, PaymentRail: n.PaymentRail, PlatformFees: n.PlatformFees, ExchangeRate: n.ExchangeRate,
		// JSON columns as the store reads them back (empty is nil), so the
		// events rendered before the row is stored match it.
		RateDetails: nilIfEmpty(n.RateDetails), PaymentInstructions: nilIfEmpty(n.PaymentInstructions),
		CounterpartyInformation: nilIfEmpty(n.CounterpartyInformation), FailureReason: n.FailureReason, HoldID: n.HoldID,
		PendingReason: n.PendingReason,
		ScaExemption:  n.ScaExemption,
		CardID:        n.CardID, CardDetails: nilIfEmpty(n.CardDetails), AgentID: n.AgentID,
	}, nil
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// EventType is the event a transaction of typ entering status emits, or ""
// (card transactions have their own events).
func EventType(typ, status string) string {
	switch typ {
	case TypeIncoming:
		return events.IncomingPayment(status)
	case TypeOutgoing:
		return events.OutgoingPayment(status)
	}
	return ""
}

// Render builds the API transaction from its row.
func Render(row store.Transaction) (Transaction, error) {
	return new(renderer).render(row)
}

// renderer renders rows, parsing a source or destination only when its
// stored JSON differs from the one it parsed last: RecordChanged and
// change render one transaction once per step, its sides mostly unchanged.
// The parsed sides are shared between the renders; nothing mutates their
// RawMessage fields (events encode them as they are).
type renderer struct {
	srcRaw, dstRaw []byte
	src            Source
	dst            Destination
	parsed         bool
}

func (r *renderer) sides(row store.Transaction) (Source, Destination, error) {
	if r.parsed && bytes.Equal(row.Source, r.srcRaw) && bytes.Equal(row.Destination, r.dstRaw) {
		return r.src, r.dst, nil
	}
	var src Source
	var dst Destination
	if err := json.Unmarshal(row.Source, &src); err != nil {
		return Source{}, Destination{}, fmt.Errorf("transactions: stored source of %s: %w", row.ID, err)
	}
	if err := json.Unmarshal(row.Destination, &dst); err != nil {
		return Source{}, Destination{}, fmt.Errorf("transactions: stored destination of %s: %w", row.ID, err)
	}
	*r = renderer{srcRaw: row.Source, dstRaw: row.Destination, src: src, dst: dst, parsed: true}
	return src, dst, nil
}

func (r *renderer) render(row store.Transaction) (Transaction, error) {
	out := Transaction{
		ID: row.ID, Status: row.Status, Type: row.Type, Direction: row.Direction, CustomerID: row.CustomerID,
		PlatformCustomerID: row.PlatformCustomerID, RuleBasedAccountID: row.RuleBasedAccountID,
		SentAmount: Amount(row.SentAmount, row.SentCurrency), Fees: row.Fees, QuoteID: row.QuoteID,
		Description: row.Description, FailureReason: row.FailureReason, PendingReason: row.PendingReason,
		SettledAt: row.SettledAt, ScaExemption: row.ScaExemption, AgentID: row.AgentID,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	var err error
	if out.Source, out.Destination, err = r.sides(row); err != nil {
		return Transaction{}, err
	}
	if out.Source.OnChainTransaction == nil {
		out.Source.OnChainTransaction = onChain(out.Source.RailDetails)
	}
	if out.Destination.OnChainTransaction == nil {
		out.Destination.OnChainTransaction = onChain(out.Destination.RailDetails)
	}
	if row.ReceivedAmount != nil {
		r := Amount(*row.ReceivedAmount, row.ReceivedCurrency)
		out.ReceivedAmount = &r
		if row.ExchangeRate != "" {
			out.ExchangeRate = json.Number(row.ExchangeRate)
		} else if row.ReceivedCurrency == row.SentCurrency {
			out.ExchangeRate = "1"
		}
	}
	if len(row.RateDetails) > 0 {
		out.RateDetails = json.RawMessage(row.RateDetails)
	}
	if len(row.CounterpartyInformation) > 0 {
		out.CounterpartyInformation = json.RawMessage(row.CounterpartyInformation)
	}
	if len(row.Refund) > 0 {
		out.Refund = new(Refund)
		if err := json.Unmarshal(row.Refund, out.Refund); err != nil {
			return Transaction{}, fmt.Errorf("transactions: stored refund of %s: %w", row.ID, err)
		}
	}
	if row.Type == TypeOutgoing {
		pf := row.PlatformFees
		out.PlatformFees = &pf
		out.PaymentRail = json.RawMessage("null")
		if row.PaymentRail != "" {
			out.PaymentRail, _ = json.Marshal(row.PaymentRail)
		}
		out.PaymentInstructions = json.RawMessage("[]")
		if len(row.PaymentInstructions) > 0 {
			out.PaymentInstructions = json.RawMessage(row.PaymentInstructions)
		}
	}
	if row.Type == TypeCard && len(row.CardDetails) > 0 {
		if err := renderCard(&out, row.CardDetails, row.SentCurrency); err != nil {
			return Transaction{}, err
		}
	}
	// Included for every status but CREATED (R-TXN-15).
	if row.Status != StatusCreated {
		out.ReconciliationInstructions = &ReconciliationInstructions{Reference: row.Reference,
			TransactionHash: lightningHash(out.Destination.RailDetails)}
	}
	return out, nil
}

// lightningHash is the payment hash of a side settled over Lightning (UMA
// payments), or "".
func lightningHash(railDetails json.RawMessage) string {
	var d struct {
		PaymentRail     string `json:"paymentRail"`
		TransactionHash string `json:"transactionHash"`
	}
	if len(railDetails) == 0 || json.Unmarshal(railDetails, &d) != nil || d.PaymentRail != "LIGHTNING" {
		return ""
	}
	return d.TransactionHash
}

// onChain is the deprecated onChainTransaction of a side whose railDetails
// is ONCHAIN: the same transactionHash and network, still populated
// alongside railDetails (R-TXN-24); nil for other rails.
func onChain(railDetails json.RawMessage) json.RawMessage {
	var d struct {
		PaymentRail     string `json:"paymentRail"`
		TransactionHash string `json:"transactionHash"`
		Network         string `json:"network"`
	}
	if len(railDetails) == 0 || json.Unmarshal(railDetails, &d) != nil || d.PaymentRail != "ONCHAIN" || d.TransactionHash == "" {
		return nil
	}
	out, _ := json.Marshal(map[string]string{"transactionHash": d.TransactionHash, "network": d.Network})
	return out
}

// Service reads transactions.
type Service struct {
	DB *store.DB
}

func notFound(transactionID string) error {
	return apierr.NotFound("TRANSACTION_NOT_FOUND", "Transaction "+transactionID)
}

// Get returns one transaction of the tenant (R-TXN-02).
func (s *Service) Get(ctx context.Context, t store.Tenant, transactionID string) (Transaction, error) {
	row, err := s.DB.Read().GetTransaction(ctx, t, transactionID)
	if errors.Is(err, store.ErrNotFound) {
		return Transaction{}, notFound(transactionID)
	}
	if err != nil {
		return Transaction{}, err
	}
	return Render(row)
}

// List returns one page of the tenant's transactions (R-TXN-01).
func (s *Service) List(ctx context.Context, t store.Tenant, f store.TransactionFilter, after string, limit int) ([]Transaction, int, error) {
	rows, total, err := s.DB.Read().ListTransactions(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out, err := page.Render(rows, Render)
	return out, total, err
}
