package agents

import (
	"context"
	"errors"
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
// external) of the agent's customer.
type DestinationIn struct {
	DestinationType *string `json:"destinationType"`
	AccountID       *string `json:"accountId"`
	PaymentRail     *string `json:"paymentRail"`
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
	if r.Destination != nil && r.Destination.DestinationType != nil && *r.Destination.DestinationType != quotes.DestAccount {
		f.Add("destination.destinationType", apierr.Enum, "must be ACCOUNT")
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
	src, dst := *req.Source.AccountID, *req.Destination.AccountID
	for _, a := range []string{src, dst} {
		if err := ownAccount(ctx, s.DB.Read(), c, a); err != nil {
			return quotes.Quote{}, err
		}
	}
	if allowed := c.Policy.AccountRestrictions.AllowedAccountIDs; allowed != nil && !slices.Contains(allowed, src) {
		return quotes.Quote{}, apierr.Forbidden("The agent's policy does not allow account " + src)
	}
	return s.Quotes.Create(ctx, c.Agent.Tenant, req.toQuotes())
}

// GetQuote returns a quote of the agent's customer (R-AGENT-32).
func (s *Service) GetQuote(ctx context.Context, c Caller, quoteID string) (quotes.Quote, error) {
	if _, err := s.agentQuote(ctx, c, quoteID); err != nil {
		return quotes.Quote{}, err
	}
	return s.Quotes.Get(ctx, c.Agent.Tenant, quoteID)
}
