package httpapi

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Query-string helpers shared by list endpoints. Each records a field error
// in f instead of failing, so one 400 lists every bad parameter.

// queryEnum reads an optional query parameter that must be one of allowed.
func queryEnum(f *apierr.Fields, q map[string][]string, name string, allowed []string) string {
	v := first(q, name)
	if v != "" && !slices.Contains(allowed, v) {
		f.Add(name, apierr.Enum, "must be one of %s", strings.Join(allowed, ", "))
		return ""
	}
	return v
}

func first(q map[string][]string, name string) string {
	if vals := q[name]; len(vals) > 0 {
		return vals[0]
	}
	return ""
}

// queryTime parses an optional RFC 3339 query parameter.
func queryTime(f *apierr.Fields, q map[string][]string, name string) *time.Time {
	v := first(q, name)
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		f.Add(name, apierr.Format, "must be an RFC 3339 date-time such as 2025-10-13T09:30:00Z")
		return nil
	}
	return &t
}

var currencyCodeRE = regexp.MustCompile(`^[A-Z]{3,5}$`)

// queryCurrency reads an optional `currency` filter.
func queryCurrency(f *apierr.Fields, q map[string][]string) string {
	c := first(q, "currency")
	if c != "" && !currencyCodeRE.MatchString(c) {
		f.Add("currency", apierr.Pattern, "must be a currency code such as USD")
	}
	return c
}

// ownerListScope serves the lists that exist under /customers/<resource> and
// /platform/<resource>: it names the cursor scope and reads the customerId
// filter, which platform lists refuse.
func ownerListScope(f *apierr.Fields, q map[string][]string, platform bool, resource string) (scope, customerID string) {
	if !platform {
		return "customer-" + resource, first(q, "customerId")
	}
	if _, ok := q["customerId"]; ok {
		f.Add("customerId", apierr.AdditionalProperties,
			"platform accounts belong to no customer; list customers' accounts under /customers/%s", resource)
	}
	return "platform-" + resource, ""
}
