package paymentdocs

import (
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Document types (R-PDOC-10): the accepted types of the requirement table.
const (
	PurchaseOrder            = "PURCHASE_ORDER"
	LogisticsBill            = "LOGISTICS_BILL"
	CustomsDeclaration       = "CUSTOMS_DECLARATION"
	Invoice                  = "INVOICE"
	Contract                 = "CONTRACT"
	DeliverySlip             = "DELIVERY_SLIP"
	BillOfLading             = "BILL_OF_LADING"
	FlightTicket             = "FLIGHT_TICKET"
	TravelDocument           = "TRAVEL_DOCUMENT"
	HotelBookingConfirmation = "HOTEL_BOOKING_CONFIRMATION"
)

// DocumentTypes lists every documentType an upload may carry, in the order
// of R-PDOC-10.
func DocumentTypes() []string {
	return []string{PurchaseOrder, LogisticsBill, CustomsDeclaration, Invoice, Contract, DeliverySlip,
		BillOfLading, FlightTicket, TravelDocument, HotelBookingConfirmation}
}

// CodeDocumentsRequired answers a CNY business payout whose documents do not
// cover its purpose's requirements; details.missingRequirements lists the
// requirement ids (R-PDOC-24, R-ERR-04).
const CodeDocumentsRequired = "DOCUMENTS_REQUIRED"

// Requirement is one file a purpose needs: any one document whose type is
// in Accepts satisfies it (R-PDOC-23). ID is the opaque value reported in
// details.missingRequirements.
type Requirement struct {
	ID      string
	Accepts []string
}

// purposeGroup is one row group of the table: purposes that share a list of
// requirements.
type purposeGroup struct {
	purposes     []string
	requirements []Requirement
}

// cnyBusinessPayouts is Part B's table "Payment documents" for a CNY bank
// transfer to an external account with beneficiaryType BUSINESS, row for
// row (R-PDOC-15..22): purposes → requirement ids → accepted types. A
// purpose that is not here is refused for that payout.
var cnyBusinessPayouts = []purposeGroup{
	{[]string{"EXPORTED_GOODS_PREPAYMENT"}, []Requirement{
		{"PURCHASE_ORDER", []string{PurchaseOrder}},
	}},
	{[]string{"EXPORTED_GOODS_POSTPAYMENT"}, []Requirement{
		{"LOGISTICS_BILL", []string{LogisticsBill}},
		{"CUSTOMS_DECLARATION", []string{CustomsDeclaration}},
		{"COMMERCIAL_AGREEMENT", []string{PurchaseOrder, Invoice, Contract}},
	}},
	{[]string{"COMMISSION_ON_GOODS", "COMMISSION_ON_SERVICES", "ACCOUNTING_SERVICES", "EXHIBITION_SERVICES"}, []Requirement{
		{"CONTRACT", []string{Contract}},
		{"INVOICE", []string{Invoice}},
		{"SUPPORTING_PROOF", []string{PurchaseOrder, DeliverySlip}},
	}},
	{[]string{"OFFICE_EXPENSES"}, []Requirement{
		{"CONTRACT", []string{Contract}},
		{"INVOICE", []string{Invoice}},
	}},
	{[]string{"DELIVERY_FEES"}, []Requirement{
		{"BILL_OF_LADING", []string{BillOfLading}},
		{"CONTRACT_OR_INVOICE", []string{Contract, Invoice}},
	}},
	{[]string{"TRAVEL"}, []Requirement{
		{"FLIGHT_TICKET", []string{FlightTicket}},
		{"TRAVEL_DOCUMENT", []string{TravelDocument}},
		{"HOTEL_BOOKING_CONFIRMATION", []string{HotelBookingConfirmation}},
	}},
	{[]string{"HOTEL_ACCOMMODATION"}, []Requirement{
		{"HOTEL_BOOKING_CONFIRMATION", []string{HotelBookingConfirmation}},
	}},
}

// AllowedPurposes lists the purposeOfPayment values a CNY business payout
// accepts, in table order (R-PDOC-15).
func AllowedPurposes() []string {
	var out []string
	for _, g := range cnyBusinessPayouts {
		out = append(out, g.purposes...)
	}
	return out
}

// Requirements returns the files a purpose needs, in table order, or false
// for a purpose outside the table. The result is a copy.
func Requirements(purpose string) ([]Requirement, bool) {
	for _, g := range cnyBusinessPayouts {
		if slices.Contains(g.purposes, purpose) {
			out := make([]Requirement, len(g.requirements))
			for i, r := range g.requirements {
				out[i] = Requirement{ID: r.ID, Accepts: slices.Clone(r.Accepts)}
			}
			return out, true
		}
	}
	return nil, false
}

// Check decides whether docs cover the requirements of purpose on a CNY
// business payout. Each requirement needs one document of an accepted
// type, and each document satisfies at most one requirement (R-PDOC-23):
// the documents are matched to the requirements by a maximum bipartite
// matching, so a document that could serve two requirements goes where it
// is needed. missing lists the requirement ids left unmatched, in table
// order; err is then 400 DOCUMENTS_REQUIRED with details.missingRequirements
// (R-PDOC-24). A purpose outside the table is 400 INVALID_INPUT on
// purposeOfPayment (R-PDOC-15). Documents beyond the requirements are
// accepted and left unused.
func Check(purpose string, docs []Document) (missing []string, err error) {
	reqs, ok := Requirements(purpose)
	if !ok {
		return nil, purposeError(purpose)
	}
	types := make([]string, len(docs))
	for i, d := range docs {
		types[i] = d.DocumentType
	}
	missing = unmatched(reqs, types)
	if len(missing) == 0 {
		return nil, nil
	}
	return missing, documentsRequired(purpose, missing)
}

func purposeError(purpose string) error {
	var f apierr.Fields
	if purpose == "" {
		f.Add("purposeOfPayment", apierr.Required,
			"is required on a CNY payout to a business bank account; one of %s", strings.Join(AllowedPurposes(), ", "))
	} else {
		f.Add("purposeOfPayment", apierr.Enum,
			"must be one of %s on a CNY payout to a business bank account", strings.Join(AllowedPurposes(), ", "))
	}
	return f.Err()
}

func documentsRequired(purpose string, missing []string) error {
	return apierr.Newf(CodeDocumentsRequired,
		"A CNY payout to a business for %s needs one document for each of: %s; upload them with POST /payment-documents and list them in documentIds",
		purpose, strings.Join(missing, ", ")).
		WithDetails(map[string]any{"missingRequirements": missing})
}

// unmatched returns the ids of the requirements a maximum matching of
// documents (by type) to requirements leaves without a document. Kuhn's
// augmenting paths, requirements taken in order: a requirement once matched
// stays matched, so with a tie the earlier requirements are the ones
// covered and the result is deterministic.
func unmatched(reqs []Requirement, types []string) []string {
	docOf := make([]int, len(reqs))  // requirement → document index, or -1
	reqOf := make([]int, len(types)) // document → requirement index, or -1
	for i := range docOf {
		docOf[i] = -1
	}
	for j := range reqOf {
		reqOf[j] = -1
	}
	var augment func(r int, seen []bool) bool
	augment = func(r int, seen []bool) bool {
		for j, typ := range types {
			if seen[j] || !slices.Contains(reqs[r].Accepts, typ) {
				continue
			}
			seen[j] = true
			if reqOf[j] < 0 || augment(reqOf[j], seen) {
				reqOf[j], docOf[r] = r, j
				return true
			}
		}
		return false
	}
	var missing []string
	for r := range reqs {
		if !augment(r, make([]bool, len(types))) {
			missing = append(missing, reqs[r].ID)
		}
	}
	return missing
}
