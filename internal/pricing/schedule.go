package pricing

import (
	"fmt"
	"strings"

	"github.com/paymentsd/paymentsd/internal/currency"
)

// Rails the built-in tables name. The API's PaymentRail is an open list; a
// rail not named here simply matches no rail-specific rule.
const (
	// RailInternal is a book transfer between two accounts the service holds
	// (no payment rail; the quote's paymentRail is null).
	RailInternal       = "INTERNAL"
	RailACH            = "ACH"
	RailACHSameDay     = "ACH_SAME_DAY"
	RailWire           = "WIRE"
	RailRTP            = "RTP"
	RailFedNow         = "FEDNOW"
	RailSEPA           = "SEPA"
	RailSEPAInstant    = "SEPA_INSTANT"
	RailFasterPayments = "FASTER_PAYMENTS"
	RailSPEI           = "SPEI"
	RailPIX            = "PIX"
	RailUPI            = "UPI"
	RailInstaPay       = "INSTAPAY"
	RailPayNow         = "PAYNOW"
	RailBreB           = "BRE_B"
	RailMobileMoney    = "MOBILE_MONEY"
	RailBankTransfer   = "BANK_TRANSFER"
	RailSWIFT          = "SWIFT"
	RailLightning      = "LIGHTNING"
	RailOnchain        = "ONCHAIN"
)

// DefaultRails is the rail a payout in each currency uses when the caller
// names none: the destinationPaymentRail of GET /exchange-rates entries.
var DefaultRails = map[string]string{
	"USD": RailACH, "EUR": RailSEPAInstant, "GBP": RailFasterPayments, "MXN": RailSPEI,
	"BRL": RailPIX, "INR": RailUPI, "PHP": RailInstaPay, "NGN": RailBankTransfer,
	"CNY": RailBankTransfer, "CAD": RailBankTransfer, "COP": RailBreB, "KES": RailMobileMoney,
	"SGD": RailPayNow, "HKD": RailBankTransfer, "AUD": RailBankTransfer, "CHF": RailBankTransfer,
	"ZAR": RailBankTransfer, "JPY": RailBankTransfer, "BTC": RailLightning,
	"USDC": RailOnchain, "USDT": RailOnchain, "USDB": RailOnchain, "SOL": RailOnchain,
}

// DefaultRail returns the default payout rail of a currency (BANK_TRANSFER
// for a currency without an entry).
func DefaultRail(destinationCurrency string) string {
	if r, ok := DefaultRails[destinationCurrency]; ok {
		return r
	}
	return RailBankTransfer
}

// Kind restricts a rule to same-currency or cross-currency transfers.
type Kind int

// Corridor kinds.
const (
	AnyCorridor Kind = iota
	SameCurrency
	CrossCurrency
)

// Match selects the transfers a rule applies to. Empty fields match anything.
// When several rules of one table match, the most specific wins (source,
// destination and rail count 2 each, Kind 1); among equals, the first listed.
type Match struct {
	SourceCurrency      string
	DestinationCurrency string
	Rail                string
	Kind                Kind
}

func (m Match) matches(src, dst, rail string) bool {
	switch {
	case m.SourceCurrency != "" && m.SourceCurrency != src,
		m.DestinationCurrency != "" && m.DestinationCurrency != dst,
		m.Rail != "" && m.Rail != rail,
		m.Kind == SameCurrency && src != dst,
		m.Kind == CrossCurrency && src == dst:
		return false
	}
	return true
}

func (m Match) specificity() int {
	n := 0
	for _, s := range []string{m.SourceCurrency, m.DestinationCurrency, m.Rail} {
		if s != "" {
			n += 2
		}
	}
	if m.Kind != AnyCorridor {
		n++
	}
	return n
}

// best returns the index of the most specific rule matching, or -1.
func best[T any](rules []T, match func(T) Match, src, dst, rail string) int {
	at, score := -1, -1
	for i, r := range rules {
		m := match(r)
		if m.matches(src, dst, rail) && m.specificity() > score {
			at, score = i, m.specificity()
		}
	}
	return at
}

// Money is an amount in the smallest unit of Currency. An empty Currency means
// the currency of the side the amount applies to (the sending currency for
// service fees and bounds, the receiving currency for payout fees); another
// currency is converted at the cached rate (fees and minimums round up,
// maximums round down).
type Money struct {
	Amount   int64
	Currency string
}

// USD is a convenience for amounts in US cents.
func USD(cents int64) Money { return Money{Amount: cents, Currency: "USD"} }

// ServiceFee is the service's own fee on matching transfers: VariableBps of
// the total sending amount plus Fixed.
type ServiceFee struct {
	Match
	VariableBps int64
	Fixed       Money
}

// PayoutFee is what the destination rail charges per payout, in the
// receiving currency (the counterparty fee of rateDetails).
type PayoutFee struct {
	Match
	Fixed Money
}

// NetworkFee is what a blockchain charges to carry a payout on Network
// (the sandbox fee model: a fixed amount per network), in the receiving
// currency after conversion; like the payout fee it is part of the
// counterparty fee of rateDetails.
type NetworkFee struct {
	Network string
	Fixed   Money
}

// Schedule is the service fee schedule: one service fee and one payout fee
// apply to a transfer, each the most specific matching rule of its table
// (none matching means no fee), plus the network fee of an on-chain payout.
// Replace Engine.Schedule to change it.
type Schedule struct {
	Service []ServiceFee
	Payout  []PayoutFee
	Network []NetworkFee
}

