package stablecoins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/rails"
)

// Sandbox simulates the provider (BRALE's sandbox) without a network: it is
// stateless, deriving every answer from its inputs and the transfer as last
// reported, so the operation's stored state is all there is to resume after
// a restart. Time passes on the rails' sandbox clock (rails.ClockFactor):
// a wire arrives about an hour after the instructions are issued, a mint or
// burn settles on chain about ten minutes later, and a burn's fiat payout
// takes its rail's typical time.
//
// Magic inputs (docs/stablecoins.md):
//   - link: apiClientSecret shorter than 12 characters or starting with
//     "invalid" is refused (STABLECOIN_VERIFICATION_FAILED); an apiClientId
//     starting with "unapproved" verifies but may not issue (link INVALID);
//   - register: providerTokenIdentifier starting with "UNKNOWN" is no token
//     of the account (STABLECOIN_VERIFICATION_FAILED); starting with "PEND"
//     is still PROVISIONING;
//   - addresses: a bank account number ending in 9999 is refused by the
//     provider (STABLECOIN_EXTERNAL_ACCOUNT_PROVIDER_LINK_FAILED);
//   - burns paid by RTP_CREDIT are not offered (STABLECOIN_OPERATION_NOT_SUPPORTED);
//   - transfers, by the fiat amount's cents: .77 is never funded (the
//     operation expires), .13 fails after funding (PROVIDER_TRANSFER_FAILED).
type Sandbox struct{}

// Sandbox timings, in rail time (scaled by rails.ClockFactor).
const (
	sandboxFunding   = time.Hour
	sandboxSettling  = 10 * time.Minute
	sandboxPoll      = 12 * time.Hour
	sandboxFundingTT = 7 * 24 * time.Hour
)

// FundingWindow is how long an operation waits for its funds before it
// expires (scaled like the other sandbox times).
func FundingWindow() time.Duration { return rails.Scale(sandboxFundingTT, rails.ClockFactor()) }

func scaled(d time.Duration) time.Duration { return rails.Scale(d, rails.ClockFactor()) }

func sandboxID(prefix string, parts ...string) string {
	sum := sha256.Sum256([]byte("paymentsd-stablecoin-sandbox|" + strings.Join(parts, "|")))
	return prefix + hex.EncodeToString(sum[:12])
}

func (Sandbox) Environment() string { return EnvSandbox }

func (Sandbox) Verify(_ context.Context, c Credentials) (Verification, error) {
	if len(c.Secret) < 12 || strings.HasPrefix(c.Secret, "invalid") {
		return Verification{}, apierr.New("STABLECOIN_VERIFICATION_FAILED",
			"The provider rejected the API credentials (sandbox: a secret of 12 or more characters not starting with \"invalid\" verifies)")
	}
	acct := c.AccountID
	if acct == "" {
		acct = sandboxID("", "account", c.ClientID)
	}
	return Verification{AccountID: acct, Usable: !strings.HasPrefix(c.ClientID, "unapproved")}, nil
}

var valueTypeRE = regexp.MustCompile(`^[A-Z][A-Z0-9]{2,9}$`)

func (Sandbox) Token(_ context.Context, _ Credentials, valueType, network, _ string) (Token, error) {
	if !valueTypeRE.MatchString(valueType) || strings.HasPrefix(valueType, "UNKNOWN") {
		return Token{}, apierr.New("STABLECOIN_VERIFICATION_FAILED",
			fmt.Sprintf("The provider account has no token with value type %q on %s", valueType, network))
	}
	status := IssuanceProvisioned
	if strings.HasPrefix(valueType, "PEND") {
		status = IssuanceProvisioning
	}
	return Token{Name: valueType + " Dollar", Symbol: valueType, BaseCurrency: "USD", Decimals: 6,
		IssuanceStatus: status}, nil
}

func (Sandbox) LinkAddress(_ context.Context, c Credentials, a Address) (string, error) {
	if a.Bank && strings.HasSuffix(a.Value, "9999") {
		return "", apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_PROVIDER_LINK_FAILED",
			"The provider refused to register external account "+a.ExternalAccountID+" (sandbox: account numbers ending in 9999)")
	}
	return sandboxID("addr_", c.AccountID, a.ExternalAccountID, a.Value), nil
}

func (Sandbox) CreateTransfer(_ context.Context, c Credentials, o Order, now time.Time) (Transfer, error) {
	if o.Type == TypeBurn && o.Rail == RailRTPCredit {
		return Transfer{}, apierr.New("STABLECOIN_OPERATION_NOT_SUPPORTED",
			"The provider does not pay redemptions by RTP_CREDIT; use WIRE, ACH_CREDIT or SAME_DAY_ACH_CREDIT")
	}
	t := Transfer{ID: sandboxID("tr_", c.AccountID, o.OperationID), Status: ProviderAwaitingFunds,
		CheckAfter: now.Add(scaled(sandboxFunding))}
	if o.Type == TypeMint {
		t.Instructions = &FundingInstructions{Rail: SourceWire, BankName: "Sandbox Provider Trust Bank",
			RoutingNumber: "021000021", AccountNumber: "88" + sandboxID("", "wire", c.AccountID)[:10],
			Reference: strings.ToUpper(t.ID[3:15]), Amount: fmt.Sprint(o.FiatAmount), Currency: o.Currency}
	} else {
		t.Instructions = &FundingInstructions{Rail: o.Network, Network: o.Network, ValueType: o.ValueType,
			Address: "sandbox-deposit-" + sandboxID("", "deposit", c.AccountID, o.OperationID)}
	}
	return t, nil
}

func (Sandbox) Refresh(_ context.Context, _ Credentials, o Order, t Transfer, now time.Time) (Transfer, error) {
	if now.Before(t.CheckAfter) {
		return t, nil
	}
	cents := o.FiatAmount % 100
	switch t.Status {
	case ProviderAwaitingFunds:
		if cents == 77 { // never funded
			t.CheckAfter = now.Add(scaled(sandboxPoll))
			return t, nil
		}
		t.Status, t.Instructions, t.CheckAfter = ProviderPending, nil, now.Add(scaled(sandboxSettling))
	case ProviderPending:
		if cents == 13 {
			t.Status, t.FailureReason = ProviderFailed, "PROVIDER_TRANSFER_FAILED"
			return t, nil
		}
		t.Status, t.CheckAfter = ProviderProcessing, now.Add(scaled(settleTime(o)))
	case ProviderProcessing:
		t.Status = ProviderComplete
	}
	return t, nil
}

// settleTime is how long the last leg takes: on chain for a mint, the
// payout rail for a burn.
func settleTime(o Order) time.Duration {
	if o.Type == TypeMint {
		return sandboxSettling
	}
	switch o.Rail {
	case RailWire:
		return 24 * time.Hour
	case RailACHCredit:
		return 48 * time.Hour
	case RailSameDayCredit:
		return 4 * time.Hour
	}
	return 0
}

// railTiming is the human-readable estimate of a burn payout rail.
func railTiming(rail string) string {
	switch rail {
	case RailWire:
		return "same business day"
	case RailSameDayCredit:
		return "same business day"
	case RailRTPCredit:
		return "seconds"
	}
	return "1-3 business days"
}
