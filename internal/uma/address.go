// Package uma is the Universal Money Address capability: customer addresses
// under the platform's UMA domain, the institution's signing and encryption
// keys with their certificate chains, the receiving side of the protocol
// (LNURL-pay discovery and pay requests) and the sending side (receiver
// lookups and pay-request quotes against another institution). The protocol
// messages are built, signed and verified with the UMA Go SDK.
package uma

import (
	"regexp"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// localRE is the user part of an address: lowercase letters, digits and
// . _ + - (UMA addresses are case-insensitive; we store them lowercase),
// 1 to 64 characters, starting with a letter or digit.
var localRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._+-]{0,63}$`)

// domainRE is a host name, optionally with a port (loopback installations
// such as 127.0.0.1:8081 in sandbox).
var domainRE = regexp.MustCompile(`^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?::[0-9]{1,5})?$`)

// Address is a parsed UMA address.
type Address struct {
	Local  string
	Domain string
}

// String is the address as $local@domain.
func (a Address) String() string { return "$" + a.Local + "@" + a.Domain }

// ParseAddress parses $local@domain (case-insensitive, stored lowercase);
// anything else is 400 INVALID_UMA_ADDRESS.
func ParseAddress(s string) (Address, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	rest, ok := strings.CutPrefix(s, "$")
	local, domain, ok2 := strings.Cut(rest, "@")
	if !ok || !ok2 || !localRE.MatchString(local) || len(domain) > 253 || !domainRE.MatchString(domain) {
		return Address{}, invalidAddress(s)
	}
	return Address{Local: local, Domain: domain}, nil
}

func invalidAddress(s string) error {
	return apierr.New("INVALID_UMA_ADDRESS", "Not a UMA address: "+quoteShort(s)+
		" (expected $user@domain: the user of lowercase letters, digits and . _ + -, up to 64 characters)")
}

func quoteShort(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "\"" + s + "\""
}
