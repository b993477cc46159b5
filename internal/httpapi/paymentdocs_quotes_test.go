package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/paymentdocs"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Payment documents on the real POST /quotes: a USD internal account pays a
// CNY bank account whose beneficiary is a BUSINESS (Part B "Payment
// documents").

// jsonBody marks a request body as JSON (requests are strict about it).
var jsonBody = withHeader("Content-Type", "application/json")

// qdo is e.do with the JSON Content-Type set.
func (e *env) qdo(method, path string, body any, opts ...reqOpt) resp {
	e.t.Helper()
	if body != nil {
		opts = append([]reqOpt{jsonBody}, opts...)
	}
	return e.do(method, path, body, opts...)
}

// pdocPayout sets up a CNY business payout: it returns a funded USD source
// account, its owner, and the CNY external account of a business.
func (e *env) pdocPayout(t *testing.T) (src, sender, cny string) {
	t.Helper()
	sender, receiver := e.qtSetup(t, "USD", "CNY")
	src = e.qtAccountID(t, sender, "USD")
	e.acFund(t, src, 10_000_000)
	body := cobj{"customerId": receiver, "currency": "CNY", "accountInfo": cobj{"accountType": "CNY_ACCOUNT",
		"bankName": "Bank of Example", "accountNumber": "6222020200112233",
		"beneficiary": cobj{"beneficiaryType": "BUSINESS", "legalName": "Example Trading Co"}}}
	r := e.qdo("POST", eaCustomers, body)
	expect(t, r, http.StatusCreated, "")
	return src, sender, r.JSON(t)["id"].(string)
}

// pdocQuote is a POST /quotes body for the CNY business payout.
func pdocQuote(src, cny, purpose string, ids ...string) cobj {
	if ids == nil {
		ids = []string{}
	}
	return qtBody(src, cny, "SENDING", 10000, "purposeOfPayment", purpose, "documentIds", ids)
}

func replayed(r resp) bool { return r.Header.Get("Idempotent-Replayed") == "true" }

// pdocQuoteOK posts a payout quote and expects 200 with every document
// ATTACHED to it.
func (e *env) pdocQuoteOK(t *testing.T, body cobj, k string) map[string]any {
	t.Helper()
	r := e.qdo("POST", "/quotes", body, key(k))
	expect(t, r, http.StatusOK, "")
	q := r.JSON(t)
	for _, docID := range body["documentIds"].([]string) {
		if d := e.pdocGet(t, docID); d["status"] != "ATTACHED" || d["quoteId"] != q["id"] {
			t.Fatalf("document %s after the quote: %v", docID, d)
		}
	}
	return q
}

// pdocRow is one row group of Part B's payment-document table as the spec
// states it: requirement id → accepted document types.
type pdocRow struct {
	purposes []string
	reqs     [][2]any // {requirement id, []string accepted types}
}

func pdocReq(id string, types ...string) [2]any { return [2]any{id, types} }

// pdocCheckRow drives POST /quotes for every purpose of a row: with one
// document per requirement (every accepted alternative in turn) the quote is
// 200 and the documents ATTACHED to it; without any one requirement it is
// 400 DOCUMENTS_REQUIRED naming exactly that requirement, and the documents
// stay UPLOADED.
func (e *env) pdocCheckRow(t *testing.T, src, cny, keyPrefix string, row pdocRow) {
	t.Helper()
	n := 0
	next := func() string { n++; return fmt.Sprintf("%s%d", keyPrefix, n) }
	for _, purpose := range row.purposes {
		// Every alternative of every requirement, one quote each.
		for alt := 0; ; alt++ {
			var ids []string
			more := false
			for _, r := range row.reqs {
				types := r[1].([]string)
				if alt+1 < len(types) {
					more = true
				}
				ids = append(ids, e.pdocUpload(t, types[min(alt, len(types)-1)], "doc.pdf"))
			}
			e.pdocQuoteOK(t, pdocQuote(src, cny, purpose, ids...), next())
			if !more {
				break
			}
		}
		// Each requirement left out in turn.
		for skip := range row.reqs {
			var ids []string
			for i, r := range row.reqs {
				if i != skip {
					ids = append(ids, e.pdocUpload(t, r[1].([]string)[0], "doc.pdf"))
				}
			}
			r := e.qdo("POST", "/quotes", pdocQuote(src, cny, purpose, ids...), key(next()))
			expect(t, r, http.StatusBadRequest, "DOCUMENTS_REQUIRED")
			details, _ := r.JSON(t)["details"].(map[string]any)
			missing, _ := details["missingRequirements"].([]any)
			if len(missing) != 1 || missing[0] != row.reqs[skip][0] {
				t.Fatalf("%s without %s: missingRequirements %v", purpose, row.reqs[skip][0], details["missingRequirements"])
			}
			for _, docID := range ids {
				if d := e.pdocGet(t, docID); d["status"] != "UPLOADED" {
					t.Fatalf("a refused quote attached %s: %v", docID, d)
				}
			}
		}
	}
}

