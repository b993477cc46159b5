package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/quotes"
	"github.com/paymentsd/paymentsd/internal/store"
)

// QuoteRequest is the body of POST /agents/me/quotes: a quote between
// accounts of the agent's customer. It has no immediatelyExecute: an agent
// executes through POST /agents/me/quotes/{quoteId}/execute, where the
// policy decides.
type QuoteRequest struct {
	Source                *quotes.SourceIn `json:"source"`
	Destination           *DestinationIn   `json:"destination"`
	LockedCurrencySide    *string          `json:"lockedCurrencySide"`
	LockedCurrencyAmount  *int64           `json:"lockedCurrencyAmount"`
	Description           *string          `json:"description"`
	RemittanceInformation *string          `json:"remittanceInformation"`
	PurposeOfPayment      *string          `json:"purposeOfPayment"`
}

// DestinationIn is an agent quote's destination: an ACCOUNT (internal or
// external) of the agent's customer, or a CHAIN_ADDRESS paid in USDB
// (R-AGENT-30) with the least it must deliver.
type DestinationIn struct {
	DestinationType        *string `json:"destinationType"`
	AccountID              *string `json:"accountId"`
	PaymentRail            *string `json:"paymentRail"`
	Address                *string `json:"address"`
	MinimumReceivingAmount *int64  `json:"minimumReceivingAmount"`
}

// ChainCurrency is what a CHAIN_ADDRESS quote sends.
const ChainCurrency = "USDB"

// MaxAddress bounds a chain address.
const MaxAddress = 256

func (d *DestinationIn) chain() bool {
	return d != nil && d.DestinationType != nil && *d.DestinationType == quotes.DestChainAddress
}

// toQuotes is the platform quote request it becomes.
func (r QuoteRequest) toQuotes() quotes.Request {
	req := quotes.Request{Source: r.Source, LockedCurrencySide: r.LockedCurrencySide,
		LockedCurrencyAmount: r.LockedCurrencyAmount, Description: r.Description,
		RemittanceInformation: r.RemittanceInformation, PurposeOfPayment: r.PurposeOfPayment}
	if d := r.Destination; d != nil {
		req.Destination = &quotes.DestinationIn{DestinationType: d.DestinationType, AccountID: d.AccountID,
			PaymentRail: d.PaymentRail}
	}
	return req
}

// Validate checks the request on its own.
func (r QuoteRequest) Validate() error {
	var f apierr.Fields
	if r.Source != nil && r.Source.SourceType != nil && *r.Source.SourceType != quotes.SourceAccount {
		f.Add("source.sourceType", apierr.Enum, "must be ACCOUNT: an internal account of the agent's customer")
	}
	d := r.Destination
	if d != nil && d.DestinationType != nil && *d.DestinationType != quotes.DestAccount && !d.chain() {
		f.Add("destination.destinationType", apierr.Enum, "must be ACCOUNT or CHAIN_ADDRESS")
	}
	if d.chain() {
		switch {
		case d.Address == nil || *d.Address == "":
			f.Add("destination.address", apierr.Required, "is required for a CHAIN_ADDRESS destination")
		case len(*d.Address) > MaxAddress:
			f.Add("destination.address", apierr.MaxLength, "must be at most %d characters", MaxAddress)
		}
		if d.AccountID != nil {
			f.Add("destination.accountId", apierr.AdditionalProperties, "is not used with a CHAIN_ADDRESS destination")
		}
		if m := d.MinimumReceivingAmount; m != nil && *m <= 0 {
			f.Add("destination.minimumReceivingAmount", apierr.Minimum, "must be a positive integer")
		}
		// The quote's own checks run once the address has an account.
		chainless := r
		placeholder := "ExternalAccount:chain"
		acc := quotes.DestAccount
		chainless.Destination = &DestinationIn{DestinationType: &acc, AccountID: &placeholder}
		req := chainless.toQuotes()
		return apierr.MergeFields(f.Err(), req.Validate())
	}
	if d != nil && d.MinimumReceivingAmount != nil {
		f.Add("destination.minimumReceivingAmount", apierr.AdditionalProperties, "is only for a CHAIN_ADDRESS destination")
	}
	if d != nil && d.Address != nil {
		f.Add("destination.address", apierr.AdditionalProperties, "is only for a CHAIN_ADDRESS destination")
	}
	req := r.toQuotes()
	return apierr.MergeFields(f.Err(), req.Validate())
}

