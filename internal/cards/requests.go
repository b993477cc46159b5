package cards

import (
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/jsonx"
)

// MaxPlatformCardID bounds platformCardId.
const MaxPlatformCardID = 255

// MaxMCCs bounds an MCC list.
const MaxMCCs = 500

// IssueRequest is the body of POST /cards. The cardholder may be named
// customerId or cardholderId, the funding source fundingSource or a
// one-element fundingSources (the reference's names).
type IssueRequest struct {
	CustomerID             *string  `json:"customerId"`
	CardholderID           *string  `json:"cardholderId"`
	FundingSource          *string  `json:"fundingSource"`
	FundingSources         []string `json:"fundingSources"`
	PlatformCardID         *string  `json:"platformCardId"`
	Form                   *string  `json:"form"`
	MaxSpendPerTransaction *int64   `json:"maxSpendPerTransaction"`
	MaxSpendPerDay         *int64   `json:"maxSpendPerDay"`
	MaxTransactionsPerDay  *int64   `json:"maxTransactionsPerDay"`
	AllowedMccs            []string `json:"allowedMccs"`
	BlockedMccs            []string `json:"blockedMccs"`
}

// Validate checks the request on its own. It never changes it.
func (r *IssueRequest) Validate() error {
	var f apierr.Fields
	r.checkCustomer(&f)
	r.checkFunding(&f)
	if r.PlatformCardID != nil {
		if n := utf8.RuneCountInString(*r.PlatformCardID); n < 1 || n > MaxPlatformCardID {
			f.Add("platformCardId", apierr.MaxLength, "must be 1 to %d characters", MaxPlatformCardID)
		}
	}
	if r.Form != nil && *r.Form != FormVirtual {
		f.Add("form", apierr.Enum, "must be %s: only virtual cards are issued", FormVirtual)
	}
	positive(&f, "maxSpendPerTransaction", r.MaxSpendPerTransaction)
	positive(&f, "maxSpendPerDay", r.MaxSpendPerDay)
	positive(&f, "maxTransactionsPerDay", r.MaxTransactionsPerDay)
	mccList(&f, "allowedMccs", r.AllowedMccs)
	mccList(&f, "blockedMccs", r.BlockedMccs)
	return f.Err()
}

// customer is the cardholder, named customerId or cardholderId.
func (r *IssueRequest) customer() string {
	if r.CustomerID != nil {
		return *r.CustomerID
	}
	if r.CardholderID != nil {
		return *r.CardholderID
	}
	return ""
}

// fundingSource is the funding account, named fundingSource or the one
// element of fundingSources.
func (r *IssueRequest) fundingSource() string {
	if r.FundingSource != nil {
		return *r.FundingSource
	}
	if len(r.FundingSources) == 1 {
		return r.FundingSources[0]
	}
	return ""
}

func (r *IssueRequest) checkCustomer(f *apierr.Fields) {
	switch {
	case r.CustomerID != nil && r.CardholderID != nil:
		f.Add("cardholderId", apierr.AdditionalProperties, "give the cardholder as customerId or cardholderId, not both")
	case r.CustomerID == nil && r.CardholderID == nil:
		f.Add("customerId", apierr.Required, "is required: the customer (cardholder) to issue the card to")
	case !id.Valid(id.Customer, r.customer()):
		f.Add("customerId", apierr.Pattern, "must be a customer id such as Customer:0199a1b2-…")
	}
}

