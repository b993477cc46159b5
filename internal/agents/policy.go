package agents

import (
	"fmt"
	"slices"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/ledger"
)

// Permissions an agent policy grants (R-AGENT-04; CREATE_TRANSFERS and
// VIEW_TRANSACTIONS are the reference's, for the deprecated transfer-in and
// transfer-out endpoints and for reading transactions).
const (
	PermCreateQuotes           = "CREATE_QUOTES"
	PermExecuteQuotes          = "EXECUTE_QUOTES"
	PermManageExternalAccounts = "MANAGE_EXTERNAL_ACCOUNTS"
	PermManageCards            = "MANAGE_CARDS"
	PermManageIdentity         = "MANAGE_IDENTITY"
	PermReceiveFunds           = "RECEIVE_FUNDS"
	PermCreateTransfers        = "CREATE_TRANSFERS"
	PermViewTransactions       = "VIEW_TRANSACTIONS"
)

// AllPermissions is the enumeration a policy accepts.
var AllPermissions = []string{PermCreateQuotes, PermExecuteQuotes, PermManageExternalAccounts, PermManageCards,
	PermManageIdentity, PermReceiveFunds, PermCreateTransfers, PermViewTransactions}

// Execution modes: AUTO executes what the limits allow at once;
// APPROVAL_REQUIRED sends every money-moving action for approval.
const (
	ModeAuto             = "AUTO"
	ModeApprovalRequired = "APPROVAL_REQUIRED"
)

var modes = []string{ModeAuto, ModeApprovalRequired}

// SpendingLimits cap what the agent moves, in the policy's currency (its
// smallest unit). A nil limit is no limit.
type SpendingLimits struct {
	Currency              string `json:"currency"`
	PerTransactionLimit   int64  `json:"perTransactionLimit"`
	DailyLimit            *int64 `json:"dailyLimit"`
	DailyTransactionLimit *int64 `json:"dailyTransactionLimit,omitempty"`
	MonthlyLimit          *int64 `json:"monthlyLimit"`
}

// AccountRule overrides the policy for one internal account.
type AccountRule struct {
	AccountID           string `json:"accountId"`
	ExecutionMode       string `json:"executionMode,omitempty"`
	PerTransactionLimit *int64 `json:"perTransactionLimit"`
}

// AccountRestrictions limit the agent to some accounts (nil: all of its
// customer's) and override the policy per account.
type AccountRestrictions struct {
	AllowedAccountIDs []string      `json:"allowedAccountIds"`
	AccountRules      []AccountRule `json:"accountRules"`
}

// ApprovalThresholds force approval above an amount (nil: none).
type ApprovalThresholds struct {
	Currency string `json:"currency,omitempty"`
	Amount   *int64 `json:"amount"`
}

// Policy is an agent's policy as stored and shown.
type Policy struct {
	Permissions          []string            `json:"permissions"`
	DefaultExecutionMode string              `json:"defaultExecutionMode"`
	SpendingLimits       SpendingLimits      `json:"spendingLimits"`
	AccountRestrictions  AccountRestrictions `json:"accountRestrictions"`
	ApprovalThresholds   ApprovalThresholds  `json:"approvalThresholds"`
}

// Grants reports whether the policy grants perm.
func (p Policy) Grants(perm string) bool { return slices.Contains(p.Permissions, perm) }

// LimitsIn is the spendingLimits of a request: every field optional so a
// PATCH changes only what it names; null removes a daily or monthly limit.
type LimitsIn struct {
	Currency              *string               `json:"currency"`
	PerTransactionLimit   *int64                `json:"perTransactionLimit"`
	DailyLimit            jsonx.Optional[int64] `json:"dailyLimit"`
	DailyTransactionLimit jsonx.Optional[int64] `json:"dailyTransactionLimit"`
	MonthlyLimit          jsonx.Optional[int64] `json:"monthlyLimit"`
}

// RestrictionsIn is the accountRestrictions of a request.
type RestrictionsIn struct {
	AllowedAccountIDs jsonx.Optional[[]string] `json:"allowedAccountIds"`
	AccountRules      []AccountRuleIn          `json:"accountRules"`
}

// AccountRuleIn is one account rule of a request.
type AccountRuleIn struct {
	AccountID           *string               `json:"accountId"`
	ExecutionMode       *string               `json:"executionMode"`
	PerTransactionLimit jsonx.Optional[int64] `json:"perTransactionLimit"`
}

