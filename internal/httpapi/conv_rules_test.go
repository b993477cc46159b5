package httpapi

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/quotes"
)

// R-QUOTE-03: an ACCOUNT source with accountId is accepted and echoed
// (sourceType, accountId); its optional customerId must be the account's
// owner.
// R-QUOTE-18: description is optional and echoed, on POST and GET.
// R-QUOTE-21: the quote's fields, with Currency objects, integer amounts
// and a number exchangeRate.
func TestQuotes_Fields_R_QUOTE_03_R_QUOTE_18_R_QUOTE_21(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t, "USD", "EUR")
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "EUR")
		e.acFund(t, src, 100_000)
		body := qtBody(src, dst, "SENDING", 10_000, "description", "school fees", "purposeOfPayment", "EDUCATION",
			"senderCustomerInfo", cobj{"FULL_NAME": "Jane Doe"})
		body["source"].(cobj)["customerId"] = a
		q := e.qtQuote(t, body, jsonBody)
		s := q["source"].(map[string]any)
		if s["sourceType"] != "ACCOUNT" || s["accountId"] != src || s["customerId"] != a {
			t.Fatalf("source %v", s)
		}
		got := e.qdo("GET", "/quotes/"+q["id"].(string), nil)
		expect(t, got, http.StatusOK, "")
		for _, m := range []map[string]any{q, got.JSON(t)} {
			if m["description"] != "school fees" {
				t.Fatalf("description %v", m["description"])
			}
			for _, f := range []string{"id", "status", "createdAt", "expiresAt", "source", "destination", "sendingCurrency",
				"receivingCurrency", "totalSendingAmount", "totalReceivingAmount", "exchangeRate", "feesIncluded",
				"platformFeesIncluded", "transactionId", "counterpartyInformation", "rateDetails", "purposeOfPayment",
				"description", "lockedCurrencySide", "lockedCurrencyAmount"} {
				if _, ok := m[f]; !ok {
					t.Fatalf("no %s: %v", f, m)
				}
			}
			for _, c := range []string{"sendingCurrency", "receivingCurrency"} {
				cur, _ := m[c].(map[string]any)
				if cur["code"] == nil || cur["decimals"] == nil || cur["name"] == nil {
					t.Fatalf("%s is not a Currency: %v", c, m[c])
				}
			}
			if _, ok := m["exchangeRate"].(float64); !ok || m["purposeOfPayment"] != "EDUCATION" {
				t.Fatalf("%v", m)
			}
		}
		intsOnly(t, got.Body, "totalSendingAmount", "totalReceivingAmount", "feesIncluded", "platformFeesIncluded", "lockedCurrencyAmount")
		// customerId must own the account.
		wrong := qtBody(src, dst, "SENDING", 10_000)
		wrong["source"].(cobj)["customerId"] = b
		e.qtRefusal(t, a, wrong, http.StatusBadRequest, "INVALID_INPUT", "source.customerId")
		// description is optional.
		if q := e.qtQuote(t, qtBody(src, dst, "SENDING", 10_000), jsonBody); q["description"] != nil {
			t.Fatalf("description %v", q["description"])
		}
	})
}

