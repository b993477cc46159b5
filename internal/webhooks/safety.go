package webhooks

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// Where deliveries may go. A production endpoint must be https and must not
// reach this host or the private network it sits in (SSRF: a platform could
// otherwise make paymentsd call its own admin ports or a cloud metadata
// service). Self-hosters whose receivers live on a private network turn the
// address rule off with Options.AllowPrivate. Sandbox endpoints may be any
// http or https address, so that a laptop receiver works.

// ErrUnsafeEndpoint is wrapped by every refusal of an endpoint.
var ErrUnsafeEndpoint = errors.New("webhook endpoint refused")

// policy is the address rule for one environment.
type policy struct {
	httpsOnly    bool
	publicOnly   bool
	lookupNetIPs func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

func productionPolicy(allowPrivate bool) policy {
	return policy{httpsOnly: true, publicOnly: !allowPrivate, lookupNetIPs: net.DefaultResolver.LookupNetIP}
}

var sandboxPolicy = policy{}

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
		if !isPublic(ip) {
			return nil, fmt.Errorf("%w: %s is not a public address", ErrUnsafeEndpoint, ip)
		}
		return u, nil
	}
	ips, err := p.lookupNetIPs(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	for _, ip := range ips {
		if !isPublic(ip) {
			return nil, fmt.Errorf("%w: %s resolves to %s, which is not a public address", ErrUnsafeEndpoint, host, ip)
		}
	}
	return u, nil
}

// control runs after DNS resolution, on the very address being dialed.
func (p policy) control(network, address string, _ syscall.RawConn) error {
	if !p.publicOnly {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot check address %q", ErrUnsafeEndpoint, address)
	}
	if !isPublic(ap.Addr()) {
		return fmt.Errorf("%w: %s is not a public address", ErrUnsafeEndpoint, ap.Addr())
	}
	return nil
}

// nonPublic lists the ranges that are not the public internet: this host,
// private networks, link-local (cloud metadata lives at 169.254.169.254),
// carrier-grade NAT, benchmarking, documentation, multicast and reserved
// space.
var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/128", "::1/128", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "fc00::/7", "fe80::/10",
		"fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// nat64 is the well-known NAT64 prefix: its addresses embed an IPv4 address
// in the last 32 bits, which is what must be judged.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// isPublic reports whether ip is a public unicast address.
func isPublic(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
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
// receiver), and bounds every exchange by timeout.
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