// ownAccount checks that an account id names an internal or external
// account of the agent's customer; any other is 404 (R-AUTH-08).
func ownAccount(ctx context.Context, q store.Q, c Caller, accountID string) error {
	notFound := apierr.NotFound("ACCOUNT_NOT_FOUND", "Account "+short(accountID))
	var owner string
	switch {
	case strings.HasPrefix(accountID, id.InternalAccount+":"):
		a, err := q.GetInternalAccount(ctx, c.Agent.Tenant, accountID)
		if errors.Is(err, store.ErrNotFound) {
			return notFound
		} else if err != nil {
			return err
		}
		owner = a.CustomerID
	case strings.HasPrefix(accountID, id.ExternalAccount+":"):
		a, err := q.GetExternalAccount(ctx, c.Agent.Tenant, accountID, false)
		if errors.Is(err, store.ErrNotFound) {
			return notFound
		} else if err != nil {
			return err
		}
		owner = a.CustomerID
	default:
		return notFound
	}
	if owner != c.Agent.CustomerID {
		return notFound
	}
	return nil
}

// CreateQuote prices a quote between the agent's customer's accounts
// (R-AGENT-29). Its source must be allowed by the policy.
func (s *Service) CreateQuote(ctx context.Context, c Caller, req QuoteRequest) (quotes.Quote, error) {
	if err := c.Require(PermCreateQuotes); err != nil {
		return quotes.Quote{}, err
	}
	if err := req.Validate(); err != nil {
		return quotes.Quote{}, err
	}
	src := *req.Source.AccountID
	if err := ownAccount(ctx, s.DB.Read(), c, src); err != nil {
		return quotes.Quote{}, err
	}
	if allowed := c.Policy.AccountRestrictions.AllowedAccountIDs; allowed != nil && !slices.Contains(allowed, src) {
		return quotes.Quote{}, apierr.Forbidden("The agent's policy does not allow account " + src)
	}
	if req.Destination.chain() {
		return s.chainQuote(ctx, c, req)
	}
	if err := ownAccount(ctx, s.DB.Read(), c, *req.Destination.AccountID); err != nil {
		return quotes.Quote{}, err
	}
	in := req.toQuotes()
	in.AgentID = c.Agent.ID
	return s.Quotes.Create(ctx, c.Agent.Tenant, in)
}

// GetQuote returns a quote of the agent's customer (R-AGENT-32).
func (s *Service) GetQuote(ctx context.Context, c Caller, quoteID string) (quotes.Quote, error) {
	if _, err := s.agentQuote(ctx, c, quoteID); err != nil {
		return quotes.Quote{}, err
	}
	return s.Quotes.Get(ctx, c.Agent.Tenant, quoteID)
}

// chainQuote quotes a payment of USDB to a chain address: the address
// becomes (or already is) a SPARK_WALLET external account of the customer,
// and the quote carries the address and its minimumReceivingAmount.
func (s *Service) chainQuote(ctx context.Context, c Caller, req QuoteRequest) (quotes.Quote, error) {
	if s.External == nil {
		return quotes.Quote{}, apierr.InvalidInput("This server cannot pay chain addresses")
	}
	address := *req.Destination.Address
	ext, err := s.External(ctx, c.Agent.Tenant, c.Agent.CustomerID, ChainCurrency, address)
	if err != nil {
		return quotes.Quote{}, err
	}
	acc := quotes.DestAccount
	qr := req
	qr.Destination = &DestinationIn{DestinationType: &acc, AccountID: &ext}
	in := qr.toQuotes()
	in.ChainAddress, in.MinimumReceivingAmount = &address, req.Destination.MinimumReceivingAmount
	in.AgentID = c.Agent.ID
	return s.Quotes.Create(ctx, c.Agent.Tenant, in)
}

// priceMoved: a CHAIN_ADDRESS quote priced now would deliver less than its
// minimumReceivingAmount (R-AGENT-31).
type priceMoved struct{ now, min int64 }

func (e *priceMoved) Error() string {
	return fmt.Sprintf("agents: priced now the quote would deliver %d, below its minimumReceivingAmount %d", e.now, e.min)
}

// checkPrice prices a quote with a minimum again (R-AGENT-31).
func (s *Service) checkPrice(ctx context.Context, t store.Tenant, q quotes.Quote) error {
	if q.MinimumReceivingAmount <= 0 {
		return nil
	}
	now, err := s.Quotes.Repriced(ctx, t, q.ID)
	if err != nil {
		return err
	}
	if now < q.MinimumReceivingAmount {
		return &priceMoved{now: now, min: q.MinimumReceivingAmount}
	}
	return nil
}
