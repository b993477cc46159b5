package bulkimport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
)

// A column of the CSV file is a field of the customer create request,
// named by its JSON path (address.line1, businessInfo.legalName…). A few
// shorter names are accepted as aliases (addressLine1, city, postalCode,
// businessLegalName…). List fields take values separated by ';'. An empty
// cell means the field is not sent.
type column struct {
	name    string
	aliases []string
	scalar  func(r *customers.CreateRequest) **string
	list    func(r *customers.CreateRequest) *[]string
}

func address(r *customers.CreateRequest) *customers.Address {
	if r.Address == nil {
		r.Address = &customers.Address{}
	}
	return r.Address
}

func business(r *customers.CreateRequest) *customers.BusinessInfo {
	if r.BusinessInfo == nil {
		r.BusinessInfo = &customers.BusinessInfo{}
	}
	return r.BusinessInfo
}

// ColumnCustomerType and ColumnPlatformCustomerID name the two columns the
// importer itself reads.
const (
	ColumnCustomerType       = "customerType"
	ColumnPlatformCustomerID = "platformCustomerId"
)

var columns = []column{
	{name: ColumnCustomerType, scalar: func(r *customers.CreateRequest) **string { return &r.CustomerType }},
	{name: ColumnPlatformCustomerID, scalar: func(r *customers.CreateRequest) **string { return &r.PlatformCustomerID }},
	{name: "registrationNumber", scalar: func(r *customers.CreateRequest) **string { return &r.RegistrationNumber }},
	{name: "fullName", scalar: func(r *customers.CreateRequest) **string { return &r.FullName }},
	{name: "birthDate", scalar: func(r *customers.CreateRequest) **string { return &r.BirthDate }},
	{name: "nationality", scalar: func(r *customers.CreateRequest) **string { return &r.Nationality }},
	{name: "idType", scalar: func(r *customers.CreateRequest) **string { return &r.IDType }},
	{name: "identifier", scalar: func(r *customers.CreateRequest) **string { return &r.Identifier }},
	{name: "countryOfIssuance", scalar: func(r *customers.CreateRequest) **string { return &r.CountryOfIssuance }},
	{name: "email", scalar: func(r *customers.CreateRequest) **string { return &r.Email }},
	{name: "phoneNumber", scalar: func(r *customers.CreateRequest) **string { return &r.PhoneNumber }},
	{name: "region", scalar: func(r *customers.CreateRequest) **string { return &r.Region }},
	{name: "currencies", list: func(r *customers.CreateRequest) *[]string { return &r.Currencies }},
	{name: "address.line1", aliases: []string{"addressLine1"}, scalar: func(r *customers.CreateRequest) **string { return &address(r).Line1 }},
	{name: "address.line2", aliases: []string{"addressLine2"}, scalar: func(r *customers.CreateRequest) **string { return &address(r).Line2 }},
	{name: "address.city", aliases: []string{"city"}, scalar: func(r *customers.CreateRequest) **string { return &address(r).City }},
	{name: "address.state", aliases: []string{"state"}, scalar: func(r *customers.CreateRequest) **string { return &address(r).State }},
	{name: "address.postalCode", aliases: []string{"postalCode"}, scalar: func(r *customers.CreateRequest) **string { return &address(r).PostalCode }},
	{name: "address.country", aliases: []string{"country"}, scalar: func(r *customers.CreateRequest) **string { return &address(r).Country }},
	{name: "businessInfo.legalName", aliases: []string{"businessLegalName"}, scalar: func(r *customers.CreateRequest) **string { return &business(r).LegalName }},
	{name: "businessInfo.doingBusinessAs", scalar: func(r *customers.CreateRequest) **string { return &business(r).DoingBusinessAs }},
	{name: "businessInfo.country", scalar: func(r *customers.CreateRequest) **string { return &business(r).Country }},
	{name: "businessInfo.registrationNumber", aliases: []string{"businessRegistrationNumber"}, scalar: func(r *customers.CreateRequest) **string { return &business(r).RegistrationNumber }},
	{name: "businessInfo.incorporatedOn", scalar: func(r *customers.CreateRequest) **string { return &business(r).IncorporatedOn }},
	{name: "businessInfo.entityType", scalar: func(r *customers.CreateRequest) **string { return &business(r).EntityType }},
	{name: "businessInfo.taxId", aliases: []string{"businessTaxId"}, scalar: func(r *customers.CreateRequest) **string { return &business(r).TaxID }},
	{name: "businessInfo.businessType", scalar: func(r *customers.CreateRequest) **string { return &business(r).BusinessType }},
	{name: "businessInfo.naicsCode", scalar: func(r *customers.CreateRequest) **string { return &business(r).NaicsCode }},
	{name: "businessInfo.countriesOfOperation", list: func(r *customers.CreateRequest) *[]string { return &business(r).CountriesOfOperation }},
	{name: "businessInfo.purposeOfAccount", scalar: func(r *customers.CreateRequest) **string { return &business(r).PurposeOfAccount }},
	{name: "purposeOfAccount", scalar: func(r *customers.CreateRequest) **string { return &r.PurposeOfAccount }},
	{name: "expectedMonthlyTransactionCount", scalar: func(r *customers.CreateRequest) **string { return &r.ExpectedMonthlyTransactionCount }},
	{name: "expectedMonthlyTransactionVolume", scalar: func(r *customers.CreateRequest) **string { return &r.ExpectedMonthlyTransactionVolume }},
	{name: "annualIncomeRange", scalar: func(r *customers.CreateRequest) **string { return &r.AnnualIncomeRange }},
	{name: "netWorthRange", scalar: func(r *customers.CreateRequest) **string { return &r.NetWorthRange }},
	{name: "pepStatus", scalar: func(r *customers.CreateRequest) **string { return &r.PepStatus }},
	{name: "sourceOfFundsCategories", list: func(r *customers.CreateRequest) *[]string { return &r.SourceOfFundsCategories }},
	{name: "sourceOfWealthCategories", list: func(r *customers.CreateRequest) *[]string { return &r.SourceOfWealthCategories }},
}

