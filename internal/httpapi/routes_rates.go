package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/pricing"
	"github.com/paymentsd/paymentsd/internal/rates"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).rateRoutes) }

// rateRoutes: exchange rates (R-RATE-01..07).
func (s *Server) rateRoutes() {
	s.handle(route{pattern: "GET /exchange-rates", need: auth.NeedView, query: []string{"sourceCurrency", "destinationCurrency", "sendingAmount"}, repeatable: []string{"destinationCurrency"}, h: s.exchangeRates})
}

// DefaultSendingAmount is the sendingAmount of GET /exchange-rates when the
// query has none (R-RATE-02).
const DefaultSendingAmount = 10000

// ProductionRateSource builds the FX rate source of the production
// environment. Nil (the default) means no rate partner is configured:
// production then refuses every pair that needs a rate with
// QUOTE_RATE_UNAVAILABLE rather than pretend with sandbox rates; fees and
// limits are set in USD, so only USD→USD is priced. Set it before New.
var ProductionRateSource func(now func() time.Time) rates.Source

// pricingEngines holds each server's two engines (sandbox, production), so
// the rate cache is shared by every request and capability of a server.
var pricingEngines sync.Map // *Server → *[2]*pricing.Engine

// pricingEngine returns the server's pricing engine for an environment:
// the one quotes, exchange rates and receiver lookups price through. Its rate
// cache runs on the store's clock.
func (s *Server) pricingEngine(env string) *pricing.Engine {
	v, ok := pricingEngines.Load(s)
	if !ok {
		sandbox := rates.NewCache(rates.NewSandbox(s.db.Now), rates.DefaultTTL, s.db.Now)
		var prodSrc rates.Source = rates.Unconfigured{Now: s.db.Now}
		if ProductionRateSource != nil {
			prodSrc = ProductionRateSource(s.db.Now)
		}
		production := rates.NewCache(prodSrc, rates.DefaultTTL, s.db.Now)
		pair := &[2]*pricing.Engine{pricing.NewEngine(sandbox, s.db.Now), pricing.NewEngine(production, s.db.Now)}
		v, _ = pricingEngines.LoadOrStore(s, pair)
	}
	pair := v.(*[2]*pricing.Engine)
	if env == store.EnvSandbox {
		return pair[0]
	}
	return pair[1]
}

// exchangeRate is one entry of GET /exchange-rates (R-RATE-04).
type exchangeRate struct {
	SourceCurrency         currency.Currency `json:"sourceCurrency"`
	SendingAmount          int64             `json:"sendingAmount"`
	MinSendingAmount       int64             `json:"minSendingAmount"`
	MaxSendingAmount       int64             `json:"maxSendingAmount"`
	DestinationCurrency    currency.Currency `json:"destinationCurrency"`
	DestinationPaymentRail string            `json:"destinationPaymentRail"`
	ReceivingAmount        int64             `json:"receivingAmount"`
	ExchangeRate           json.Number       `json:"exchangeRate"`
	Fees                   exchangeRateFees  `json:"fees"`
	UpdatedAt              time.Time         `json:"updatedAt"`
}

type exchangeRateFees struct {
	Fixed int64 `json:"fixed"`
	Total int64 `json:"total"`
}

// exchangeRates answers GET /exchange-rates: one entry per destination
// currency, priced for sendingAmount with the calling platform's fees
// (R-RATE-01..07).
func (s *Server) exchangeRates(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields

	src := ""
	switch vals := q["sourceCurrency"]; {
	case len(vals) == 0 || vals[0] == "":
		f.Add("sourceCurrency", apierr.Required, "is required, for example USD")
	case len(vals) > 1:
		f.Add("sourceCurrency", apierr.MaxItems, "must be given once")
	default:
		if _, ok := currency.Lookup(vals[0]); !ok {
			f.Add("sourceCurrency", apierr.Enum, "is not a supported currency (one of %s)", strings.Join(currency.Codes(), ", "))
		} else {
			src = vals[0]
		}
	}

	var dests []string
	for i, d := range q["destinationCurrency"] {
		if _, ok := currency.Lookup(d); !ok {
			f.Add("destinationCurrency["+strconv.Itoa(i)+"]", apierr.Enum,
				"is not a supported currency (one of %s)", strings.Join(currency.Codes(), ", "))
			continue
		}
		if !slices.Contains(dests, d) {
			dests = append(dests, d)
		}
	}

	amount := int64(DefaultSendingAmount)
	switch vals := q["sendingAmount"]; {
	case len(vals) == 0:
	case len(vals) > 1:
		f.Add("sendingAmount", apierr.MaxItems, "must be given once")
	default:
		n, err := strconv.ParseInt(vals[0], 10, 64)
		switch {
		case err != nil && isDigits(vals[0]):
			f.Add("sendingAmount", apierr.Maximum, "must be at most %d", int64(^uint64(0)>>1))
		case err != nil:
			f.Add("sendingAmount", apierr.Type, "must be an integer in the smallest unit of the source currency")
		case n < 1:
			f.Add("sendingAmount", apierr.Minimum, "must be at least 1")
		default:
			amount = n
		}
	}
	if err := f.Err(); err != nil {
		return err
	}

	p := principal(r)
	cfg, err := s.config.Get(r.Context(), p.Tenant)
	if err != nil {
		return err
	}
	explicit := len(dests) > 0
	if !explicit {
		// Every corridor out of the source: each other currency with a rate.
		for _, code := range currency.Codes() {
			if code != src {
				dests = append(dests, code)
			}
		}
	}
	eng := s.pricingEngine(p.Tenant.Env)
	out := make([]exchangeRate, 0, len(dests))
	srcCur, _ := currency.Lookup(src)
	for _, dst := range dests {
		pr, err := eng.Estimate(r.Context(), pricing.Request{
			SourceCurrency: src, DestinationCurrency: dst, Side: pricing.Sending, Amount: amount,
			FeeConfigs: cfg.FeeConfigs, Currencies: cfg.SupportedCurrencies,
		})
		if err != nil {
			if !explicit && rates.IsUnavailable(err) {
				continue
			}
			return err
		}
		dstCur, _ := currency.Lookup(dst)
		out = append(out, exchangeRate{
			SourceCurrency: srcCur, SendingAmount: amount,
			MinSendingAmount: pr.MinSendingAmount, MaxSendingAmount: pr.MaxSendingAmount,
			DestinationCurrency: dstCur, DestinationPaymentRail: pr.Rail,
			ReceivingAmount: pr.TotalReceivingAmount, ExchangeRate: pricing.Number(pr.ExchangeRate),
			Fees:      exchangeRateFees{Fixed: pr.FixedFees, Total: pr.FeesIncluded},
			UpdatedAt: pr.UpdatedAt.UTC(),
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": out})
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