// Every row of Part B's payment-document table on the real POST /quotes,
// one rule per subtest over one server per engine.
func TestPaymentDocuments_QuoteRequirementRows(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, _ string) {
		src, _, cny := e.pdocPayout(t)
		rows := []struct {
			name string
			row  pdocRow
		}{
			{"R-PDOC-16 EXPORTED_GOODS_PREPAYMENT needs PURCHASE_ORDER", pdocRow{[]string{"EXPORTED_GOODS_PREPAYMENT"}, [][2]any{
				pdocReq("PURCHASE_ORDER", "PURCHASE_ORDER")}}},
			{"R-PDOC-17 EXPORTED_GOODS_POSTPAYMENT needs LOGISTICS_BILL, CUSTOMS_DECLARATION, COMMERCIAL_AGREEMENT", pdocRow{
				[]string{"EXPORTED_GOODS_POSTPAYMENT"}, [][2]any{
					pdocReq("LOGISTICS_BILL", "LOGISTICS_BILL"), pdocReq("CUSTOMS_DECLARATION", "CUSTOMS_DECLARATION"),
					pdocReq("COMMERCIAL_AGREEMENT", "PURCHASE_ORDER", "INVOICE", "CONTRACT")}}},
			{"R-PDOC-18 commissions and services need CONTRACT, INVOICE, SUPPORTING_PROOF", pdocRow{
				[]string{"COMMISSION_ON_GOODS", "COMMISSION_ON_SERVICES", "ACCOUNTING_SERVICES", "EXHIBITION_SERVICES"}, [][2]any{
					pdocReq("CONTRACT", "CONTRACT"), pdocReq("INVOICE", "INVOICE"),
					pdocReq("SUPPORTING_PROOF", "PURCHASE_ORDER", "DELIVERY_SLIP")}}},
			{"R-PDOC-19 OFFICE_EXPENSES needs CONTRACT and INVOICE", pdocRow{[]string{"OFFICE_EXPENSES"}, [][2]any{
				pdocReq("CONTRACT", "CONTRACT"), pdocReq("INVOICE", "INVOICE")}}},
			{"R-PDOC-20 DELIVERY_FEES needs BILL_OF_LADING and CONTRACT_OR_INVOICE", pdocRow{[]string{"DELIVERY_FEES"}, [][2]any{
				pdocReq("BILL_OF_LADING", "BILL_OF_LADING"), pdocReq("CONTRACT_OR_INVOICE", "CONTRACT", "INVOICE")}}},
			{"R-PDOC-21 TRAVEL needs FLIGHT_TICKET, TRAVEL_DOCUMENT, HOTEL_BOOKING_CONFIRMATION", pdocRow{[]string{"TRAVEL"}, [][2]any{
				pdocReq("FLIGHT_TICKET", "FLIGHT_TICKET"), pdocReq("TRAVEL_DOCUMENT", "TRAVEL_DOCUMENT"),
				pdocReq("HOTEL_BOOKING_CONFIRMATION", "HOTEL_BOOKING_CONFIRMATION")}}},
			{"R-PDOC-22 HOTEL_ACCOMMODATION needs HOTEL_BOOKING_CONFIRMATION", pdocRow{[]string{"HOTEL_ACCOMMODATION"}, [][2]any{
				pdocReq("HOTEL_BOOKING_CONFIRMATION", "HOTEL_BOOKING_CONFIRMATION")}}},
		}
		for i, r := range rows {
			t.Run(r.name, func(t *testing.T) { e.pdocCheckRow(t, src, cny, fmt.Sprintf("row%d-", i), r.row) })
		}
		e.acAudit(t)
	})
}

