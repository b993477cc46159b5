// Package quotes prices transfers and executes them (Part A "Quote",
// "Quote and outgoing transaction"; Part B "Quotes and transfers"). A quote
// is priced by package pricing, creates its transaction (package
// transactions) in the same database transaction, and moves money only
// through package ledger at execution. It knows nothing about HTTP.
//
// Money at execution, in one database transaction with the quote and its
// transaction moving to PROCESSING (S sent, F fees of which P platform fees,
// R received):
//
//   - internal destination: one posted ledger transfer — source −S, SYSTEM
//     SERVICE_FEES +(F−P), PLATFORM_FEES +P; same currency: destination
//     +(S−F); cross currency: FX_POSITION +(S−F) in the sending currency and
//     −R in the receiving one, destination +R. The transaction then goes to
//     COMPLETED with settledAt in the same database transaction
//     (OUTGOING_PAYMENT.PROCESSING, then .COMPLETED); a customer-owned
//     destination also gets an INCOMING transaction, COMPLETED.
//   - external destination: the same legs as a ledger HOLD with SYSTEM
//     CLEARING +R in place of the destination, then rails.Submit.
//   - external pull source (transfer-in): a posted transfer from SYSTEM
//     WORLD; the sandbox simulates the pull as settled at once.
//
// Quote status. The quotes row keeps the status; transactions.Transition sets
// it to the transaction's status whenever an outgoing transaction with a
// quote enters PENDING, PENDING_AUTHORIZATION, PROCESSING, COMPLETED, FAILED
// or EXPIRED, so rails settlement moves the quote too. The execute response
// (and immediatelyExecute) reports the quote as execution left it,
// PROCESSING (R-QUOTE-12, R-QUOTE-27), even when an internal transfer
// completed in the same database transaction; GET shows COMPLETED.
//
// Expiry. A PENDING quote whose expiresAt has passed becomes EXPIRED
// (terminal) when it is next read or executed, and ExpireDue sweeps the
// rest (run it from a worker).
package quotes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/paymentdocs"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/sca"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// DefaultExpiry is how long a quote may be executed (Part B "Limits": about
// 5 minutes).
const DefaultExpiry = 5 * time.Minute

// DefaultDailyVolumeLimit is the default daily volume per tenant, in US
// cents of executed sending amounts per UTC day: USD 1,000,000,000.
const DefaultDailyVolumeLimit int64 = 100_000_000_000

// Service implements quotes.
type Service struct {
	DB      *store.DB
	Ledger  *ledger.Service
	Pricing func(env string) *pricing.Engine
	Config  func(ctx context.Context, t store.Tenant) (platformconfig.Config, error)
	// CustomerTerms is customers.Service.CustomerTerms: a live customer's
	// row and whether it accepted the end-user terms.
	CustomerTerms func(ctx context.Context, t store.Tenant, customerID string) (store.Customer, bool, error)
	// AcceptedTerms is customers.Service.AcceptedTerms: whether agreements
	// a customer accepted hold the end-user terms (for a sender read with
	// its account).
	AcceptedTerms func(agreed []store.AgreedTerms) bool
	External      *externalaccounts.Service
	// Docs returns the payment documents service (nil: documents refused).
	Docs func() (*paymentdocs.Service, error)
	// Submit hands an external payout to the rails (rails.Submit).
	Submit func(ctx context.Context, tx *store.Tx, p rails.Payout) error
	// UMA quotes and settles payments to UMA addresses (nil: refused).
	UMA    UMA
	Expiry time.Duration
	// DailyVolumeLimit is the daily volume limit in US cents of a tenant
	// that has none of its own (store.SetDailyVolumeLimit); 0 means
	// DefaultDailyVolumeLimit.
	DailyVolumeLimit int64
	// WalletStamp checks, in the execution's transaction, the stamp over the
	// payloadToSign of a quote from an EMBEDDED_WALLET (wallets.Service).
	WalletStamp func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, stamp, payload string) error
	// SCA is strong customer authentication (sca.go; nil: no customer
	// needs it).
	SCA *sca.Service
}

// SetDailyVolumeLimit stores a tenant's own daily volume limit in US cents
// (0 restores the default).
func (s *Service) SetDailyVolumeLimit(ctx context.Context, t store.Tenant, cents int64) error {
	return s.DB.Write().SetDailyVolumeLimit(ctx, t, cents)
}

// VolumeLimit is a tenant's daily volume limit in US cents: its own, else
// the service's default. q is the transaction when there is one.
func (s *Service) VolumeLimit(ctx context.Context, q store.Q, t store.Tenant) (int64, error) {
	own, ok, err := q.DailyVolumeLimit(ctx, t)
	switch {
	case err != nil:
		return 0, err
	case ok:
		return own, nil
	case s.DailyVolumeLimit > 0:
		return s.DailyVolumeLimit, nil
	}
	return DefaultDailyVolumeLimit, nil
}

func (s *Service) expiry() time.Duration {
	if s.Expiry > 0 {
		return s.Expiry
	}
	return DefaultExpiry
}

func quoteNotFound(quoteID string) error { return apierr.NotFound("QUOTE_NOT_FOUND", "Quote "+quoteID) }

func fieldErr(field, constraint, format string, args ...any) error {
	var f apierr.Fields
	f.Add(field, constraint, format, args...)
	return f.Err()
}