// ThresholdsIn is the approvalThresholds of a request.
type ThresholdsIn struct {
	Currency *string               `json:"currency"`
	Amount   jsonx.Optional[int64] `json:"amount"`
}

// PolicyIn is a policy in a request: the whole policy on POST /agents, a
// partial one on PATCH /agents/{agentId}/policy (R-AGENT-05).
type PolicyIn struct {
	Permissions          []string        `json:"permissions"`
	DefaultExecutionMode *string         `json:"defaultExecutionMode"`
	SpendingLimits       *LimitsIn       `json:"spendingLimits"`
	AccountRestrictions  *RestrictionsIn `json:"accountRestrictions"`
	ApprovalThresholds   *ThresholdsIn   `json:"approvalThresholds"`
}

// checkAmount validates a limit amount.
func checkAmount(f *apierr.Fields, field string, v *int64) {
	switch {
	case v == nil:
	case *v < 0:
		f.Add(field, apierr.Minimum, "must not be negative (smallest currency unit)")
	case *v > ledger.MaxAmount:
		f.Add(field, apierr.Maximum, "must be at most %d", ledger.MaxAmount)
	}
}

func checkCurrency(f *apierr.Fields, field string, c *string) {
	if c == nil {
		return
	}
	if _, ok := currency.Lookup(*c); !ok {
		f.Add(field, apierr.Enum, "is not a currency this server knows (ISO 4217 code such as USD)")
	}
}

// Validate checks the request policy on its own. full: it must be a whole
// policy (creation).
func (p *PolicyIn) Validate(prefix string, full bool) error {
	var f apierr.Fields
	at := func(s string) string { return prefix + s }
	switch {
	case p.Permissions == nil && full:
		f.Add(at("permissions"), apierr.Required, "is required: the permissions granted (may be empty)")
	case p.Permissions != nil:
		seen := map[string]bool{}
		for i, perm := range p.Permissions {
			if !slices.Contains(AllPermissions, perm) {
				f.Add(fmt.Sprintf("%spermissions[%d]", prefix, i), apierr.Enum, "must be one of %v", AllPermissions)
			} else if seen[perm] {
				f.Add(fmt.Sprintf("%spermissions[%d]", prefix, i), apierr.UniqueItems, "is listed twice")
			}
			seen[perm] = true
		}
	}
	switch {
	case p.DefaultExecutionMode == nil && full:
		f.Add(at("defaultExecutionMode"), apierr.Required, "is required: AUTO or APPROVAL_REQUIRED")
	case p.DefaultExecutionMode != nil && !slices.Contains(modes, *p.DefaultExecutionMode):
		f.Add(at("defaultExecutionMode"), apierr.Enum, "must be AUTO or APPROVAL_REQUIRED")
	}
	p.validateLimits(&f, at, full)
	p.validateRestrictions(&f, at)
	if th := p.ApprovalThresholds; th != nil {
		checkCurrency(&f, at("approvalThresholds.currency"), th.Currency)
		checkAmount(&f, at("approvalThresholds.amount"), th.Amount.Ptr())
		if th.Amount.Ptr() != nil && th.Currency == nil {
			f.Add(at("approvalThresholds.currency"), apierr.Required, "is required when amount is set")
		}
	}
	return f.Err()
}

func (p *PolicyIn) validateLimits(f *apierr.Fields, at func(string) string, full bool) {
	l := p.SpendingLimits
	if l == nil {
		if full {
			f.Add(at("spendingLimits"), apierr.Required, "is required: currency and perTransactionLimit at least")
		}
		return
	}
	if full && l.Currency == nil {
		f.Add(at("spendingLimits.currency"), apierr.Required, "is required: the currency every limit is in")
	}
	if full && l.PerTransactionLimit == nil {
		f.Add(at("spendingLimits.perTransactionLimit"), apierr.Required, "is required")
	}
	checkCurrency(f, at("spendingLimits.currency"), l.Currency)
	checkAmount(f, at("spendingLimits.perTransactionLimit"), l.PerTransactionLimit)
	checkAmount(f, at("spendingLimits.dailyLimit"), l.DailyLimit.Ptr())
	checkAmount(f, at("spendingLimits.monthlyLimit"), l.MonthlyLimit.Ptr())
	checkAmount(f, at("spendingLimits.dailyTransactionLimit"), l.DailyTransactionLimit.Ptr())
}

