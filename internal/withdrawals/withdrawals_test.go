package withdrawals

import (
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/jsonx"
)

func sp(s string) *string { return &s }
func ip(n int64) *int64   { return &n }

// Validate checks each network's addresses with the external-account
// formats and the currencies the network carries.
func TestValidate(t *testing.T) {
	ok := Request{InternalAccountID: sp("InternalAccount:x"), Currency: sp("USDC"), CryptoNetwork: sp("SOLANA"),
		Amount: ip(1_000_000), DestinationAddress: sp("7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU")}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		mut   func(*Request)
		field string
	}{
		"bad solana address": {func(r *Request) { r.DestinationAddress = sp("0x52908400098527886E0F7030069857D2E4169EE7") }, "destinationAddress"},
		"unknown network":    {func(r *Request) { r.CryptoNetwork = sp("DOGE") }, "cryptoNetwork"},
		"fiat currency":      {func(r *Request) { r.Currency = sp("USD") }, "currency"},
		"not on the chain":   {func(r *Request) { r.Currency = sp("BTC") }, "currency"},
		"no amount":          {func(r *Request) { r.Amount = nil }, "amount"},
		"negative amount":    {func(r *Request) { r.Amount = ip(-1) }, "amount"},
		"no account":         {func(r *Request) { r.InternalAccountID = nil }, "internalAccountId"},
	} {
		r := ok
		c.mut(&r)
		found := false
		for _, fe := range apierr.FieldList(r.Validate()) {
			found = found || fe.Field == c.field
		}
		if !found {
			t.Errorf("%s: %v", name, r.Validate())
		}
	}
}

func FuzzRequest(f *testing.F) {
	f.Add(`{"internalAccountId":"InternalAccount:x","currency":"USDC","cryptoNetwork":"SOLANA","amount":1,"destinationAddress":"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"}`)
	f.Add(`{"cryptoNetwork":"ETHEREUM","currency":"USDT","destinationAddress":"0x0"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var r Request
		if jsonx.Decode([]byte(body), &r) == nil {
			_ = r.Validate()
		}
	})
}