// resolved is a request with its accounts looked up.
type resolved struct {
	plan             plan
	source           QuoteSource
	dest             QuoteDestination
	instructions     json.RawMessage
	beneficiaryType  string
	destKind         paymentdocs.DestinationKind
	txSource         transactions.Source
	txDest           transactions.Destination
	txAccountID      string
	txType           string
	txDirection      string
	sourceCustomerID string
	// walletSource: the source is an EMBEDDED_WALLET (execution is signed).
	walletSource bool
	// network is the chain of an on-chain payout, whose network fee the
	// quote charges (pricing.Schedule.Network).
	network string
	// trustedPayee: the destination is an external account the customer
	// trusted (an SCA exemption when the platform allows it).
	trustedPayee bool
	// sender is the sending customer's row, read with its agreements.
	sender *store.Customer
	// owners are the live owners of the internal accounts the request
	// names, read with them (with their agreements).
	owners map[string]store.AccountOwner
}

// internalAccounts reads the internal accounts a request names, source and
// destination, and their owners with the agreements they accepted, in one
// query.
func (s *Service) internalAccounts(ctx context.Context, t store.Tenant, req *Request) (map[string]store.InternalAccount, map[string]store.AccountOwner, error) {
	ids := internalAccountIDs(req.Source.AccountID, req.Destination.AccountID)
	if len(ids) == 0 {
		return nil, nil, nil
	}
	return s.DB.Read().InternalAccountsWithOwners(ctx, t, ids...)
}

// internalAccountIDs are those of a request's source and destination
// account ids that name internal accounts.
func internalAccountIDs(source, destination *string) []string {
	var ids []string
	for _, p := range []*string{source, destination} {
		if p != nil && strings.HasPrefix(*p, id.InternalAccount+":") {
			ids = append(ids, *p)
		}
	}
	return ids
}

// AccountsNamed reads from a POST /quotes body the internal accounts the
// quote will read (internalAccounts), without validating anything: the
// request's credential statement reads them ahead (store.ReadAhead). A
// body it cannot read names none.
func AccountsNamed(body []byte) []string {
	var b struct {
		Source      struct{ AccountID *string } `json:"source"`
		Destination struct{ AccountID *string } `json:"destination"`
	}
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	return internalAccountIDs(b.Source.AccountID, b.Destination.AccountID)
}

// senderTerms is the sender's row and whether it accepted the end-user
// terms: as read with its account when it was, else read now.
func (s *Service) senderTerms(ctx context.Context, t store.Tenant, r *resolved, customerID string) (store.Customer, bool, error) {
	if o, ok := r.owners[customerID]; ok && s.AcceptedTerms != nil {
		return o.Customer, s.AcceptedTerms(o.Agreed), nil
	}
	return s.CustomerTerms(ctx, t, customerID)
}

// activeInternalAccount is one of the accounts internalAccounts read, if active.
func activeInternalAccount(known map[string]store.InternalAccount, accountID string) (store.InternalAccount, error) {
	a, ok := known[accountID]
	if !ok {
		return a, apierr.NotFound("ACCOUNT_NOT_FOUND", "Internal account "+accountID)
	}
	if a.Status != accounts.StatusActive {
		return a, apierr.Conflict(fmt.Sprintf("Internal account %s is %s and cannot move money", a.ID, a.Status))
	}
	return a, nil
}