// R-PDOC-15: on the payout, a purpose outside the table (GOODS_OR_SERVICES,
// SERVICE_CHARGES) is 400 INVALID_INPUT on purposeOfPayment and attaches
// nothing.
func TestPaymentDocuments_Quote_PurposeOutsideTable_R_PDOC_15(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, _ string) {
		src, _, cny := e.pdocPayout(t)
		doc := e.pdocUpload(t, "INVOICE", "i.pdf")
		for _, purpose := range []string{"GOODS_OR_SERVICES", "SERVICE_CHARGES"} {
			before := e.qtCounts(t)
			r := e.qdo("POST", "/quotes", pdocQuote(src, cny, purpose, doc), key("p-"+purpose))
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if _, ok := fieldErrors(t, r)["purposeOfPayment"]; !ok {
				t.Fatalf("%s: %s", purpose, r.Body)
			}
			if e.qtCounts(t) != before || e.pdocGet(t, doc)["status"] != "UPLOADED" {
				t.Fatalf("%s: a refused quote changed something", purpose)
			}
		}
	})
}

// R-PDOC-25, R-PDOC-27, R-IDEM-07, R-IDEM-11 (409): a document attaches to
// the first quote (ATTACHED, with its quoteId, file deleted); a replay of
// that quote returns it again without consuming anything; a second quote
// that reuses it gets 409, which is not stored: the same key runs again
// (no replay, no quote), and a corrected request under that key is
// evaluated afresh.
func TestPaymentDocuments_Quote409RunsAgain_R_IDEM_11(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		src, _, cny := e.pdocPayout(t)
		a, b := e.pdocUpload(t, "PURCHASE_ORDER", "a.pdf"), e.pdocUpload(t, "PURCHASE_ORDER", "b.pdf")
		first := e.qdo("POST", "/quotes", pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", a), key("q-1"))
		expect(t, first, http.StatusOK, "")
		q1 := first.JSON(t)["id"].(string)
		if d := e.pdocGet(t, a); d["status"] != "ATTACHED" || d["quoteId"] != q1 || d["attachedAt"] == nil {
			t.Fatalf("%v", d)
		}
		if got := e.pdocStored(t, dir); got != [2]int{2, 1} {
			t.Fatalf("the attached file is deleted once the quote commits: %v", got)
		}
		counts := e.qtCounts(t)
		again := e.qdo("POST", "/quotes", pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", a), key("q-1"))
		if !replayed(again) || !bytes.Equal(again.Body, first.Body) || e.qtCounts(t) != counts {
			t.Fatalf("replay %s", again.Body)
		}

		for range 2 {
			r := e.qdo("POST", "/quotes", pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", a), key("q-2"))
			expect(t, r, http.StatusConflict, "PAYMENT_DOCUMENT_ALREADY_USED")
			if replayed(r) || e.qtCounts(t) != counts {
				t.Fatalf("a 409 is run again, not replayed, and creates no quote: %s", r.Body)
			}
		}
		fixed := e.pdocQuoteOK(t, pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", b), "q-2")
		if d := e.pdocGet(t, a); d["quoteId"] != q1 || fixed["id"] == q1 {
			t.Fatalf("the reused document moved: %v", d)
		}
		e.acAudit(t)
	})
}

// R-PDOC-28, R-IDEM-11 (410): an expired document is 410, not stored; a
// retry with the same key runs again; no quote; the document stays
// UPLOADED.
func TestPaymentDocuments_Quote410RunsAgain_R_IDEM_11(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		src, _, cny := e.pdocPayout(t)
		a := e.pdocUpload(t, "HOTEL_BOOKING_CONFIRMATION", "h.pdf")
		counts := e.qtCounts(t)
		e.db.SetClock(func() time.Time { return time.Now().Add(24*time.Hour + time.Minute) })
		for i := range 2 {
			r := e.qdo("POST", "/quotes", pdocQuote(src, cny, "HOTEL_ACCOMMODATION", a), key("q-410"))
			expect(t, r, http.StatusGone, "PAYMENT_DOCUMENT_EXPIRED")
			if replayed(r) {
				t.Fatalf("attempt %d: a 410 is run again, not replayed", i)
			}
		}
		if e.qtCounts(t) != counts {
			t.Fatal("a 410 created a quote")
		}
		if d := e.pdocGet(t, a); d["status"] != "UPLOADED" {
			t.Fatalf("%v", d)
		}
	})
}

