package webhooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Where deliveries may go (docs/architecture-webhooks.md, "Where deliveries
// may go"). A production endpoint must be https, a sandbox one http or https.
// Which addresses an endpoint may reach is the installation's Addresses
// setting: on an installation serving several platforms, only public ones
// (SSRF: a platform could otherwise make paymentsd call its own admin
// ports, its database, or a cloud metadata service, and read the answer in
// the events API); on a developer's laptop, any, so that a receiver on
// 127.0.0.1 works.

// ErrUnsafeEndpoint is wrapped by every refusal of an endpoint.
var ErrUnsafeEndpoint = platformconfig.ErrEndpointRefused

// Addresses is the installation's setting for the addresses webhook
// endpoints may reach. The zero value is AddressesAuto.
type Addresses uint8

const (
	// AddressesAuto allows any address while the installation is a laptop
	// install, SQLite serving one platform, and only public ones otherwise:
	// as soon as a second platform exists, or on PostgreSQL.
	AddressesAuto Addresses = iota + 1
	// AddressesPublic allows public unicast addresses only.
	AddressesPublic
	// AddressesAny allows any address: receivers on this host or its
	// private network. For installations whose every platform is trusted.
	AddressesAny
)

// ParseAddresses reads the setting: auto, false (public only) or true (any).
func ParseAddresses(s string) (Addresses, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return AddressesAuto, nil
	case "false", "0", "public":
		return AddressesPublic, nil
	case "true", "1", "any":
		return AddressesAny, nil
	}
	return 0, fmt.Errorf("%q: want auto, true or false", s)
}

func (a Addresses) String() string {
	switch a {
	case AddressesPublic:
		return "false"
	case AddressesAny:
		return "true"
	}
	return "auto"
}

// laptopTTL is how long the auto setting trusts its count of platforms: a
// platform created by another process is seen within this time.
const laptopTTL = 2 * time.Second

// Guard decides, under the installation's setting, which policy applies to
// an endpoint now. It is shared by the configuration check (PATCH /config)
// and the senders.
type Guard struct {
	db      *store.DB
	setting Addresses
	lookup  func(ctx context.Context, network, host string) ([]netip.Addr, error)

	mu        sync.Mutex
	checked   time.Time
	platforms int
}

// NewGuard makes the guard of one setting (zero: auto).
func NewGuard(db *store.DB, setting Addresses) *Guard {
	if setting == 0 {
		setting = AddressesAuto
	}
	return &Guard{db: db, setting: setting, lookup: net.DefaultResolver.LookupNetIP}
}

// Setting is the guard's setting.
func (g *Guard) Setting() Addresses { return g.setting }

// policy is the rule for an endpoint of env, now.
func (g *Guard) policy(ctx context.Context, env string) (policy, error) {
	p := policy{httpsOnly: env == store.EnvProduction, lookupNetIPs: g.lookup}
	switch g.setting {
	case AddressesAny:
		return p, nil
	case AddressesPublic:
		p.publicOnly, p.why = true, " (PAYMENTS_WEBHOOK_ALLOW_PRIVATE=false)"
		return p, nil
	}
	if g.db.Engine() != store.SQLite {
		p.publicOnly, p.why = true, " (an installation on PostgreSQL may serve several platforms; PAYMENTS_WEBHOOK_ALLOW_PRIVATE=true allows private addresses)"
		return p, nil
	}
	n, err := g.platformCount(ctx)
	if err != nil {
		return p, err
	}
	if n > 1 {
		p.publicOnly, p.why = true, fmt.Sprintf(" (this installation serves %d platforms; PAYMENTS_WEBHOOK_ALLOW_PRIVATE=true allows private addresses)", n)
	}
	return p, nil
}

func (g *Guard) platformCount(ctx context.Context) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if time.Since(g.checked) < laptopTTL {
		return g.platforms, nil
	}
	n, err := g.db.Read().CountPlatforms(ctx)
	if err != nil {
		return 0, err
	}
	g.checked, g.platforms = time.Now(), n
	return n, nil
}

