package uma

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Provider is one UMA provider of the directory (GET /uma-providers): an
// institution whose customers hold UMA addresses on domain.
type Provider struct {
	Name                string              `json:"name"`
	SupportedRegions    []string            `json:"supportedRegions"`
	Domain              string              `json:"domain"`
	SupportedCurrencies []currency.Currency `json:"supportedCurrencies"`
}

// regionOf is the country of a national currency (ISO 4217 codes start
// with the ISO 3166 country code); "" for EUR and crypto.
func regionOf(code string) string {
	c, ok := currency.Lookup(code)
	if !ok || c.Crypto || code == "EUR" || len(code) != 3 {
		return ""
	}
	return code[:2]
}

// Providers lists the UMA providers env knows, sorted by domain: every
// platform of this installation with a umaDomain (its supported currencies),
// and in sandbox the sandbox institution of POST /sandbox/uma/receive.
// country and cur filter (empty: all).
func (s *Service) Providers(ctx context.Context, env, country, cur string) ([]Provider, error) {
	ts, docs, err := s.DB.Read().UmaDomains(ctx, env)
	if err != nil {
		return nil, err
	}
	var out []Provider
	for i, t := range ts {
		p, ok, err := s.provider(ctx, t, docs[i])
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	if env == store.EnvSandbox {
		usd, _ := currency.Lookup("USD")
		out = append(out, Provider{Name: "Sandbox institution", SupportedRegions: []string{"US"}, Domain: SandboxDomain,
			SupportedCurrencies: []currency.Currency{usd}})
	}
	out = slices.DeleteFunc(out, func(p Provider) bool {
		return (country != "" && !slices.Contains(p.SupportedRegions, strings.ToUpper(country))) ||
			(cur != "" && !slices.ContainsFunc(p.SupportedCurrencies, func(c currency.Currency) bool { return c.Code == strings.ToUpper(cur) }))
	})
	slices.SortFunc(out, func(a, b Provider) int { return strings.Compare(a.Domain, b.Domain) })
	return out, nil
}

func (s *Service) provider(ctx context.Context, t store.Tenant, doc []byte) (Provider, bool, error) {
	var cfg struct {
		UmaDomain           *string `json:"umaDomain"`
		SupportedCurrencies []struct {
			CurrencyCode string `json:"currencyCode"`
		} `json:"supportedCurrencies"`
	}
	if json.Unmarshal(doc, &cfg) != nil || cfg.UmaDomain == nil || *cfg.UmaDomain == "" {
		return Provider{}, false, nil
	}
	pl, err := s.DB.Read().GetPlatform(ctx, t.PlatformID)
	if err != nil {
		return Provider{}, false, err
	}
	p := Provider{Name: pl.Name, Domain: *cfg.UmaDomain, SupportedRegions: []string{}, SupportedCurrencies: []currency.Currency{}}
	for _, c := range cfg.SupportedCurrencies {
		if cc, ok := currency.Lookup(c.CurrencyCode); ok {
			p.SupportedCurrencies = append(p.SupportedCurrencies, cc)
			if r := regionOf(c.CurrencyCode); r != "" && !slices.Contains(p.SupportedRegions, r) {
				p.SupportedRegions = append(p.SupportedRegions, r)
			}
		}
	}
	return p, true, nil
}