func (s *Service) resolve(ctx context.Context, t store.Tenant, req *Request) (resolved, error) {
	var r resolved
	src, dst := req.Source, req.Destination
	known, owners, err := s.internalAccounts(ctx, t, req)
	if err != nil {
		return r, err
	}
	r.owners = owners
	switch str(src.SourceType) {
	case SourceAccount:
		accountID := *src.AccountID
		switch {
		case strings.HasPrefix(accountID, id.InternalAccount+":"):
			a, err := activeInternalAccount(known, accountID)
			if err != nil {
				return r, err
			}
			if c := str(src.CustomerID); c != "" && c != a.CustomerID {
				return r, fieldErr("source.customerId", apierr.Enum, "is not the owner of source.accountId %s", accountID)
			}
			r.plan = plan{Funding: FundInternal, SourceInternalID: a.ID, SourceLedgerID: a.LedgerAccountID,
				SenderCustomerID: a.CustomerID, SendingCurrency: a.Currency}
			r.plan.knowOwner(a)
			r.source = QuoteSource{SourceType: SourceAccount, AccountID: a.ID, CustomerID: a.CustomerID}
			r.txAccountID = a.ID
			r.walletSource = a.Type == accounts.TypeEmbeddedWallet
		case strings.HasPrefix(accountID, id.ExternalAccount+":"):
			if t.Env != store.EnvSandbox {
				return r, apierr.InvalidInput("Pulling from an external account needs a rail partner, and none is configured in production")
			}
			ea, err := s.External.Lookup(ctx, t, accountID)
			if err != nil {
				return r, err
			}
			if str(ea.AccountInfo.AccountType) != "USD_ACCOUNT" {
				return r, fieldErr("source.accountId", apierr.Enum, "is not an account with pull ability (a US bank account, pulled over ACH)")
			}
			if err := s.External.UsableForPayout(ctx, t, accountID); err != nil {
				return r, err
			}
			if c := str(src.CustomerID); c != "" && c != ea.CustomerID {
				return r, fieldErr("source.customerId", apierr.Enum, "is not the owner of source.accountId %s", accountID)
			}
			r.plan = plan{Funding: FundPull, SourceExternalID: ea.ID, SenderCustomerID: ea.CustomerID,
				SendingCurrency: ea.Currency}
			r.source = QuoteSource{SourceType: SourceAccount, AccountID: ea.ID, CustomerID: ea.CustomerID}
		default:
			return r, apierr.NotFound("ACCOUNT_NOT_FOUND", "Account "+accountID)
		}
	case SourceRealtimeFunding:
		customerID, cur := *src.CustomerID, *src.Currency
		if _, _, err := s.CustomerTerms(ctx, t, customerID); err != nil {
			return r, err // 404 CUSTOMER_NOT_FOUND
		}
		owned, err := s.DB.Read().InternalAccountsOfOwner(ctx, t, customerID)
		if err != nil {
			return r, err
		}
		var a *store.InternalAccount
		for i := range owned {
			x := &owned[i]
			if x.Currency == cur && (x.Type == accounts.TypeFiat || x.Type == accounts.TypeCrypto) && x.Status == accounts.StatusActive {
				a = x
				break
			}
		}
		if a == nil {
			return r, fieldErr("source.currency", apierr.Enum, "customer %s holds no internal account in %s to fund the quote", customerID, cur)
		}
		r.plan = plan{Funding: FundInstructions, SourceInternalID: a.ID, SourceLedgerID: a.LedgerAccountID,
			SenderCustomerID: customerID, SendingCurrency: cur}
		r.source = QuoteSource{SourceType: SourceRealtimeFunding, CustomerID: customerID, Currency: cur}
		r.instructions = json.RawMessage(a.Instructions)
		r.txAccountID = a.ID
	}
	r.txType, r.txDirection = transactions.TypeOutgoing, transactions.Debit

	switch str(dst.DestinationType) {
	case DestUMAAddress:
		if err := s.resolveUMA(&r, dst, str(req.LookupID)); err != nil {
			return r, err
		}
		return r, nil
	case DestAccount:
		accountID := *dst.AccountID
		switch {
		case strings.HasPrefix(accountID, id.InternalAccount+":"):
			a, err := activeInternalAccount(known, accountID)
			if err != nil {
				return r, err
			}
			if a.ID == r.plan.SourceInternalID {
				return r, apierr.New("SELF_PAYMENT", "The source and destination are the same account "+a.ID)
			}
			if a.Suspense {
				return r, fieldErr("destination.accountId", apierr.Enum,
					"must not be a suspense account: only money for deleted customers arrives there")
			}
			r.plan.To, r.plan.DestInternalID, r.plan.DestLedgerID, r.plan.DestCustomerID = ToInternal, a.ID, a.LedgerAccountID, a.CustomerID
			r.plan.knowOwner(a)
			r.plan.ReceivingCurrency, r.plan.Rail = a.Currency, pricing.RailInternal
			r.dest = QuoteDestination{DestinationType: DestAccount, AccountID: a.ID}
			r.destKind = paymentdocs.DestOther
			if r.plan.Funding == FundPull {
				r.txType, r.txDirection, r.txAccountID = transactions.TypeIncoming, transactions.Credit, a.ID
			}
		case strings.HasPrefix(accountID, id.ExternalAccount+":"):
			if r.plan.Funding == FundPull {
				return r, fieldErr("destination.accountId", apierr.Enum, "must be an internal account when the source is an external account")
			}
			ea, err := s.External.Lookup(ctx, t, accountID)
			if err != nil {
				return r, err
			}
			rails := ea.AccountInfo.PaymentRails
			if slices.Contains(rails, pricing.RailACH) && !slices.Contains(rails, pricing.RailACHSameDay) {
				// Same-day ACH rides the ACH network.
				rails = append(slices.Clone(rails), pricing.RailACHSameDay)
			}
			rail := pricing.DefaultRail(ea.Currency)
			if len(rails) > 0 && !slices.Contains(rails, rail) {
				rail = rails[0]
			}
			if dst.PaymentRail != nil {
				rail = *dst.PaymentRail
				if len(rails) > 0 && !slices.Contains(rails, rail) {
					return r, fieldErr("destination.paymentRail", apierr.Enum, "must be a rail the destination supports: %s", strings.Join(rails, ", "))
				}
			}
			if err := s.External.UsableForPayout(ctx, t, accountID); err != nil {
				return r, err
			}
			r.plan.To, r.plan.DestExternalID, r.plan.DestCustomerID = ToExternal, ea.ID, ea.CustomerID
			r.trustedPayee = ea.Trusted != nil && *ea.Trusted
			r.plan.ReceivingCurrency, r.plan.Rail = ea.Currency, rail
			r.network = pricing.PayoutNetwork(str(ea.AccountInfo.AccountType), rail)
			r.dest = QuoteDestination{DestinationType: DestAccount, AccountID: ea.ID, PaymentRail: rail}
			r.destKind = paymentdocs.DestExternalBankAccount
			if ea.AccountInfo.Beneficiary != nil {
				r.beneficiaryType = str(ea.AccountInfo.Beneficiary.BeneficiaryType)
			}
			if isWallet(str(ea.AccountInfo.AccountType)) {
				r.destKind = paymentdocs.DestOther
			}
		default:
			return r, apierr.NotFound("ACCOUNT_NOT_FOUND", "Account "+accountID)
		}
	}
	r.txSource = transactions.Source{SourceType: r.source.SourceType, AccountID: r.source.AccountID,
		Currency: r.plan.SendingCurrency, CustomerID: r.plan.SenderCustomerID}
	r.txDest = transactions.Destination{DestinationType: DestAccount, AccountID: r.dest.AccountID,
		Currency: r.plan.ReceivingCurrency}
	if r.plan.To == ToExternal {
		r.txDest.PaymentRail = r.plan.Rail
	}
	return r, nil
}

func isWallet(accountType string) bool {
	return strings.Contains(accountType, "WALLET") || strings.HasSuffix(accountType, "_ADDRESS") ||
		strings.HasPrefix(accountType, "LIGHTNING") || strings.HasPrefix(accountType, "SPARK")
}

// Create creates a quote and its transaction, executing it at once when
// immediatelyExecute is true (R-QUOTE-01..24).
func (s *Service) Create(ctx context.Context, t store.Tenant, req Request) (Quote, error) {
	q, _, err := s.createQuote(ctx, t, req, false)
	return q, err
}