// CheckEndpoint refuses an endpoint that the tenant's environment may not
// use now: its scheme, a literal address that is not allowed, or a host
// name that resolves to one. A name that does not resolve (yet) passes:
// deliveries check the address they dial in any case. The error wraps
// ErrUnsafeEndpoint when the endpoint is refused.
func (g *Guard) CheckEndpoint(ctx context.Context, env, raw string) error {
	p, err := g.policy(ctx, env)
	if err != nil {
		return err
	}
	p.lenientDNS = true
	_, err = p.checkURL(ctx, raw)
	return err
}

// policy is the address rule for one delivery.
type policy struct {
	httpsOnly  bool
	publicOnly bool
	why        string // appended to refusals: which setting refused
	lenientDNS bool   // a name that does not resolve passes checkURL
	// allowed judges an address the dialer is about to connect to (tests
	// replace it); nil: isPublic.
	allowed      func(netip.AddrPort) bool
	lookupNetIPs func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

func (p policy) permits(ap netip.AddrPort) bool {
	if !p.publicOnly {
		return true
	}
	if p.allowed != nil {
		return p.allowed(ap)
	}
	return isPublic(ap.Addr())
}

// checkURL refuses an endpoint before anything is sent: the scheme, and for
// public-only policies every address the host resolves to now. The dialer
// checks again the address it actually connects to, because DNS may answer
// differently a moment later (rebinding).
func (p policy) checkURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("%w: not an absolute URL", ErrUnsafeEndpoint)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && !p.httpsOnly:
	default:
		return nil, fmt.Errorf("%w: production endpoints must use https", ErrUnsafeEndpoint)
	}
	if !p.publicOnly {
		return u, nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if !p.permits(netip.AddrPortFrom(ip, port(u))) {
			return nil, fmt.Errorf("%w: %s is not a public address%s", ErrUnsafeEndpoint, ip, p.why)
		}
		return u, nil
	}
	ips, err := p.lookupNetIPs(ctx, "ip", host)
	if err != nil {
		if p.lenientDNS {
			return u, nil
		}
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, ip := range ips {
		if !p.permits(netip.AddrPortFrom(ip, port(u))) {
			return nil, fmt.Errorf("%w: %s resolves to %s, which is not a public address%s", ErrUnsafeEndpoint, host, ip, p.why)
		}
	}
	return u, nil
}

// port is the port u connects to.
func port(u *url.URL) uint16 {
	if n, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(n)
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// control runs after DNS resolution, on the very address being dialed: for
// the endpoint, and for anything else the client would connect to.
func (p policy) control(network, address string, _ syscall.RawConn) error {
	if !p.publicOnly {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q", ErrUnsafeEndpoint, address)
	}
	if !p.permits(ap) {
		return fmt.Errorf("%w: %s is not a public address%s", ErrUnsafeEndpoint, ap.Addr(), p.why)
	}
	return nil
}

// nonPublic lists the ranges that are not the public internet: this host
// and unspecified addresses, private networks, link-local (cloud metadata
// lives at 169.254.169.254 and fd00:ec2::254), carrier-grade NAT,
// benchmarking, documentation, multicast, IPv4-compatible IPv6 and reserved
// space.
var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "fc00::/7", "fe80::/10",
		"fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// Prefixes whose addresses embed an IPv4 address, which is what must be
// judged: NAT64 (the last 32 bits) and 6to4 (bits 16 to 47).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// isPublic reports whether ip is a public unicast address.
func isPublic(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if b := ip.As16(); nat64.Contains(ip) {
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	} else if sixToFour.Contains(ip) {
		ip = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	if !ip.IsValid() || ip.Zone() != "" {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// newClient makes the HTTP client of one policy. It never follows redirects
// (a 3xx is a failed attempt, and a redirect could point anywhere), never
// uses a proxy (the dialer's check would then see the proxy, not the
// receiver), and bounds every exchange by timeout. Each policy has its own
// client, so a connection a permissive policy opened is never reused under
// a strict one.
// idlePerHost is how many connections to one receiver stay open between
// attempts: as many as one tenant's attempts at once (Options.PerTenant), so
// a busy receiver's connections are reused, not redialled.
func newClient(p policy, timeout time.Duration, rootCAs *x509.CertPool, idlePerHost int) *http.Client {
	dialer := &net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second, Control: p.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: rootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ResponseHeaderTimeout: timeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   idlePerHost,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