// R-PDOC-30, R-IDEM-11 (424): the sandbox magic fileName fails the
// attachment with 424, which is not stored and creates no quote; when the
// failure clears, the retry with the same key succeeds once and is then
// replayed: one quote.
func TestPaymentDocuments_Quote424RetrySameKey_R_PDOC_30(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		src, _, cny := e.pdocPayout(t)
		bad := e.pdocUpload(t, "PURCHASE_ORDER", "po-Attachment-Failed.pdf")
		counts := e.qtCounts(t)
		for i := range 2 {
			r := e.qdo("POST", "/quotes", pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", bad), key("q-424"))
			expect(t, r, http.StatusFailedDependency, "PAYMENT_DOCUMENT_ATTACHMENT_FAILED")
			if replayed(r) {
				t.Fatalf("attempt %d: a 424 is run again, not replayed", i)
			}
		}
		if d := e.pdocGet(t, bad); d["status"] != "UPLOADED" || e.qtCounts(t) != counts {
			t.Fatalf("a 424 changed something: %v", d)
		}
		if got := e.pdocStored(t, dir); got != [2]int{1, 1} {
			t.Fatalf("a failed attachment lost the file: %v", got)
		}

		// A partner that fails once, then takes the file.
		svc, err := e.srv.PaymentDocuments()
		if err != nil {
			t.Fatal(err)
		}
		var calls atomic.Int32
		svc.AttachmentFails = func(store.Tenant, paymentdocs.Document) bool { return calls.Add(1) == 1 }
		doc := e.pdocUpload(t, "PURCHASE_ORDER", "po.pdf")
		body := pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", doc)
		expect(t, e.qdo("POST", "/quotes", body, key("q-flaky")), http.StatusFailedDependency, "PAYMENT_DOCUMENT_ATTACHMENT_FAILED")
		ok := e.pdocQuoteOK(t, body, "q-flaky")
		again := e.qdo("POST", "/quotes", body, key("q-flaky"))
		if !replayed(again) || again.JSON(t)["id"] != ok["id"] || calls.Load() != 2 {
			t.Fatalf("the success is replayed: %s (attachment calls %d)", again.Body, calls.Load())
		}
		if e.qtCounts(t) == counts {
			t.Fatal("no quote after the retry")
		}
		e.acAudit(t)
	})
}

// R-IDEM-12, R-PDOC-24, R-ERR-04, R-PDOC-29: 400 DOCUMENTS_REQUIRED (with
// details.missingRequirements), 400 INVALID_INPUT and 404
// PAYMENT_DOCUMENT_NOT_FOUND are stored: the same request with the same key
// gets the same answer replayed. A corrected request under the spent key
// gets the stored answer; with a new key it is evaluated afresh.
func TestPaymentDocuments_QuoteErrorsReplayed_R_IDEM_12(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		src, _, cny := e.pdocPayout(t)
		flight := e.pdocUpload(t, "FLIGHT_TICKET", "f.pdf")
		cases := []struct {
			key    string
			body   cobj
			status int
			code   string
		}{
			{"k-docs", pdocQuote(src, cny, "TRAVEL", flight), http.StatusBadRequest, "DOCUMENTS_REQUIRED"},
			{"k-purpose", pdocQuote(src, cny, "GOODS_OR_SERVICES", flight), http.StatusBadRequest, "INVALID_INPUT"},
			{"k-404", pdocQuote(src, cny, "TRAVEL", flight, id.New(id.PaymentDocument)), http.StatusNotFound, "PAYMENT_DOCUMENT_NOT_FOUND"},
		}
		counts := e.qtCounts(t)
		for _, c := range cases {
			first := e.qdo("POST", "/quotes", c.body, key(c.key))
			expect(t, first, c.status, c.code)
			again := e.qdo("POST", "/quotes", c.body, key(c.key))
			if !replayed(again) || again.Status != c.status || !bytes.Equal(again.Body, first.Body) {
				t.Fatalf("%s: not replayed: %d %s", c.code, again.Status, again.Body)
			}
		}
		if e.qtCounts(t) != counts {
			t.Fatal("a refusal created a quote")
		}
		first := e.qdo("POST", "/quotes", cases[0].body, key("k-docs"))
		details, _ := first.JSON(t)["details"].(map[string]any)
		if m, _ := details["missingRequirements"].([]any); !reflect.DeepEqual(m, []any{"TRAVEL_DOCUMENT", "HOTEL_BOOKING_CONFIRMATION"}) {
			t.Fatalf("missingRequirements %v", details["missingRequirements"])
		}
		fixed := pdocQuote(src, cny, "TRAVEL", flight, e.pdocUpload(t, "TRAVEL_DOCUMENT", "t.pdf"), e.pdocUpload(t, "HOTEL_BOOKING_CONFIRMATION", "h.pdf"))
		if r := e.qdo("POST", "/quotes", fixed, key("k-docs")); !replayed(r) || !bytes.Equal(r.Body, first.Body) {
			t.Fatalf("fixed request under the same key: %d %s", r.Status, r.Body)
		}
		e.pdocQuoteOK(t, fixed, "k-docs-2")
	})
}

