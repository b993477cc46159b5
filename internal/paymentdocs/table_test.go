package paymentdocs

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// specTable is Part B's table "Payment documents", typed out again from the
// spec so that the Go table is checked against it cell for cell.
var specTable = map[string][][2]any{
	"EXPORTED_GOODS_PREPAYMENT": {{"PURCHASE_ORDER", []string{"PURCHASE_ORDER"}}},
	"EXPORTED_GOODS_POSTPAYMENT": {
		{"LOGISTICS_BILL", []string{"LOGISTICS_BILL"}},
		{"CUSTOMS_DECLARATION", []string{"CUSTOMS_DECLARATION"}},
		{"COMMERCIAL_AGREEMENT", []string{"PURCHASE_ORDER", "INVOICE", "CONTRACT"}},
	},
	"COMMISSION_ON_GOODS":    commissionRows,
	"COMMISSION_ON_SERVICES": commissionRows,
	"ACCOUNTING_SERVICES":    commissionRows,
	"EXHIBITION_SERVICES":    commissionRows,
	"OFFICE_EXPENSES": {
		{"CONTRACT", []string{"CONTRACT"}},
		{"INVOICE", []string{"INVOICE"}},
	},
	"DELIVERY_FEES": {
		{"BILL_OF_LADING", []string{"BILL_OF_LADING"}},
		{"CONTRACT_OR_INVOICE", []string{"CONTRACT", "INVOICE"}},
	},
	"TRAVEL": {
		{"FLIGHT_TICKET", []string{"FLIGHT_TICKET"}},
		{"TRAVEL_DOCUMENT", []string{"TRAVEL_DOCUMENT"}},
		{"HOTEL_BOOKING_CONFIRMATION", []string{"HOTEL_BOOKING_CONFIRMATION"}},
	},
	"HOTEL_ACCOMMODATION": {{"HOTEL_BOOKING_CONFIRMATION", []string{"HOTEL_BOOKING_CONFIRMATION"}}},
}

var commissionRows = [][2]any{
	{"CONTRACT", []string{"CONTRACT"}},
	{"INVOICE", []string{"INVOICE"}},
	{"SUPPORTING_PROOF", []string{"PURCHASE_ORDER", "DELIVERY_SLIP"}},
}

func docsOf(types ...string) []Document {
	out := make([]Document, len(types))
	for i, t := range types {
		out[i] = Document{ID: "d" + string(rune('0'+i)), DocumentType: t}
	}
	return out
}

func missingOf(t *testing.T, err error) []string {
	t.Helper()
	e, ok := apierr.From(err)
	if !ok || e.Code != CodeDocumentsRequired || e.Status != 400 {
		t.Fatalf("want 400 DOCUMENTS_REQUIRED, got %v", err)
	}
	m, ok := e.Details["missingRequirements"].([]string)
	if !ok {
		t.Fatalf("details.missingRequirements is %T, want []string", e.Details["missingRequirements"])
	}
	return m
}

// R-PDOC-15: exactly these purposes, in the spec's order.
func TestTable_AllowedPurposes_R_PDOC_15(t *testing.T) {
	want := []string{"EXPORTED_GOODS_PREPAYMENT", "EXPORTED_GOODS_POSTPAYMENT", "COMMISSION_ON_GOODS",
		"COMMISSION_ON_SERVICES", "ACCOUNTING_SERVICES", "EXHIBITION_SERVICES", "OFFICE_EXPENSES", "DELIVERY_FEES",
		"TRAVEL", "HOTEL_ACCOMMODATION"}
	if got := AllowedPurposes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("AllowedPurposes() = %v\nwant %v", got, want)
	}
	if len(specTable) != len(want) {
		t.Fatalf("the spec table in this test has %d purposes", len(specTable))
	}
}

// R-PDOC-10: the upload's document types are the table's accepted types.
func TestTable_DocumentTypes_R_PDOC_10(t *testing.T) {
	seen := map[string]bool{}
	for _, rows := range specTable {
		for _, r := range rows {
			for _, typ := range r[1].([]string) {
				seen[typ] = true
			}
		}
	}
	got := DocumentTypes()
	if len(got) != len(seen) {
		t.Fatalf("DocumentTypes() = %v, table uses %v", got, seen)
	}
	for _, typ := range got {
		if !seen[typ] {
			t.Errorf("%s is not an accepted type of the table", typ)
		}
	}
}