// CreateTransfer creates and executes a quote for the deprecated
// transfer-out and transfer-in endpoints (req.ImmediatelyExecute is forced)
// and answers its transaction as it is after execution, which is also what
// an Idempotency-Key replays (R-QUOTE-43..50, R-IDEM-10).
func (s *Service) CreateTransfer(ctx context.Context, t store.Tenant, req Request) (transactions.Transaction, error) {
	yes := true
	req.ImmediatelyExecute = &yes
	_, x, err := s.createQuote(ctx, t, req, true)
	return x, err
}

func (s *Service) createQuote(ctx context.Context, t store.Tenant, req Request, transfer bool) (Quote, transactions.Transaction, error) {
	var noX transactions.Transaction
	if err := req.Validate(); err != nil {
		return Quote{}, noX, err
	}
	if err := paymentdocs.RequireIdempotencyKey(ctx, req.DocumentIDs); err != nil {
		return Quote{}, noX, err
	}
	cfg, err := s.Config(ctx, t)
	if err != nil {
		return Quote{}, noX, err
	}
	if cfg.WebhookEndpoint == nil || *cfg.WebhookEndpoint == "" {
		return Quote{}, noX, apierr.New("WEBHOOK_ENDPOINT_NOT_SET",
			"Sending payments needs a webhook endpoint; set webhookEndpoint with PATCH /config first")
	}
	r, err := s.resolve(ctx, t, &req)
	if err != nil {
		return Quote{}, noX, err
	}
	immediately := req.ImmediatelyExecute != nil && *req.ImmediatelyExecute
	if immediately && r.plan.Funding == FundInstructions {
		return Quote{}, noX, fieldErr("immediatelyExecute", apierr.Enum,
			"cannot be true for a payment-instruction-funded source: the quote proceeds when the funds arrive")
	}
	if req.StatementDescriptor != nil && r.plan.Rail != pricing.RailACH && r.plan.Rail != pricing.RailACHSameDay {
		return Quote{}, noX, fieldErr("statementDescriptor", apierr.AdditionalProperties,
			"is only for ACH payouts; this quote moves no ACH entry (rail %s)", r.plan.Rail)
	}
	if req.PurposeOfPayment == nil && slices.Contains(PurposeRequired, r.plan.ReceivingCurrency) {
		return Quote{}, noX, fieldErr("purposeOfPayment", apierr.Required, "is required for payouts in %s", r.plan.ReceivingCurrency)
	}
	if err := paymentdocs.ValidateDocumentIDs(r.plan.ReceivingCurrency, r.destKind, r.beneficiaryType, req.DocumentIDs); err != nil {
		return Quote{}, noX, err
	}
	needsDocs := paymentdocs.RequiresDocuments(r.plan.ReceivingCurrency, r.destKind, r.beneficiaryType)
	var docs *paymentdocs.Service
	if needsDocs {
		if s.Docs != nil {
			docs, err = s.Docs()
		}
		if err != nil || docs == nil {
			return Quote{}, noX, apierr.InvalidInput("Payment documents are not available on this server, and this payout needs them")
		}
		if len(req.DocumentIDs) > 0 {
			if err := paymentdocs.RequireIdempotencyKey(ctx, req.DocumentIDs); err != nil {
				return Quote{}, noX, err
			}
		}
	}
	if c := r.plan.SenderCustomerID; c != "" {
		row, ok, err := s.senderTerms(ctx, t, &r, c)
		if err != nil {
			return Quote{}, noX, err
		}
		r.sender = &row
		if !ok {
			return Quote{}, noX, apierr.New("END_USER_TERMS_NOT_ACCEPTED",
				"Customer "+c+" has not accepted the end-user terms; record an agreementConsents entry first")
		}
	}
	eng := s.Pricing(t.Env)
	now := s.DB.Now().UTC().Truncate(time.Microsecond)
	price := eng.Quote
	if r.plan.To == ToUMA {
		price = s.umaPricer(ctx, t, &r, req)
	}
	pr, err := price(ctx, pricing.Request{
		SourceCurrency: r.plan.SendingCurrency, DestinationCurrency: r.plan.ReceivingCurrency, Rail: r.plan.Rail,
		Network: r.network, Side: pricing.Side(*req.LockedCurrencySide), Amount: *req.LockedCurrencyAmount,
		FeeConfigs: cfg.FeeConfigs, Override: req.PlatformFeeOverride, Currencies: cfg.SupportedCurrencies, At: now,
	})
	if err != nil {
		return Quote{}, noX, err
	}
	scaPending, exemption, err := s.scaGate(ctx, t, r, transfer, pr.TotalSendingAmount)
	if err != nil {
		return Quote{}, noX, err
	}
	usd := s.usdEquivalent(ctx, eng, pr.TotalSendingAmount, r.plan.SendingCurrency)
	// An immediate execution adds the volume, or is refused, in the
	// transaction below; checking first would read the day's total twice.
	if !immediately {
		if err := s.checkVolume(ctx, s.DB.Read(), t, usd, now); err != nil {
			return Quote{}, noX, err
		}
	}
	sendCur, _ := currency.Lookup(r.plan.SendingCurrency)
	recvCur, _ := currency.Lookup(r.plan.ReceivingCurrency)
	q := Quote{
		ID: id.New(id.Quote), Status: StatusPending, CreatedAt: now, ExpiresAt: now.Add(s.expiry()),
		Source: r.source, Destination: r.dest, SendingCurrency: sendCur, ReceivingCurrency: recvCur,
		TotalSendingAmount: pr.TotalSendingAmount, TotalReceivingAmount: pr.TotalReceivingAmount,
		ExchangeRate: pricing.Number(pr.ExchangeRate), FeesIncluded: pr.FeesIncluded,
		PlatformFeesIncluded: pr.PlatformFeesIncluded, TransactionID: id.New(id.Transaction),
		CounterpartyInformation: req.SenderCustomerInfo, RateDetails: pr.RateDetails,
		PurposeOfPayment: str(req.PurposeOfPayment), DocumentIDs: req.DocumentIDs, Description: str(req.Description),
		RemittanceInformation: str(req.RemittanceInformation), StatementDescriptor: str(req.StatementDescriptor),
		LockedCurrencySide: *req.LockedCurrencySide, LockedCurrencyAmount: *req.LockedCurrencyAmount,
		ScaExemption: exemption,
	}
	r.plan.ScaExemption, r.plan.ScaFactor = exemption, str(req.ScaFactor)
	if r.plan.Funding == FundInstructions {
		q.PaymentInstructions = r.instructions
	}
	if err := chainDestination(&q, req); err != nil {
		return Quote{}, noX, err
	}
	if r.walletSource {
		if immediately {
			return Quote{}, noX, fieldErr("immediatelyExecute", apierr.Enum,
				"cannot be true when the source is an EMBEDDED_WALLET: execution needs the customer's signature over the quote's payloadToSign")
		}
		if q.PaymentInstructions, r.plan.WalletPayload, err = walletInstructions(q); err != nil {
			return Quote{}, noX, err
		}
	}
	r.plan.ImmediatelyExec = immediately
	doc := document{Quote: q, Plan: r.plan}
	var out Quote
	var outX transactions.Transaction
	// Group commit: concurrent quotes share a commit (store.InBatchTx). An
	// execution moves the source's and the destination's balance rows and
	// adds to the day's volume: the batch locks them up front, in the one
	// order (declareExecution).
	if immediately && !scaPending {
		ctx = s.declareExecution(ctx, t, r.plan, usd)
	}
	// Encoded here, not in the batch's function: that runs on the batch's
	// one goroutine, one request after another.
	rateDetails, err := json.Marshal(pr.RateDetails)
	if err != nil {
		return Quote{}, noX, err
	}
	var counterparty json.RawMessage
	if len(req.SenderCustomerInfo) > 0 {
		counterparty, _ = json.Marshal(req.SenderCustomerInfo)
	}
	err = s.DB.InBatchTx(ctx, func(tx *store.Tx) error {
		ctx := context.WithoutCancel(ctx) // the batch's connection is shared
		var err error
		received := pr.TotalReceivingAmount
		x := transactions.New{
			ID: q.TransactionID, Type: r.txType, Status: transactions.StatusPending, Direction: r.txDirection,
			CustomerID: customerOf(r), AccountID: r.txAccountID, Source: r.txSource, Destination: r.txDest,
			SentAmount: q.TotalSendingAmount, SentCurrency: r.plan.SendingCurrency, ReceivedAmount: &received,
			ReceivedCurrency: r.plan.ReceivingCurrency, Fees: q.FeesIncluded, Reference: q.ID,
			Description: q.Description, QuoteID: q.ID, PlatformFees: q.PlatformFeesIncluded,
			ExchangeRate: string(q.ExchangeRate), RateDetails: rateDetails, PaymentInstructions: q.PaymentInstructions,
			CounterpartyInformation: counterparty, ScaExemption: exemption, AgentID: req.AgentID,
			PlatformCustomerID: r.plan.owner(customerOf(r)),
		}
		row := store.Quote{ID: q.ID, Tenant: t, Status: StatusPending, TransactionID: q.TransactionID,
			CustomerID: r.plan.SenderCustomerID, USDEquivalent: usd, ExpiresAt: q.ExpiresAt,
			CreatedAt: now, UpdatedAt: now}
		// An immediately executed quote and its transaction are stored once,
		// as execution leaves them, unless documents must be attached first
		// or the quote waits on SCA (sca.go).
		fresh := immediately && !needsDocs && !scaPending
		var moves []transactions.Change
		if scaPending {
			if err := s.holdForSCA(ctx, tx, t, &doc, &row); err != nil {
				return err
			}
			q, x.PaymentInstructions = doc.Quote, nil
			// The response is 202 and so is its replay (R-SCA-04, R-VER-04).
			if c := idempotency.FromContext(ctx); c != nil {
				c.Status = http.StatusAccepted
			}
			moves = append(moves, transactions.Change{Status: transactions.StatusPendingAuthorization})
		}
		if exemption != "" {
			if err := s.SCA.RecordExemption(ctx, tx, t, r.plan.SenderCustomerID, q.ID, exemption); err != nil {
				return err
			}
		}
		if !fresh {
			if _, _, err := transactions.RecordChanged(ctx, tx, t, x, moves...); err != nil {
				return err
			}
			if row.Document, err = json.Marshal(doc); err != nil {
				return err
			}
			if err := tx.InsertQuote(ctx, row); err != nil {
				return err
			}
		}
		if needsDocs {
			if err := docs.AttachRequired(ctx, tx, t, paymentdocs.Payout{QuoteID: q.ID, Purpose: q.PurposeOfPayment,
				SenderCustomerID: r.plan.SenderCustomerID, DocumentIDs: req.DocumentIDs}, now); err != nil {
				return err
			}
		}
		out = q
		if immediately && !scaPending {
			var unrecorded *transactions.New
			if fresh {
				unrecorded = &x
			}
			if out, err = s.executeTx(ctx, tx, t, &row, &doc, unrecorded); err != nil {
				return err
			}
		}
		if transfer {
			row, err := tx.GetTransaction(ctx, t, q.TransactionID)
			if err != nil {
				return err
			}
			if outX, err = transactions.Render(row); err != nil {
				return err
			}
			return idempotency.Record(ctx, tx, outX)
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		return Quote{}, noX, err
	}
	if needsDocs && docs != nil {
		docs.ReleaseFiles(ctx, t, req.DocumentIDs)
	}
	return out, outX, nil
}

// customerOf is the customer whose account the transaction concerns.
func customerOf(r resolved) string {
	if r.txType == transactions.TypeIncoming {
		return r.plan.DestCustomerID
	}
	return r.plan.SenderCustomerID
}

// usdEquivalent converts a sending amount to US cents, rounded up, at the
// engine's cached rate; without a rate the amount counts as is.
func (s *Service) usdEquivalent(ctx context.Context, eng *pricing.Engine, amount int64, cur string) int64 {
	if cur == "USD" {
		return amount
	}
	c, ok := currency.Lookup(cur)
	if !ok {
		return amount
	}
	q, err := eng.Rates.Rate(ctx, "USD", cur)
	if err != nil {
		return amount
	}
	v := decimal.NewFromInt(amount).Mul(q.Mid).Shift(int32(2 - c.Decimals)).Ceil()
	if v.GreaterThan(decimal.NewFromInt(1 << 62)) {
		return 1 << 62
	}
	return v.IntPart()
}

// checkVolume refuses a transfer that would take the tenant's executed
// volume of the current UTC day above its limit (429). It only reads: the
// execution adds the volume atomically (addVolume); this early check spares a
// quote that could not execute.
func (s *Service) checkVolume(ctx context.Context, q store.Q, t store.Tenant, usd int64, now time.Time) error {
	used, err := q.DailyVolume(ctx, t, now)
	if err != nil {
		return err
	}
	limit, err := s.VolumeLimit(ctx, q, t)
	if err != nil {
		return err
	}
	if used+usd > limit {
		return volumeExceeded()
	}
	return nil
}

// addVolume counts an execution against the day's limit, or refuses it.
func (s *Service) addVolume(ctx context.Context, tx *store.Tx, t store.Tenant, usd int64, now time.Time) error {
	limit, err := s.VolumeLimit(ctx, tx.Q, t)
	if err != nil {
		return err
	}
	ok, err := tx.AddDailyVolume(ctx, t, now, usd, limit)
	if err != nil {
		return err
	}
	if !ok {
		return volumeExceeded()
	}
	return nil
}

// volumeExceeded does not show the configured limit (R-ERR-21).
func volumeExceeded() error {
	return apierr.New("DAILY_VOLUME_LIMIT_EXCEEDED",
		"This transfer would take today's volume above the daily volume limit; retry tomorrow (UTC)")
}

func decodeDoc(row store.Quote) (document, error) {
	var d document
	if err := json.Unmarshal(row.Document, &d); err != nil {
		return d, fmt.Errorf("quotes: stored quote %s: %w", row.ID, err)
	}
	d.Quote.Status = row.Status
	return d, nil
}

// Get returns a quote, expiring it first when its time has passed
// (R-QUOTE-25, R-QUOTE-35, R-QUOTE-36).
func (s *Service) Get(ctx context.Context, t store.Tenant, quoteID string) (Quote, error) {
	if err := s.expireIfDue(ctx, t, quoteID); err != nil {
		return Quote{}, err
	}
	row, err := s.DB.Read().GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Quote{}, quoteNotFound(quoteID)
	}
	if err != nil {
		return Quote{}, err
	}
	d, err := decodeDoc(row)
	if err == nil && row.Status == StatusPendingAuthorization && s.SCA != nil {
		// The challenge as it is now (a re-sent code changes its factor).
		if ch, cerr := s.SCA.Current(ctx, s.DB.Read(), t, quoteID); cerr != nil {
			return Quote{}, cerr
		} else if ch != nil {
			d.Quote.ScaChallenge = ch
		}
	}
	return d.Quote, err
}

// expireIfDue moves a PENDING quote past its expiresAt to EXPIRED, with its
// transaction, in its own database transaction.
func (s *Service) expireIfDue(ctx context.Context, t store.Tenant, quoteID string) error {
	row, err := s.DB.Read().GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if (row.Status != StatusPending && row.Status != StatusPendingAuthorization) || s.DB.Now().Before(row.ExpiresAt) {
		return nil
	}
	return s.DB.InTx(ctx, func(tx *store.Tx) error { return s.expireTx(ctx, tx, t, quoteID) })
}

func (s *Service) expireTx(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string) error {
	row, err := tx.GetQuote(ctx, t, quoteID, true)
	if err != nil {
		return err
	}
	if row.Status == StatusPendingAuthorization && !tx.Now().Before(row.ExpiresAt) {
		return s.failUnauthorizedTx(ctx, tx, t, row)
	}
	if row.Status != StatusPending || tx.Now().Before(row.ExpiresAt) {
		return nil
	}
	_, err = transactions.Transition(ctx, tx, t, row.TransactionID, transactions.Change{Status: transactions.StatusExpired})
	if err != nil {
		return err
	}
	// The transaction's quote hook set the status; make sure of it even for
	// an incoming (pull) transaction, which has no hook.
	row.Status, row.UpdatedAt = StatusExpired, tx.Now().UTC()
	d, err := decodeDoc(row)
	if err != nil {
		return err
	}
	d.Quote.Status = StatusExpired
	if row.Document, err = json.Marshal(d); err != nil {
		return err
	}
	return tx.UpdateQuote(ctx, row)
}

// ExpireDue expires up to limit PENDING quotes of any tenant whose
// expiresAt has passed, and fails the PENDING_AUTHORIZATION ones with
// SCA_NOT_COMPLETED, and reports how many it handled. Safe on several
// nodes at once (each quote is re-read under lock).
func (s *Service) ExpireDue(ctx context.Context, limit int) (int, error) {
	due, err := s.DB.Read().DueQuotes(ctx, s.DB.Now(), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, q := range due {
		if err := s.DB.InTx(ctx, func(tx *store.Tx) error { return s.expireTx(ctx, tx, q.Tenant, q.ID) }); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Execute executes a PENDING quote whose source is an internal account or
// an external account with pull (R-QUOTE-26..28).
func (s *Service) Execute(ctx context.Context, t store.Tenant, quoteID string) (Quote, error) {
	return s.ExecuteSigned(ctx, t, quoteID, "")
}

// ExecuteSigned is Execute with the Service-Wallet-Signature header, which
// a quote from an EMBEDDED_WALLET needs (its stamp is checked in the
// execution's transaction, so an unsigned or wrongly signed execution moves
// nothing).
func (s *Service) ExecuteSigned(ctx context.Context, t store.Tenant, quoteID, walletStamp string) (Quote, error) {
	return s.ExecuteWith(ctx, t, quoteID, ExecHooks{Stamp: walletStamp})
}

// ExecHooks let a caller execute a quote on its own terms (package agents).
type ExecHooks struct {
	// Stamp is the Service-Wallet-Signature header of the request.
	Stamp string
	// SignWallet, when set, makes the stamp over an EMBEDDED_WALLET quote's
	// payloadToSign inside the execution's transaction (an agent's
	// delegated key) instead of taking Stamp; the stamp is then verified by
	// VerifyWallet.
	SignWallet func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, payload string) (string, error)
	// VerifyWallet replaces WalletStamp for a stamp SignWallet made.
	VerifyWallet func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, stamp, payload string) error
	// Before runs in the execution's transaction once the quote is locked
	// and found executable, before any money moves; an error rolls the
	// whole execution back.
	Before func(ctx context.Context, tx *store.Tx, q Quote, customerID string) error
	// After runs in the same transaction once the money moved.
	After func(ctx context.Context, tx *store.Tx, q Quote) error
}

// ExecuteWith executes a PENDING quote with the caller's hooks.
func (s *Service) ExecuteWith(ctx context.Context, t store.Tenant, quoteID string, h ExecHooks) (Quote, error) {
	if err := s.expireIfDue(ctx, t, quoteID); err != nil {
		return Quote{}, err
	}
	var out Quote
	ctx = s.declareQuoteLocks(ctx, t, quoteID)
	err := s.DB.InBatchTx(ctx, func(tx *store.Tx) error {
		ctx := context.WithoutCancel(ctx) // the batch's connection is shared
		row, d, err := s.executableQuote(ctx, tx, t, quoteID)
		if err != nil {
			return err
		}
		if err := s.checkWallet(ctx, tx, t, d, h); err != nil {
			return err
		}
		if h.Before != nil {
			if err := h.Before(ctx, tx, d.Quote, row.CustomerID); err != nil {
				return err
			}
			d.Plan.WalletStamped = true
		}
		held, err := s.scaOnExecute(ctx, tx, t, &row, &d)
		if err != nil {
			return err
		}
		if held {
			out = d.Quote
			return idempotency.Record(ctx, tx, out)
		}
		if out, err = s.executeTx(ctx, tx, t, &row, &d, nil); err != nil {
			return err
		}
		if h.After != nil {
			if err := h.After(ctx, tx, out); err != nil {
				return err
			}
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		return Quote{}, err
	}
	return out, nil
}

// executableQuote locks a quote and checks that it may execute now.
// declareQuoteLocks declares, for the batch that executes a stored quote,
// what its execution locks (declareExecution), read from the quote as
// stored now: the accounts and amount of a quote never change. A quote that
// cannot be read declares nothing; the transaction then answers for it.
func (s *Service) declareQuoteLocks(ctx context.Context, t store.Tenant, quoteID string) context.Context {
	row, err := s.DB.Read().GetQuote(ctx, t, quoteID, false)
	if err != nil {
		return ctx
	}
	d, err := decodeDoc(row)
	if err != nil {
		return ctx
	}
	return s.declareExecution(ctx, t, d.Plan, row.USDEquivalent)
}

// declareExecution declares, for the batch that executes a quote, what the
// execution writes that the batch locks when it begins: the balance rows it
// moves (store.WithLedgerLocks) and its add of usd to the day's volume
// under the tenant's limit (store.WithDailyVolumeAdd; addVolume decides it,
// with the limit it reads then). A limit that cannot be read now declares
// no add.
func (s *Service) declareExecution(ctx context.Context, t store.Tenant, p plan, usd int64) context.Context {
	ctx = store.WithLedgerLocks(ctx, t, p.SourceLedgerID, p.DestLedgerID)
	if limit, err := s.VolumeLimit(ctx, s.DB.Read(), t); err == nil {
		ctx = store.WithDailyVolumeAdd(ctx, t, usd, limit)
	}
	return ctx
}

func (s *Service) executableQuote(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string) (store.Quote, document, error) {
	row, err := tx.GetQuote(ctx, t, quoteID, true)
	if errors.Is(err, store.ErrNotFound) {
		return row, document{}, quoteNotFound(quoteID)
	}
	if err != nil {
		return row, document{}, err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return row, d, err
	}
	if row.Status == StatusExpired || (row.Status == StatusPending && !tx.Now().Before(row.ExpiresAt)) {
		return row, d, apierr.Newf("QUOTE_EXPIRED", "Quote %s expired at %s; create a new quote", row.ID, row.ExpiresAt.Format(time.RFC3339))
	}
	if row.Status != StatusPending {
		return row, d, apierr.Conflict(fmt.Sprintf("Quote %s is %s: it was already executed", row.ID, row.Status))
	}
	if d.Plan.Funding == FundInstructions {
		return row, d, apierr.InvalidInput("Quote " + row.ID + " is funded through its paymentInstructions and cannot be executed: it proceeds when the funds arrive")
	}
	return row, d, nil
}

// checkWallet verifies the stamp an EMBEDDED_WALLET source needs.
func (s *Service) checkWallet(ctx context.Context, tx *store.Tx, t store.Tenant, d document, h ExecHooks) error {
	if d.Plan.WalletPayload == "" {
		return nil
	}
	verify, stamp := s.WalletStamp, h.Stamp
	if h.SignWallet != nil {
		var err error
		if stamp, err = h.SignWallet(ctx, tx, t, d.Plan.SourceInternalID, d.Plan.WalletPayload); err != nil {
			return err
		}
		verify = h.VerifyWallet
	}
	if verify == nil {
		return apierr.InvalidInput("Quote " + d.Quote.ID + " is from an embedded wallet, which this server cannot verify signatures for")
	}
	return verify(ctx, tx, t, d.Plan.SourceInternalID, stamp, d.Plan.WalletPayload)
}

// ExecuteFunded executes a payment-instruction-funded quote inside the
// caller's transaction once its funds have arrived: the caller (the sandbox
// deposit, a rail) has already credited the funding account in the same tx.
// FundingAccount tells which account and amount.
func (s *Service) ExecuteFunded(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string) (Quote, error) {
	row, err := tx.GetQuote(ctx, t, quoteID, true)
	if errors.Is(err, store.ErrNotFound) {
		return Quote{}, quoteNotFound(quoteID)
	}
	if err != nil {
		return Quote{}, err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return Quote{}, err
	}
	if row.Status != StatusPending {
		return Quote{}, apierr.Conflict(fmt.Sprintf("Quote %s is %s", row.ID, row.Status))
	}
	if !tx.Now().Before(row.ExpiresAt) {
		return Quote{}, apierr.Newf("QUOTE_EXPIRED", "Quote %s expired at %s", row.ID, row.ExpiresAt.Format(time.RFC3339))
	}
	return s.executeTx(ctx, tx, t, &row, &d, nil)
}

// FundingAccount returns, for a payment-instruction-funded quote, the
// internal account its funds arrive in and the amount and currency due.
func (s *Service) FundingAccount(ctx context.Context, q store.Q, t store.Tenant, quoteID string) (accountID string, amount int64, cur string, err error) {
	row, err := q.GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return "", 0, "", quoteNotFound(quoteID)
	}
	if err != nil {
		return "", 0, "", err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return "", 0, "", err
	}
	if d.Plan.Funding != FundInstructions {
		return "", 0, "", apierr.InvalidInput("Quote " + quoteID + " is not funded through payment instructions")
	}
	return d.Plan.SourceInternalID, d.Quote.TotalSendingAmount, d.Plan.SendingCurrency, nil
}

// Available returns the available balance of an internal account (a
// transfer-out without amount sends all of it), 404 ACCOUNT_NOT_FOUND for
// an unknown account.
func (s *Service) Available(ctx context.Context, t store.Tenant, accountID string) (int64, error) {
	a, err := s.DB.Read().GetInternalAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, apierr.NotFound("ACCOUNT_NOT_FOUND", "Internal account "+accountID)
	}
	if err != nil {
		return 0, err
	}
	b, err := s.Ledger.Balance(ctx, t, a.LedgerAccountID)
	if err != nil {
		return 0, err
	}
	return b.Available, nil
}

// Read returns a quote as stored, through q (a transaction's view when
// there is one), without expiring it.
func (s *Service) Read(ctx context.Context, q store.Q, t store.Tenant, quoteID string) (Quote, string, error) {
	row, err := q.GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Quote{}, "", quoteNotFound(quoteID)
	}
	if err != nil {
		return Quote{}, "", err
	}
	d, err := decodeDoc(row)
	return d.Quote, row.CustomerID, err
}

// chainDestination shows an agent's CHAIN_ADDRESS destination and sets the
// least the quote may deliver (by default what it quotes now).
func chainDestination(q *Quote, req Request) error {
	if req.ChainAddress != nil {
		q.Destination = QuoteDestination{DestinationType: DestChainAddress, Address: *req.ChainAddress,
			Currency: q.ReceivingCurrency.Code}
		q.MinimumReceivingAmount = q.TotalReceivingAmount
	}
	if m := req.MinimumReceivingAmount; m != nil {
		if *m > q.TotalReceivingAmount {
			return fieldErr("destination.minimumReceivingAmount", apierr.Maximum,
				"is above what the quote delivers now (%d)", q.TotalReceivingAmount)
		}
		q.MinimumReceivingAmount = *m
	}
	return nil
}

// Repriced is what a PENDING quote would deliver if priced now, with the
// platform's current fees and rates (R-AGENT-31).
func (s *Service) Repriced(ctx context.Context, t store.Tenant, quoteID string) (int64, error) {
	row, err := s.DB.Read().GetQuote(ctx, t, quoteID, false)
	if errors.Is(err, store.ErrNotFound) {
		return 0, quoteNotFound(quoteID)
	}
	if err != nil {
		return 0, err
	}
	d, err := decodeDoc(row)
	if err != nil {
		return 0, err
	}
	cfg, err := s.Config(ctx, t)
	if err != nil {
		return 0, err
	}
	pr, err := s.Pricing(t.Env).Quote(ctx, pricing.Request{
		SourceCurrency: d.Plan.SendingCurrency, DestinationCurrency: d.Plan.ReceivingCurrency, Rail: d.Plan.Rail,
		Side: pricing.Side(d.Quote.LockedCurrencySide), Amount: d.Quote.LockedCurrencyAmount,
		FeeConfigs: cfg.FeeConfigs, Currencies: cfg.SupportedCurrencies, At: s.DB.Now().UTC(),
	})
	if err != nil {
		return 0, err
	}
	return pr.TotalReceivingAmount, nil
}
