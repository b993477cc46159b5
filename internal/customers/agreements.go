package customers

import (
	"context"
	"errors"
	"slices"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// AgreementEndUserTerms is the agreement type of the end-user terms. The
// value is the one the spec fixes for the deprecated endUserTermsConsent
// (R-CUST-13: "equivalent to one LIGHTSPARK_END_USER_TERMS-type entry"). It
// carries a brand word, and is kept exactly as issued for wire compatibility,
// as error codes with brand words are (R-ERR-25); Go code only ever uses this
// constant, so renaming it is a one-line change.
const AgreementEndUserTerms = "LIGHTSPARK_END_USER_TERMS"

// Ways a customer can have accepted an agreement.
var AcceptanceMethods = []string{"CHECKBOX", "CLICK_TO_ACCEPT"}

// Agreement is one entry of GET /customers/agreements (R-CUST-15).
type Agreement struct {
	Type    string `json:"type"`
	Version string `json:"version"`
	URL     string `json:"url"`
}

// EndUserTerms is the body of the deprecated GET /customers/end-user-terms
// (R-CUST-17).
type EndUserTerms struct {
	Version string `json:"version"`
	URL     string `json:"url"`
}

// Catalog lists the agreements customers accept: for each type its current
// version and URL, and the earlier versions a consent may still name.
type Catalog struct {
	Current []Agreement
	// Earlier maps a type to its superseded versions, still accepted as
	// termsVersion (a customer who accepted them has accepted terms).
	Earlier map[string][]string
}

// DefaultCatalog is the catalog of a fresh installation. The operator
// publishes the terms; the URL below is where the project documents them.
func DefaultCatalog() Catalog {
	return Catalog{Current: []Agreement{{
		Type:    AgreementEndUserTerms,
		Version: "2025-10-13",
		URL:     "https://paymentsd.dev/legal/end-user-terms/2025-10-13",
	}}}
}

// Types lists the agreement types.
func (c Catalog) Types() []string {
	out := make([]string, len(c.Current))
	for i, a := range c.Current {
		out[i] = a.Type
	}
	return out
}

// Known reports whether version is a current or earlier version of typ.
func (c Catalog) Known(typ, version string) bool {
	for _, a := range c.Current {
		if a.Type == typ && a.Version == version {
			return true
		}
	}
	return slices.Contains(c.Earlier[typ], version)
}

// ConsentInput is one agreementConsents entry as sent.
type ConsentInput struct {
	Type             *string `json:"type"`
	AcceptedAt       *string `json:"acceptedAt"`
	IPAddress        *string `json:"ipAddress"`
	TermsVersion     *string `json:"termsVersion"`
	AcceptanceMethod *string `json:"acceptanceMethod"`
}

// EndUserTermsConsentInput is the deprecated endUserTermsConsent as sent.
type EndUserTermsConsentInput struct {
	AcceptedAt       *string `json:"acceptedAt"`
	IPAddress        *string `json:"ipAddress"`
	TermsVersion     *string `json:"termsVersion"`
	AcceptanceMethod *string `json:"acceptanceMethod"`
}

func (e EndUserTermsConsentInput) asConsent() ConsentInput {
	t := AgreementEndUserTerms
	return ConsentInput{Type: &t, AcceptedAt: e.AcceptedAt, IPAddress: e.IPAddress, TermsVersion: e.TermsVersion,
		AcceptanceMethod: e.AcceptanceMethod}
}

// consents returns the consents a request records: agreementConsents, or the
// deprecated endUserTermsConsent as one end-user-terms entry.
func consents(list []ConsentInput, eut *EndUserTermsConsentInput) []ConsentInput {
	if eut != nil {
		return []ConsentInput{eut.asConsent()}
	}
	return list
}

// checkVersions refuses a consent naming a terms version the catalog does not
// know with END_USER_TERMS_VERSION_NOT_FOUND (R-CUST-16). It runs after field
// validation, so every entry has a known type and a version.
func (c Catalog) checkVersions(list []ConsentInput) error {
	for _, in := range list {
		if in.Type == nil || in.TermsVersion == nil {
			continue
		}
		if !c.Known(*in.Type, *in.TermsVersion) {
			return apierr.Newf("END_USER_TERMS_VERSION_NOT_FOUND",
				"termsVersion %q is not a version of %s; GET /customers/agreements lists the current version",
				*in.TermsVersion, *in.Type).WithDetails(map[string]any{"type": *in.Type, "termsVersion": *in.TermsVersion})
		}
	}
	return nil
}

// Agreements lists the agreements and their current versions (R-CUST-15).
func (s *Service) Agreements() []Agreement {
	return append([]Agreement(nil), s.Catalog.Current...)
}

// EndUserTerms returns the current end-user terms (R-CUST-17).
func (s *Service) EndUserTerms() EndUserTerms {
	for _, a := range s.Catalog.Current {
		if a.Type == AgreementEndUserTerms {
			return EndUserTerms{Version: a.Version, URL: a.URL}
		}
	}
	return EndUserTerms{}
}

// TermsAccepted reports whether a live customer has accepted the end-user
// terms (any version the catalog knows). Money movement refuses customers
// without them (END_USER_TERMS_NOT_ACCEPTED).
func (s *Service) TermsAccepted(ctx context.Context, t store.Tenant, customerID string) (bool, error) {
	_, ok, err := s.CustomerTerms(ctx, t, customerID)
	return ok, err
}

// CustomerTerms is TermsAccepted with the customer's row, read in the same
// query: a quote also needs it to decide on strong customer authentication.
func (s *Service) CustomerTerms(ctx context.Context, t store.Tenant, customerID string) (store.Customer, bool, error) {
	row, list, err := s.DB.Read().LiveCustomerWithAgreements(ctx, t, customerID)
	if errors.Is(err, store.ErrNotFound) {
		return store.Customer{}, false, customerNotFound(customerID)
	}
	if err != nil {
		return store.Customer{}, false, err
	}
	return row, s.AcceptedTerms(list), nil
}

// AcceptedTerms reports whether agreements a customer accepted hold the
// end-user terms (any version the catalog knows).
func (s *Service) AcceptedTerms(list []store.AgreedTerms) bool {
	for _, a := range list {
		if a.Type == AgreementEndUserTerms && s.Catalog.Known(a.Type, a.TermsVersion) {
			return true
		}
	}
	return false
}
