package externalaccounts

import (
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// walletSpec returns the wallet account type whose chain is network.
func walletSpec(network string) *typeSpec {
	for _, s := range specs {
		if s.kind == kindWallet && s.chain == network {
			return s
		}
	}
	return nil
}

// WalletNetworks lists the chains wallet external accounts live on, sorted.
func WalletNetworks() []string {
	var out []string
	for _, s := range specs {
		if s.kind == kindWallet {
			out = append(out, s.chain)
		}
	}
	slices.Sort(out)
	return out
}

// CheckWalletDestination checks a withdrawal to address on network in cur
// exactly as an external account of the network's wallet type would be
// checked (the same per-network address formats and currencies), adding
// each problem to f under the given field names. It returns the wallet
// account type (e.g. SOLANA_WALLET), empty when the network is unknown.
func CheckWalletDestination(f *apierr.Fields, network, cur, address, networkField, currencyField, addressField string) string {
	spec := walletSpec(network)
	if spec == nil {
		f.Add(networkField, apierr.Enum, "must be one of %s", strings.Join(WalletNetworks(), ", "))
		return ""
	}
	if !slices.Contains(spec.currencies, cur) {
		f.Add(currencyField, apierr.Enum, "must be a currency of %s: %s", network, strings.Join(spec.currencies, ", "))
	}
	for _, fs := range spec.fields {
		if fs.name != "address" {
			continue
		}
		if address == "" {
			f.Add(addressField, apierr.Required, "is required")
		} else if msg := fs.check(address); msg != "" {
			f.Add(addressField, fs.constraint, "%s", msg)
		}
	}
	return spec.accountType
}