// R-QUOTE-37: a payment-instruction-funded quote's paymentInstructions
// items carry accountOrWalletInfo (an object) and instructionsNotes (a
// string); the USD_ACCOUNT variant has paymentRails (array), accountNumber,
// routingNumber, bankName and reference.
func TestQuotes_PaymentInstructionsShape_R_QUOTE_37(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		q := e.qtQuote(t, cobj{"source": cobj{"sourceType": "REALTIME_FUNDING", "customerId": a, "currency": "USD"},
			"destination":        cobj{"destinationType": "ACCOUNT", "accountId": e.qtAccountID(t, b, "USD")},
			"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 2500}, jsonBody)
		list, _ := q["paymentInstructions"].([]any)
		if len(list) == 0 {
			t.Fatalf("paymentInstructions %v", q["paymentInstructions"])
		}
		usd := 0
		for _, x := range list {
			pi := x.(map[string]any)
			info, ok := pi["accountOrWalletInfo"].(map[string]any)
			if notes, isStr := pi["instructionsNotes"].(string); !ok || !isStr || notes == "" {
				t.Fatalf("instruction %v", pi)
			}
			if info["accountType"] != "USD_ACCOUNT" {
				continue
			}
			usd++
			if rails, ok := info["paymentRails"].([]any); !ok || len(rails) == 0 {
				t.Fatalf("paymentRails %v", info)
			}
			for _, f := range []string{"accountNumber", "routingNumber", "bankName", "reference"} {
				if s, _ := info[f].(string); s == "" {
					t.Fatalf("USD_ACCOUNT without %s: %v", f, info)
				}
			}
		}
		if usd == 0 {
			t.Fatalf("no USD_ACCOUNT instruction: %v", list)
		}
	})
}

// R-CONV-08: dates are YYYY-MM-DD: a customer's birthDate and a business's
// incorporatedOn come back as sent.
func TestConventions_Dates_R_CONV_08(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "USD")
		date := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
		r := e.qdo("POST", "/customers", custIndividual("Jane Doe"))
		expect(t, r, http.StatusCreated, "")
		if d, _ := r.JSON(t)["birthDate"].(string); d != "1990-01-15" || !date.MatchString(d) {
			t.Fatalf("birthDate %v", r.JSON(t)["birthDate"])
		}
		r = e.qdo("POST", "/customers", custBusiness("REG-77"))
		expect(t, r, http.StatusCreated, "")
		bi, _ := r.JSON(t)["businessInfo"].(map[string]any)
		if d, _ := bi["incorporatedOn"].(string); d != "2018-03-14" || !date.MatchString(d) {
			t.Fatalf("incorporatedOn %v", bi["incorporatedOn"])
		}
		got := e.qdo("GET", "/customers/"+r.JSON(t)["id"].(string), nil)
		expect(t, got, http.StatusOK, "")
		if gb, _ := got.JSON(t)["businessInfo"].(map[string]any); gb["incorporatedOn"] != "2018-03-14" {
			t.Fatalf("GET incorporatedOn %v", gb["incorporatedOn"])
		}
	})
}

// R-CONV-09: JSON requests are accepted and responses with bodies are
// application/json, on the money endpoints.
func TestConventions_JSONBodies_R_CONV_09(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10_000)
		q := e.qdo("POST", "/quotes", qtBody(src, dst, "SENDING", 1_000))
		expect(t, q, http.StatusOK, "")
		id, txID := q.JSON(t)["id"].(string), q.JSON(t)["transactionId"].(string)
		for _, r := range []resp{q,
			e.qdo("GET", "/quotes/"+id, nil),
			e.qdo("POST", "/quotes/"+id+"/execute", nil),
			e.qdo("GET", "/transactions/"+txID, nil),
			e.qdo("GET", "/transactions", nil),
			e.qdo("GET", "/exchange-rates?sourceCurrency=USD", nil),
			e.qdo("GET", "/config", nil),
		} {
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %q: %s", r.Status, r.Header.Get("Content-Type"), r.Body)
			}
			r.JSON(t)
		}
	})
}

