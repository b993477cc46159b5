package agents

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/quotes"
)

// AccountRef names an account in a transfer request.
type AccountRef struct {
	AccountID *string `json:"accountId"`
}

// TransferRequest is the body of the deprecated POST
// /agents/me/transfer-out and /agents/me/transfer-in: a same-currency
// transfer between accounts of the agent's customer.
type TransferRequest struct {
	Source      *AccountRef `json:"source"`
	Destination *AccountRef `json:"destination"`
	Amount      *int64      `json:"amount"`
}

// Validate checks the request on its own: out goes from an internal to an
// external account, in the other way.
func (r TransferRequest) Validate(out bool) error {
	var f apierr.Fields
	from, to := id.InternalAccount, id.ExternalAccount
	if !out {
		from, to = to, from
	}
	check := func(field string, ref *AccountRef, prefix string) {
		switch {
		case ref == nil || ref.AccountID == nil:
			f.Add(field+".accountId", apierr.Required, "is required")
		case !strings.HasPrefix(*ref.AccountID, prefix+":"):
			f.Add(field+".accountId", apierr.Pattern, "must be an account id such as %s:0199a1b2-…", prefix)
		}
	}
	check("source", r.Source, from)
	check("destination", r.Destination, to)
	switch {
	case r.Amount == nil:
		f.Add("amount", apierr.Required, "is required, in the smallest unit of the source's currency")
	case *r.Amount <= 0:
		f.Add("amount", apierr.Minimum, "must be a positive integer")
	}
	return f.Err()
}

// Transfer submits a TRANSFER_OUT (out) or TRANSFER_IN action: the transfer
// is priced as a quote between the customer's accounts and then, like a
// quote execution, refused, executed or sent for approval by the policy
// (needs CREATE_TRANSFERS).
func (s *Service) Transfer(ctx context.Context, c Caller, req TransferRequest, out bool) (Action, error) {
	if err := c.Require(PermCreateTransfers); err != nil {
		return Action{}, err
	}
	if err := req.Validate(out); err != nil {
		return Action{}, err
	}
	src, dst := *req.Source.AccountID, *req.Destination.AccountID
	for _, a := range []string{src, dst} {
		if err := ownAccount(ctx, s.DB.Read(), c, a); err != nil {
			return Action{}, err
		}
	}
	// Refused before anything is priced (evaluate checks it again).
	if allowed := c.Policy.AccountRestrictions.AllowedAccountIDs; allowed != nil && !containsID(allowed, src) {
		return Action{}, apierr.Forbidden("The agent's policy does not allow account " + src)
	}
	typ, side, kind := TypeTransferOut, "SENDING", quotes.SourceAccount
	if !out {
		typ = TypeTransferIn
	}
	dest := quotes.DestAccount
	q, err := s.Quotes.Create(ctx, c.Agent.Tenant, quotes.Request{
		Source:             &quotes.SourceIn{SourceType: &kind, AccountID: &src},
		Destination:        &quotes.DestinationIn{DestinationType: &dest, AccountID: &dst},
		LockedCurrencySide: &side, LockedCurrencyAmount: req.Amount, AgentID: c.Agent.ID,
	})
	if err != nil {
		return Action{}, err
	}
	details, err := json.Marshal(TransferDetails{Amount: *req.Amount, Currency: q.SendingCurrency.Code,
		SourceAccountID: src, DestinationAccountID: dst})
	if err != nil {
		return Action{}, err
	}
	return s.submit(ctx, c, q, typ, details)
}

func containsID(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