func (p *PolicyIn) validateRestrictions(f *apierr.Fields, at func(string) string) {
	r := p.AccountRestrictions
	if r == nil {
		return
	}
	for i, a := range r.AllowedAccountIDs.Value {
		if !id.Valid(id.InternalAccount, a) {
			f.Add(fmt.Sprintf("%s[%d]", at("accountRestrictions.allowedAccountIds"), i), apierr.Pattern,
				"must be an internal account id such as InternalAccount:0199a1b2-…")
		}
	}
	for i, rule := range r.AccountRules {
		base := fmt.Sprintf("%s[%d].", at("accountRestrictions.accountRules"), i)
		switch {
		case rule.AccountID == nil:
			f.Add(base+"accountId", apierr.Required, "is required")
		case !id.Valid(id.InternalAccount, *rule.AccountID):
			f.Add(base+"accountId", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
		}
		if rule.ExecutionMode != nil && !slices.Contains(modes, *rule.ExecutionMode) {
			f.Add(base+"executionMode", apierr.Enum, "must be AUTO or APPROVAL_REQUIRED")
		}
		checkAmount(f, base+"perTransactionLimit", rule.PerTransactionLimit.Ptr())
	}
}

// apply merges the request into p (a zero Policy for creation). A change of
// the spending-limits currency after creation is refused (R-AGENT-06).
func (in *PolicyIn) apply(p *Policy, creating bool) error {
	if in.Permissions != nil {
		p.Permissions = slices.Clone(in.Permissions)
	}
	if in.DefaultExecutionMode != nil {
		p.DefaultExecutionMode = *in.DefaultExecutionMode
	}
	if l := in.SpendingLimits; l != nil {
		if l.Currency != nil && !creating && *l.Currency != p.SpendingLimits.Currency {
			var f apierr.Fields
			f.Add("spendingLimits.currency", apierr.Enum, "cannot change after the agent is created (it is %s)",
				p.SpendingLimits.Currency)
			return f.Err()
		}
		if l.Currency != nil {
			p.SpendingLimits.Currency = *l.Currency
		}
		if l.PerTransactionLimit != nil {
			p.SpendingLimits.PerTransactionLimit = *l.PerTransactionLimit
		}
		if l.DailyLimit.Set {
			p.SpendingLimits.DailyLimit = l.DailyLimit.Ptr()
		}
		if l.DailyTransactionLimit.Set {
			p.SpendingLimits.DailyTransactionLimit = l.DailyTransactionLimit.Ptr()
		}
		if l.MonthlyLimit.Set {
			p.SpendingLimits.MonthlyLimit = l.MonthlyLimit.Ptr()
		}
	}
	if r := in.AccountRestrictions; r != nil {
		if r.AllowedAccountIDs.Set {
			p.AccountRestrictions.AllowedAccountIDs = nil
			if !r.AllowedAccountIDs.Null {
				p.AccountRestrictions.AllowedAccountIDs = slices.Clone(r.AllowedAccountIDs.Value)
			}
		}
		if r.AccountRules != nil {
			p.AccountRestrictions.AccountRules = make([]AccountRule, len(r.AccountRules))
			for i, rule := range r.AccountRules {
				p.AccountRestrictions.AccountRules[i] = AccountRule{AccountID: *rule.AccountID,
					ExecutionMode: deref(rule.ExecutionMode), PerTransactionLimit: rule.PerTransactionLimit.Ptr()}
			}
		}
	}
	if th := in.ApprovalThresholds; th != nil {
		if th.Currency != nil {
			p.ApprovalThresholds.Currency = *th.Currency
		}
		if th.Amount.Set {
			p.ApprovalThresholds.Amount = th.Amount.Ptr()
		}
	}
	if p.ApprovalThresholds.Amount != nil && p.ApprovalThresholds.Currency == "" {
		var f apierr.Fields
		f.Add("approvalThresholds.currency", apierr.Required, "is required when amount is set")
		return f.Err()
	}
	if p.Permissions == nil {
		p.Permissions = []string{}
	}
	if p.AccountRestrictions.AccountRules == nil {
		p.AccountRestrictions.AccountRules = []AccountRule{}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