// DefaultNetworkFees is the sandbox network fee model: what a withdrawal
// costs on each chain, in US cents converted to the withdrawn currency
// (rounded up). Lightning and Spark carry no network fee.
func DefaultNetworkFees() []NetworkFee {
	return []NetworkFee{
		{Network: "SOLANA", Fixed: USD(1)},
		{Network: "ETHEREUM", Fixed: USD(150)},
		{Network: "BASE", Fixed: USD(2)},
		{Network: "POLYGON", Fixed: USD(1)},
		{Network: "PLASMA", Fixed: USD(1)},
		{Network: "TRON", Fixed: USD(100)},
		{Network: "BITCOIN", Fixed: USD(75)},
	}
}

// NetworkFor returns the network fee of a payout on network (zero for none).
func (s Schedule) NetworkFor(network string) Money {
	for _, n := range s.Network {
		if n.Network == network {
			return n.Fixed
		}
	}
	return Money{}
}

// DefaultSchedule is the built-in fee schedule:
//
//   - same-currency transfers carry no service fee; an internal (book)
//     transfer is free;
//   - cross-currency transfers: 50 bps + USD 1.00 (converted to the sending
//     currency), except between USD and a USD stablecoin (10 bps, no fixed);
//   - on-chain payouts: the network fee of DefaultNetworkFees;
//   - payouts: ACH USD 0.25, WIRE USD 15.00, RTP and FedNow USD 0.50, SEPA and
//     SEPA Instant EUR 0.20, Faster Payments GBP 0.20, SPEI MXN 3.00, SWIFT
//     USD 25.00; ACH_SAME_DAY and every other rail free. (ACH_SAME_DAY is free
//     so that a same-day payout right at its per-entry limit is possible
//     whichever side is locked.)
func DefaultSchedule() Schedule {
	s := Schedule{
		Service: []ServiceFee{
			{Match: Match{Kind: CrossCurrency}, VariableBps: 50, Fixed: USD(100)},
		},
		Payout: []PayoutFee{
			{Match: Match{Rail: RailACH}, Fixed: USD(25)},
			{Match: Match{Rail: RailWire}, Fixed: USD(1500)},
			{Match: Match{Rail: RailRTP}, Fixed: USD(50)},
			{Match: Match{Rail: RailFedNow}, Fixed: USD(50)},
			{Match: Match{Rail: RailSEPA}, Fixed: Money{Amount: 20, Currency: "EUR"}},
			{Match: Match{Rail: RailSEPAInstant}, Fixed: Money{Amount: 20, Currency: "EUR"}},
			{Match: Match{Rail: RailFasterPayments}, Fixed: Money{Amount: 20, Currency: "GBP"}},
			{Match: Match{Rail: RailSPEI}, Fixed: Money{Amount: 300, Currency: "MXN"}},
			{Match: Match{Rail: RailSWIFT}, Fixed: USD(2500)},
		},
	}
	s.Network = DefaultNetworkFees()
	for _, coin := range []string{"USDC", "USDT", "USDB"} {
		s.Service = append(s.Service,
			ServiceFee{Match: Match{SourceCurrency: "USD", DestinationCurrency: coin}, VariableBps: 10},
			ServiceFee{Match: Match{SourceCurrency: coin, DestinationCurrency: "USD"}, VariableBps: 10})
	}
	return s
}

// ServiceFor returns the service fee rule for a transfer (zero when none).
func (s Schedule) ServiceFor(src, dst, rail string) ServiceFee {
	if i := best(s.Service, func(r ServiceFee) Match { return r.Match }, src, dst, rail); i >= 0 {
		return s.Service[i]
	}
	return ServiceFee{}
}

// PayoutFor returns the payout fee rule for a transfer (zero when none).
func (s Schedule) PayoutFor(src, dst, rail string) PayoutFee {
	if i := best(s.Payout, func(r PayoutFee) Match { return r.Match }, src, dst, rail); i >= 0 {
		return s.Payout[i]
	}
	return PayoutFee{}
}

// Validate checks the schedule: bps within 0..9999, amounts not negative,
// currencies known, and no fixed amount without a currency on a rule whose
// side's currency is a wildcard (100 "of whatever currency" is meaningless).
func (s Schedule) Validate() error {
	for i, r := range s.Service {
		if r.VariableBps < 0 || r.VariableBps >= 10000 {
			return fmt.Errorf("pricing: service fee %d: variableBps %d not in 0..9999", i, r.VariableBps)
		}
		if err := checkMoney(r.Fixed, r.SourceCurrency); err != nil {
			return fmt.Errorf("pricing: service fee %d: %w", i, err)
		}
	}
	for i, r := range s.Payout {
		if err := checkMoney(r.Fixed, r.DestinationCurrency); err != nil {
			return fmt.Errorf("pricing: payout fee %d: %w", i, err)
		}
	}
	for _, n := range s.Network {
		if n.Network == "" {
			return fmt.Errorf("pricing: a network fee names no network")
		}
		if err := checkMoney(n.Fixed, ""); err != nil {
			return fmt.Errorf("pricing: network fee of %s: %w", n.Network, err)
		}
	}
	return nil
}

func checkMoney(m Money, sideCurrency string) error {
	if m.Amount < 0 {
		return fmt.Errorf("amount %d is negative", m.Amount)
	}
	if m.Currency != "" {
		if _, ok := currency.Lookup(m.Currency); !ok {
			return fmt.Errorf("unknown currency %q", m.Currency)
		}
		return nil
	}
	if m.Amount != 0 && sideCurrency == "" {
		return fmt.Errorf("amount %d has no currency and the rule matches any currency", m.Amount)
	}
	return nil
}

// PayoutNetwork is the chain an on-chain payout to an external account of
// accountType travels (ETHEREUM for ETHEREUM_WALLET, …), whose network fee
// it pays; empty off chain.
func PayoutNetwork(accountType, rail string) string {
	if rail != RailOnchain {
		return ""
	}
	n, _ := strings.CutSuffix(accountType, "_WALLET")
	return n
}