// R-IDEM-05, R-IDEM-06, R-PDOC-14, R-PDOC-13: documentIds need an
// Idempotency-Key and a CNY business bank payout, at most 3; refusals
// change nothing; a quote without documents needs no key.
func TestPaymentDocuments_QuoteDocumentRules_R_IDEM_05_R_PDOC_14(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		src, sender, cny := e.pdocPayout(t)
		a := e.pdocUpload(t, "PURCHASE_ORDER", "a.pdf")
		counts := e.qtCounts(t)
		r := e.qdo("POST", "/quotes", pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", a))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["Idempotency-Key"] != "required" {
			t.Fatalf("%s", r.Body)
		}
		// A USD payout to a business is no CNY payout.
		usdExt := e.qtExternal(t, sender, "555566667777")
		r = e.qdo("POST", "/quotes", pdocQuote(src, usdExt, "EXPORTED_GOODS_PREPAYMENT", a), key("k-usd"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["documentIds"] == "" {
			t.Fatalf("%s", r.Body)
		}
		four := pdocQuote(src, cny, "EXPORTED_GOODS_PREPAYMENT", a, id.New(id.PaymentDocument), id.New(id.PaymentDocument), id.New(id.PaymentDocument))
		r = e.qdo("POST", "/quotes", four, key("k-4"))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["documentIds"] != "maxItems" {
			t.Fatalf("%s", r.Body)
		}
		if d := e.pdocGet(t, a); d["status"] != "UPLOADED" || e.qtCounts(t) != counts {
			t.Fatalf("a refused quote changed something: %v", d)
		}
		// R-IDEM-06: a quote without documents needs no key.
		e.qtQuote(t, qtBody(src, usdExt, "SENDING", 1000))
	})
}

// R-PDOC-26: with immediatelyExecute the documents are attached before the
// execution: the answer is PROCESSING and the documents are ATTACHED to
// that quote; a payout whose documents fail the requirements is neither
// attached nor executed (no money moves).
func TestPaymentDocuments_QuoteImmediatelyExecuted_R_PDOC_26(t *testing.T) {
	t.Parallel()
	pdocEnv(t, func(t *testing.T, e *env, dir string) {
		src, sender, cny := e.pdocPayout(t)
		before := e.qtBalance(t, sender, "USD")
		inv := e.pdocUpload(t, "INVOICE", "i.pdf")
		r := e.qdo("POST", "/quotes", cwith(pdocQuote(src, cny, "OFFICE_EXPENSES", inv), "immediatelyExecute", true), key("ie-1"))
		expect(t, r, http.StatusBadRequest, "DOCUMENTS_REQUIRED")
		if e.qtBalance(t, sender, "USD") != before || e.pdocGet(t, inv)["status"] != "UPLOADED" {
			t.Fatal("a refused immediate execution moved money or attached a document")
		}
		ct := e.pdocUpload(t, "CONTRACT", "c.pdf")
		q := e.pdocQuoteOK(t, cwith(pdocQuote(src, cny, "OFFICE_EXPENSES", inv, ct), "immediatelyExecute", true), "ie-2")
		if q["status"] != "PROCESSING" {
			t.Fatalf("immediately executed quote: %v", q["status"])
		}
		if got := e.qtBalance(t, sender, "USD"); got != before-qnum(t, q, "totalSendingAmount") {
			t.Fatalf("balance %d, want %d", got, before-qnum(t, q, "totalSendingAmount"))
		}
		x := e.qdo("GET", "/transactions/"+q["transactionId"].(string), nil)
		expect(t, x, http.StatusOK, "")
		if s := x.JSON(t)["status"]; s != "PROCESSING" && s != "COMPLETED" {
			t.Fatalf("transaction %v", s)
		}
		e.acAudit(t)
	})
}