// R-PDOC-16, R-PDOC-17, R-PDOC-18, R-PDOC-19, R-PDOC-20, R-PDOC-21,
// R-PDOC-22: every row of the table, requirement ids and accepted
// types in order; for each purpose, a full set of documents passes (with
// every alternative), and leaving out any one requirement's document is
// DOCUMENTS_REQUIRED naming exactly that requirement (R-PDOC-24).
func TestTable_EveryRow(t *testing.T) {
	for purpose, rows := range specTable {
		t.Run(purpose, func(t *testing.T) {
			reqs, ok := Requirements(purpose)
			if !ok {
				t.Fatal("purpose not in the table")
			}
			if len(reqs) != len(rows) {
				t.Fatalf("%d requirements, spec has %d", len(reqs), len(rows))
			}
			for i, r := range rows {
				if reqs[i].ID != r[0] || !reflect.DeepEqual(reqs[i].Accepts, r[1]) {
					t.Fatalf("requirement %d = %+v, spec %v", i, reqs[i], r)
				}
			}
			// One document per requirement, trying each alternative of each.
			for i, r := range rows {
				for _, alt := range r[1].([]string) {
					var types []string
					for j, other := range rows {
						if j == i {
							types = append(types, alt)
						} else {
							types = append(types, other[1].([]string)[0])
						}
					}
					if missing, err := Check(purpose, docsOf(types...)); err != nil || missing != nil {
						t.Fatalf("%v: missing %v, %v", types, missing, err)
					}
					// Order of documentIds does not matter.
					slices.Reverse(types)
					if _, err := Check(purpose, docsOf(types...)); err != nil {
						t.Fatalf("reversed %v: %v", types, err)
					}
				}
			}
			for i := range rows {
				var types []string
				for j, other := range rows {
					if j != i {
						types = append(types, other[1].([]string)[0])
					}
				}
				missing, err := Check(purpose, docsOf(types...))
				if got := missingOf(t, err); !reflect.DeepEqual(got, []string{rows[i][0].(string)}) || !reflect.DeepEqual(missing, got) {
					t.Fatalf("without %s: missing %v / %v", rows[i][0], missing, got)
				}
			}
			// No documents at all: every requirement, in table order.
			var all []string
			for _, r := range rows {
				all = append(all, r[0].(string))
			}
			if got := missingOf(t, func() error { _, err := Check(purpose, nil); return err }()); !reflect.DeepEqual(got, all) {
				t.Fatalf("no documents: missing %v, want %v", got, all)
			}
		})
	}
}

// R-PDOC-15: purposes outside the table, including GOODS_OR_SERVICES and
// SERVICE_CHARGES, are 400 INVALID_INPUT on purposeOfPayment.
func TestCheck_PurposeOutsideTable_R_PDOC_15(t *testing.T) {
	for _, p := range []string{"GOODS_OR_SERVICES", "SERVICE_CHARGES", "", "travel", "TRAVEL "} {
		_, err := Check(p, docsOf(PurchaseOrder))
		e, ok := apierr.From(err)
		if !ok || e.Code != apierr.CodeInvalidInput {
			t.Fatalf("%q: %v", p, err)
		}
		if f := apierr.FieldList(err); len(f) != 1 || f[0].Field != "purposeOfPayment" {
			t.Fatalf("%q: %+v", p, f)
		}
		if _, ok := Requirements(p); ok {
			t.Fatalf("%q has requirements", p)
		}
	}
}

