package main

import "testing"

// decodeQuoteAck reads an executed quote's answer for both the drain and
// the late payout; a body without a quote id is an error.
func TestDecodeQuoteAck(t *testing.T) {
	a, err := decodeQuoteAck([]byte(`{"id":"Quote:1","transactionId":"Transaction:2","totalSendingAmount":1906,
		"totalReceivingAmount":1900,"status":"PROCESSING"}`), "k-1", 1906)
	want := ack{Key: "k-1", QuoteID: "Quote:1", TransactionID: "Transaction:2", Amount: 1906, Sent: 1906, Received: 1900}
	if err != nil || a != want {
		t.Fatalf("%+v %v, want %+v", a, err, want)
	}
	for _, bad := range []string{``, `{}`, `{"id":""}`, `[1]`, `{"id":"Quote:1","totalSendingAmount":"x"}`} {
		if _, err := decodeQuoteAck([]byte(bad), "k", 1); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzDecodeQuoteAck(f *testing.F) {
	f.Add([]byte(`{"id":"Quote:1","transactionId":"T","totalSendingAmount":1,"totalReceivingAmount":1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := decodeQuoteAck(body, "k", 7)
		if err == nil && (a.QuoteID == "" || a.Key != "k" || a.Amount != 7) {
			t.Fatalf("%q: %+v", body, a)
		}
	})
}