// byName maps every accepted header name to its column.
var byName = func() map[string]*column {
	m := map[string]*column{}
	for i := range columns {
		c := &columns[i]
		m[c.name] = c
		for _, a := range c.aliases {
			m[a] = c
		}
	}
	return m
}()

// ColumnNames lists the canonical column names, in documentation order.
func ColumnNames() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.name
	}
	return out
}

// RequiredColumns must be in every file's header row.
var RequiredColumns = []string{ColumnCustomerType}

// Header is a validated header row.
type Header struct {
	cols    []*column
	written map[string]string // canonical name → the name the file uses
}

// HeaderError lists what is wrong with a header row.
type HeaderError struct {
	Missing, Unknown, Duplicate []string
	Empty                       bool
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("bulkimport: header: missing %v, unknown %v, duplicate %v", e.Missing, e.Unknown, e.Duplicate)
}

// APIError is the 400 INVALID_INPUT a header error answers, naming every
// missing, unknown and repeated column (in details.missingColumns,
// details.unknownColumns, details.duplicateColumns, and one details.errors
// entry each on field `file`).
func (e *HeaderError) APIError() error {
	var f apierr.Fields
	if e.Empty {
		f.Add("file", apierr.MinLength, "is empty; the first row must name the columns")
	}
	for _, m := range e.Missing {
		f.Add("file", apierr.Required, "has no %q column; the header row must name it", m)
	}
	for _, u := range e.Unknown {
		f.Add("file", apierr.AdditionalProperties, "has an unknown column %q; accepted columns: %s", u, strings.Join(ColumnNames(), ", "))
	}
	for _, d := range e.Duplicate {
		f.Add("file", apierr.UniqueItems, "names column %q more than once (aliases included)", d)
	}
	ae, _ := apierr.From(f.Err())
	return ae.WithDetails(map[string]any{"errors": ae.Details["errors"], "missingColumns": nonNil(e.Missing),
		"unknownColumns": nonNil(e.Unknown), "duplicateColumns": nonNil(e.Duplicate)})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ParseHeader checks a header row: every name known (canonical or alias),
// none twice, the required ones present. A UTF-8 byte-order mark before
// the first name and spaces around names are ignored.
func ParseHeader(rec []string) (Header, error) {
	h := Header{written: map[string]string{}}
	he := &HeaderError{}
	if len(rec) == 0 || (len(rec) == 1 && strings.TrimSpace(strings.TrimPrefix(rec[0], "\ufeff")) == "") {
		he.Empty = true
		return Header{}, he
	}
	for i, raw := range rec {
		name := strings.TrimSpace(raw)
		if i == 0 {
			name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		}
		c := byName[name]
		switch {
		case c == nil:
			he.Unknown = append(he.Unknown, name)
		case h.written[c.name] != "":
			he.Duplicate = append(he.Duplicate, name)
		default:
			h.written[c.name] = name
		}
		h.cols = append(h.cols, c)
	}
	for _, r := range RequiredColumns {
		if h.written[r] == "" {
			he.Missing = append(he.Missing, r)
		}
	}
	if len(he.Missing)+len(he.Unknown)+len(he.Duplicate) > 0 {
		return Header{}, he
	}
	return h, nil
}

// Len is the number of columns.
func (h Header) Len() int { return len(h.cols) }

// Written returns the name the file uses for a field path, or the path
// itself when the file has no such column.
func (h Header) Written(field string) string {
	if w := h.written[field]; w != "" {
		return w
	}
	return field
}

// cellError is a problem with one cell before the request is built.
type cellError struct {
	field, constraint, message string
}

// Request builds the create request of one data row. A row without a
// platformCustomerId gets one derived from its content, so importing the
// same row again finds the customer it made.
func (h Header) Request(rec []string) (customers.CreateRequest, []cellError) {
	var r customers.CreateRequest
	var errs []cellError
	for i, c := range h.cols {
		v := strings.TrimSpace(rec[i])
		if v == "" {
			continue
		}
		if !utf8.ValidString(v) {
			errs = append(errs, cellError{field: c.name, constraint: apierr.Format, message: "is not valid UTF-8 text"})
			continue
		}
		if c.list != nil {
			var items []string
			for _, it := range strings.Split(v, ";") {
				if it = strings.TrimSpace(it); it != "" {
					items = append(items, it)
				}
			}
			*c.list(&r) = items
			continue
		}
		*c.scalar(&r) = &v
	}
	if r.PlatformCustomerID == nil {
		id := derivedID(h, rec)
		r.PlatformCustomerID = &id
	}
	return r, errs
}

// derivedID is "bulk-" and 24 hex digits of a SHA-256 over the row's
// non-empty cells, by canonical column name: the same content gives the same
// id whatever the column order.
func derivedID(h Header, rec []string) string {
	pairs := make([]string, 0, len(h.cols))
	for i, c := range h.cols {
		if v := strings.TrimSpace(rec[i]); v != "" {
			pairs = append(pairs, c.name+"="+v)
		}
	}
	sort.Strings(pairs)
	sum := sha256.Sum256([]byte(strings.Join(pairs, "\n")))
	return "bulk-" + hex.EncodeToString(sum[:12])
}

// Matches reports whether an existing customer already holds every value a
// row sets: the row was imported before (a re-run of the file, a job
// resumed after a crash, or the same row twice in one file).
func (h Header) Matches(row customers.CreateRequest, c customers.Customer) bool {
	existing := customers.CreateRequest{CustomerType: &c.CustomerType, PlatformCustomerID: &c.PlatformCustomerID,
		RegistrationNumber: c.RegistrationNumber, Profile: c.Profile}
	for _, col := range h.cols {
		if col.list != nil {
			want := *col.list(copyOf(row))
			if want != nil && strings.Join(want, ";") != strings.Join(*col.list(copyOf(existing)), ";") {
				return false
			}
			continue
		}
		want := *col.scalar(copyOf(row))
		if want == nil {
			continue
		}
		got := *col.scalar(copyOf(existing))
		if got == nil || *got != *want {
			return false
		}
	}
	return true
}

// copyOf returns a shallow copy whose nested structs are copied too, so the
// accessors may allocate in it without touching the original.
func copyOf(r customers.CreateRequest) *customers.CreateRequest {
	c := r
	if r.Address != nil {
		a := *r.Address
		c.Address = &a
	}
	if r.BusinessInfo != nil {
		b := *r.BusinessInfo
		c.BusinessInfo = &b
	}
	return &c
}