// R-PDOC-23: one file covers one requirement; the alternatives are types
// for that one file.
func TestCheck_OneFilePerRequirement_R_PDOC_23(t *testing.T) {
	cases := []struct {
		purpose string
		types   []string
		missing []string
	}{
		// COMMERCIAL_AGREEMENT satisfied by a single INVOICE.
		{"EXPORTED_GOODS_POSTPAYMENT", []string{LogisticsBill, CustomsDeclaration, Invoice}, nil},
		// A purchase order covers one requirement, not two.
		{"EXPORTED_GOODS_POSTPAYMENT", []string{PurchaseOrder}, []string{"LOGISTICS_BILL", "CUSTOMS_DECLARATION"}},
		// Two contracts still leave INVOICE uncovered.
		{"OFFICE_EXPENSES", []string{Contract, Contract}, []string{"INVOICE"}},
		// CONTRACT and INVOICE both fit CONTRACT_OR_INVOICE; BILL_OF_LADING is still missing.
		{"DELIVERY_FEES", []string{Contract, Invoice}, []string{"BILL_OF_LADING"}},
		// Shared types: INVOICE is both its own requirement and nothing else
		// here, PURCHASE_ORDER goes to SUPPORTING_PROOF.
		{"COMMISSION_ON_GOODS", []string{PurchaseOrder, Invoice, Contract}, nil},
		{"COMMISSION_ON_GOODS", []string{Invoice, Invoice, Invoice}, []string{"CONTRACT", "SUPPORTING_PROOF"}},
		// A document of a type the purpose does not use covers nothing.
		{"HOTEL_ACCOMMODATION", []string{FlightTicket}, []string{"HOTEL_BOOKING_CONFIRMATION"}},
		// Extra documents are accepted and left unused.
		{"HOTEL_ACCOMMODATION", []string{FlightTicket, HotelBookingConfirmation}, nil},
	}
	for _, c := range cases {
		missing, err := Check(c.purpose, docsOf(c.types...))
		if c.missing == nil {
			if err != nil || missing != nil {
				t.Fatalf("%s %v: %v %v", c.purpose, c.types, missing, err)
			}
			continue
		}
		if got := missingOf(t, err); !reflect.DeepEqual(got, c.missing) || !reflect.DeepEqual(missing, c.missing) {
			t.Fatalf("%s %v: missing %v, want %v", c.purpose, c.types, got, c.missing)
		}
	}
}

// R-PDOC-23: the matching is a real maximum matching, not first-fit. With
// requirements A{X,Y} and B{X}, first-fit gives X to A and leaves B empty
// although Y→A, X→B covers both.
func TestMatching_NotGreedy_R_PDOC_23(t *testing.T) {
	reqs := []Requirement{{"A", []string{"X", "Y"}}, {"B", []string{"X"}}}
	if m := unmatched(reqs, []string{"X", "Y"}); m != nil {
		t.Fatalf("missing %v", m)
	}
	// Only X: one of them stays uncovered, deterministically the later.
	if m := unmatched(reqs, []string{"X"}); !reflect.DeepEqual(m, []string{"B"}) {
		t.Fatalf("missing %v", m)
	}
	// A longer augmenting path: A{X,Y}, B{Y,Z}, C{X}: docs X, Y, Z.
	reqs = []Requirement{{"A", []string{"X", "Y"}}, {"B", []string{"Y", "Z"}}, {"C", []string{"X"}}}
	if m := unmatched(reqs, []string{"X", "Y", "Z"}); m != nil {
		t.Fatalf("missing %v", m)
	}
}

// R-PDOC-23: on random instances over the real type vocabulary, the number
// of uncovered requirements equals the minimum over every assignment
// (brute force), and the reported ids are requirements of the purpose.
func TestMatching_MatchesBruteForce_R_PDOC_23(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := DocumentTypes()[:5]
	for range 3000 {
		var reqs []Requirement
		for i := range 1 + rng.IntN(3) {
			var acc []string
			for _, typ := range types {
				if rng.IntN(3) == 0 {
					acc = append(acc, typ)
				}
			}
			reqs = append(reqs, Requirement{ID: string(rune('A' + i)), Accepts: acc})
		}
		var docs []string
		for range rng.IntN(4) {
			docs = append(docs, types[rng.IntN(len(types))])
		}
		got := unmatched(reqs, docs)
		if want := len(reqs) - bruteMax(reqs, docs, 0, make([]bool, len(docs))); len(got) != want {
			t.Fatalf("reqs %+v docs %v: missing %v, want %d missing", reqs, docs, got, want)
		}
	}
}

// bruteMax is the largest number of requirements from r on that distinct
// unused documents can cover.
func bruteMax(reqs []Requirement, docs []string, r int, used []bool) int {
	if r == len(reqs) {
		return 0
	}
	best := bruteMax(reqs, docs, r+1, used) // leave r uncovered
	for j, typ := range docs {
		if !used[j] && slices.Contains(reqs[r].Accepts, typ) {
			used[j] = true
			best = max(best, 1+bruteMax(reqs, docs, r+1, used))
			used[j] = false
		}
	}
	return best
}

// Requirements hands out copies: callers cannot change the table.
func TestRequirements_ReturnsCopies(t *testing.T) {
	r, _ := Requirements("EXPORTED_GOODS_POSTPAYMENT")
	r[2].Accepts[0] = "MUTATED"
	r[0].ID = "MUTATED"
	again, _ := Requirements("EXPORTED_GOODS_POSTPAYMENT")
	if again[2].Accepts[0] != PurchaseOrder || again[0].ID != "LOGISTICS_BILL" {
		t.Fatal("the table was changed through a returned value")
	}
}