// R-CONV-15: each PurposeOfPayment value is accepted on POST /quotes (and
// echoed); a value outside the list is refused with constraint enum on
// POST /quotes and POST /transfer-out.
func TestConventions_PurposeOfPayment_R_CONV_15(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src, dst := e.qtAccountID(t, a, "USD"), e.qtAccountID(t, b, "USD")
		e.acFund(t, src, 10_000)
		want := []string{"GIFT", "SELF", "GOODS_OR_SERVICES", "EDUCATION", "HEALTH_OR_MEDICAL", "REAL_ESTATE_PURCHASE",
			"TAX_PAYMENT", "LOAN_PAYMENT", "UTILITY_BILL", "DONATION", "TRAVEL", "FAMILY_SUPPORT", "SALARY_PAYMENT",
			"EXPORTED_GOODS_PREPAYMENT", "EXPORTED_GOODS_POSTPAYMENT", "SERVICE_CHARGES", "OFFICE_EXPENSES", "DELIVERY_FEES",
			"HOTEL_ACCOMMODATION", "COMMISSION_ON_GOODS", "COMMISSION_ON_SERVICES", "ACCOUNTING_SERVICES",
			"EXHIBITION_SERVICES", "OTHER"}
		if strings.Join(quotes.PurposesOfPayment, ",") != strings.Join(want, ",") {
			t.Fatalf("enumeration %v", quotes.PurposesOfPayment)
		}
		for _, p := range want {
			if q := e.qtQuote(t, qtBody(src, dst, "SENDING", 1_000, "purposeOfPayment", p), jsonBody); q["purposeOfPayment"] != p {
				t.Fatalf("%s: %v", p, q["purposeOfPayment"])
			}
		}
		for _, bad := range []string{"FUN", "gift", ""} {
			e.qtRefusal(t, a, qtBody(src, dst, "SENDING", 1_000, "purposeOfPayment", bad), http.StatusBadRequest, "INVALID_INPUT", "purposeOfPayment=enum")
		}
		ext := e.qtExternal(t, b, "1234561234")
		before := e.qtCounts(t)
		r := e.qdo("POST", "/transfer-out", cobj{"source": cobj{"accountId": src}, "destination": cobj{"accountId": ext},
			"amount": 5_000, "purposeOfPayment": "FUN"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["purposeOfPayment"] != "enum" || e.qtCounts(t) != before {
			t.Fatalf("%s", r.Body)
		}
	})
}

// R-CONV-16: the PaymentRail values seen are known. ACH, ACH_SAME_DAY,
// WIRE, RTP and FEDNOW are accepted on a US bank account (and echoed);
// NEFT, FASTER_PAYMENTS, UPI and ONCHAIN are known values that a US bank
// account does not support (refused as unsupported by the destination, not
// as unknown); a value outside the vocabulary is refused as unknown.
func TestConventions_PaymentRails_R_CONV_16(t *testing.T) {
	t.Parallel()
	eachEnv(t, func(t *testing.T, e *env) {
		a, b := e.qtSetup(t)
		src := e.qtAccountID(t, a, "USD")
		e.acFund(t, src, 1_000_000)
		ext := e.qtExternal(t, b, "1234561234")
		to := func(rail string) cobj {
			return qtBody(src, ext, "SENDING", 10_000, "destination", cobj{"destinationType": "ACCOUNT", "accountId": ext, "paymentRail": rail})
		}
		for _, rail := range []string{"ACH", "ACH_SAME_DAY", "WIRE", "RTP", "FEDNOW"} {
			if q := e.qtQuote(t, to(rail), jsonBody); q["destination"].(map[string]any)["paymentRail"] != rail {
				t.Fatalf("%s: %v", rail, q["destination"])
			}
		}
		for _, rail := range []string{"NEFT", "FASTER_PAYMENTS", "UPI", "ONCHAIN"} {
			r := e.qtRefusal(t, a, to(rail), http.StatusBadRequest, "INVALID_INPUT", "destination.paymentRail")
			if !strings.Contains(string(r.Body), "the destination supports") {
				t.Fatalf("%s refused as unknown: %s", rail, r.Body)
			}
		}
		r := e.qtRefusal(t, a, to("CARRIER_PIGEON"), http.StatusBadRequest, "INVALID_INPUT", "destination.paymentRail=enum")
		if strings.Contains(string(r.Body), "the destination supports") {
			t.Fatalf("an unknown rail: %s", r.Body)
		}
	})
}
