package cards

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/jsonx"
)

// The request decoders of cards and the card network: any body decodes or
// fails cleanly, and validation never panics nor changes the request.
func FuzzRequests(f *testing.F) {
	for _, seed := range []string{
		`{"customerId":"Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b","fundingSource":"InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b","maxSpendPerDay":5000,"blockedMccs":["7995"]}`,
		`{"cardholderId":"x","fundingSources":["a","b"],"form":"PHYSICAL"}`,
		`{"status":"CLOSED","maxSpendPerDay":null,"allowedMccs":null}`,
		`{"status":"PENDING_AUTH","threeDSecurePassword":"short"}`,
		`{"amount":1250,"currency":{"code":"USD"},"merchant":{"descriptor":"BLUE BOTTLE","mcc":"5814","country":"US"}}`,
		`{"cardTransactionId":"Transaction:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b","amount":0,"final":false}`,
		`{}`, `[]`, `null`, `{"amount":-1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		check := func(v any, validate func() error) {
			if err := jsonx.Decode(body, v); err != nil {
				return
			}
			before, _ := json.Marshal(v)
			_ = validate()
			after, _ := json.Marshal(v)
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("validation changed the request: %s -> %s", before, after)
			}
		}
		var issue IssueRequest
		check(&issue, issue.Validate)
		var upd UpdateRequest
		check(&upd, upd.Validate)
		var auth SimAuthorization
		check(&auth, func() error { return auth.Validate(false) })
		var inquiry SimAuthorization
		check(&inquiry, func() error { return inquiry.Validate(true) })
		var on SimOnTransaction
		check(&on, func() error { return on.Validate("required", true) })
		var none SimOnTransaction
		check(&none, func() error { return none.Validate("none", false) })
	})
}

// The card status machine: each requestable status has its trigger, no row
// leaves CLOSED, and no two rows share a from-status and trigger.
func TestTransitions_TableIsConsistent(t *testing.T) {
	seen := map[[2]string]bool{}
	for _, tr := range Transitions {
		if tr.From == StatusClosed {
			t.Fatalf("a row leaves CLOSED: %+v", tr)
		}
		k := [2]string{tr.From, tr.Trigger}
		if seen[k] {
			t.Fatalf("two rows for %v", k)
		}
		seen[k] = true
	}
	for _, st := range RequestableStatuses {
		if requestTriggers[st] == "" {
			t.Fatalf("no trigger for %s", st)
		}
	}
	tx := map[[2]string]bool{}
	for _, m := range TxMoves {
		k := [2]string{m.From, m.Event}
		if tx[k] {
			t.Fatalf("two card transaction rows for %v", k)
		}
		tx[k] = true
	}
}

// PENDING_KYC is in the status enumeration (R-CARD-25) and no row enters or
// leaves it, as Part A says: a card is issued only to a cardholder whose KYC
// is APPROVED (POST /cards answers 400 CARDHOLDER_KYC_NOT_APPROVED instead
// of creating a waiting card), and APPROVED is final (Part A "Customer
// verification"), so no cardholder's KYC moves back under a live card. If
// customers ever lets APPROVED move back, this fails: the card machine then
// needs its PENDING_KYC rows (docs/cards.md).
func TestTransitions_PendingKYCIsNeverEntered(t *testing.T) {
	if !slices.Contains(Statuses, StatusPendingKYC) {
		t.Fatal("PENDING_KYC left the status enumeration")
	}
	for _, tr := range Transitions {
		if tr.From == StatusPendingKYC || tr.To == StatusPendingKYC {
			t.Fatalf("a row of PENDING_KYC, which Part A never enters: %+v", tr)
		}
	}
	if !customers.Final(customers.StatusApproved) {
		t.Fatal("customers lets an APPROVED KYC move back: cards must then enter PENDING_KYC")
	}
	if _, ok := requestTriggers[StatusPendingKYC]; ok {
		t.Fatal("PENDING_KYC can be requested")
	}
}