func (r *IssueRequest) checkFunding(f *apierr.Fields) {
	switch {
	case r.FundingSource != nil && r.FundingSources != nil:
		f.Add("fundingSources", apierr.AdditionalProperties, "give the funding source as fundingSource or fundingSources, not both")
	case r.FundingSources != nil && len(r.FundingSources) != 1:
		f.Add("fundingSources", apierr.MaxItems, "must hold exactly one internal account: a card has one funding source")
	case r.FundingSource == nil && r.FundingSources == nil:
		f.Add("fundingSource", apierr.Required, "is required: the customer's internal account that funds the card")
	case !id.Valid(id.InternalAccount, r.fundingSource()):
		f.Add("fundingSource", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
	}
}

func positive(f *apierr.Fields, field string, v *int64) {
	if v != nil && *v < 1 {
		f.Add(field, apierr.Minimum, "must be a positive integer, or null for no limit")
	}
}

// mccList checks merchant category codes: four digits each, no repeats.
func mccList(f *apierr.Fields, field string, l []string) {
	if len(l) > MaxMCCs {
		f.Add(field, apierr.MaxItems, "must hold at most %d codes", MaxMCCs)
		return
	}
	seen := map[string]bool{}
	for _, m := range l {
		if !ValidMCC(m) {
			f.Add(field, apierr.Pattern, "must hold merchant category codes of four digits, such as 5814")
			return
		}
		if seen[m] {
			f.Add(field, apierr.UniqueItems, "must not repeat a code (%s)", m)
			return
		}
		seen[m] = true
	}
}

// ValidMCC reports whether s is a four-digit merchant category code.
func ValidMCC(s string) bool {
	if len(s) != 4 {
		return false
	}
	return strings.Trim(s, "0123456789") == ""
}

// UpdateRequest is the body of PATCH /cards/{id}. Limits and lists: omitted
// keeps, null clears, a value sets. threeDSecurePassword is forwarded to the
// issuer and never kept.
type UpdateRequest struct {
	Status                 *string                  `json:"status"`
	FundingSource          *string                  `json:"fundingSource"`
	MaxSpendPerTransaction jsonx.Optional[int64]    `json:"maxSpendPerTransaction"`
	MaxSpendPerDay         jsonx.Optional[int64]    `json:"maxSpendPerDay"`
	MaxTransactionsPerDay  jsonx.Optional[int64]    `json:"maxTransactionsPerDay"`
	AllowedMccs            jsonx.Optional[[]string] `json:"allowedMccs"`
	BlockedMccs            jsonx.Optional[[]string] `json:"blockedMccs"`
	ThreeDSecurePassword   *string                  `json:"threeDSecurePassword"`
}

// limitsSet reports whether the request changes a limit or an MCC list.
func (r *UpdateRequest) limitsSet() bool {
	return r.MaxSpendPerTransaction.Set || r.MaxSpendPerDay.Set || r.MaxTransactionsPerDay.Set ||
		r.AllowedMccs.Set || r.BlockedMccs.Set
}

// Validate checks the request on its own (R-CARD-19, R-CARD-20, R-CARD-31,
// R-CARD-32).
func (r *UpdateRequest) Validate() error {
	var f apierr.Fields
	if r.Status == nil && r.FundingSource == nil && !r.limitsSet() && r.ThreeDSecurePassword == nil {
		f.Add("status", apierr.Required, "give at least one of status, fundingSource, maxSpendPerTransaction, "+
			"maxSpendPerDay, maxTransactionsPerDay, allowedMccs, blockedMccs, threeDSecurePassword")
	}
	if r.Status != nil {
		if _, ok := requestTriggers[*r.Status]; !ok {
			f.Add("status", apierr.Enum, "must be one of %s: %s cannot be requested", strings.Join(RequestableStatuses, ", "), *r.Status)
		}
	}
	if r.FundingSource != nil && !id.Valid(id.InternalAccount, *r.FundingSource) {
		f.Add("fundingSource", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
	}
	if r.Status != nil && *r.Status == StatusClosed {
		if r.FundingSource != nil {
			f.Add("fundingSource", apierr.AdditionalProperties, "cannot accompany status CLOSED")
		}
		if r.limitsSet() {
			f.Add("status", apierr.AdditionalProperties, "CLOSED cannot be combined with limit or MCC fields")
		}
	}
	positive(&f, "maxSpendPerTransaction", r.MaxSpendPerTransaction.Ptr())
	positive(&f, "maxSpendPerDay", r.MaxSpendPerDay.Ptr())
	positive(&f, "maxTransactionsPerDay", r.MaxTransactionsPerDay.Ptr())
	mccList(&f, "allowedMccs", r.AllowedMccs.Value)
	mccList(&f, "blockedMccs", r.BlockedMccs.Value)
	if r.ThreeDSecurePassword != nil {
		if n := utf8.RuneCountInString(*r.ThreeDSecurePassword); n < 8 || n > 64 {
			f.Add("threeDSecurePassword", apierr.MinLength, "must be 8 to 64 characters")
		}
	}
	return f.Err()
}
