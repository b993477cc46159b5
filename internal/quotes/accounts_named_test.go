package quotes

import (
	"slices"
	"testing"

	"github.com/paymentsd/paymentsd/internal/jsonx"
)

// AccountsNamed reads, without validating, the internal accounts a quote
// will read: its source's and destination's accountId when they name
// internal accounts; a body it cannot read names none.
func TestAccountsNamed(t *testing.T) {
	for _, c := range []struct {
		body string
		want []string
	}{
		{`{"source":{"sourceType":"ACCOUNT","accountId":"InternalAccount:a"},"destination":{"destinationType":"ACCOUNT","accountId":"InternalAccount:b"}}`,
			[]string{"InternalAccount:a", "InternalAccount:b"}},
		{`{"destination":{"accountId":"ExternalAccount:x"},"source":{"accountId":"InternalAccount:a"}}`, []string{"InternalAccount:a"}},
		{`{"source":{"sourceType":"REALTIME_FUNDING","customerId":"Customer:c"},"destination":{"accountId":"InternalAccount:b"}}`,
			[]string{"InternalAccount:b"}},
		{`{"source":null,"destination":{"umaAddress":"$a@b.c"}}`, nil},
		{`{"source":{"accountId":7}}`, nil},
		{`{"source":`, nil},
		{``, nil},
	} {
		if got := AccountsNamed([]byte(c.body)); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v; want %v", c.body, got, c.want)
		}
	}
}

// Of every body the request decoder accepts, AccountsNamed names exactly
// the accounts the quote reads (internalAccounts): the read-ahead is then
// always the one the quote asks for.
func FuzzAccountsNamed(f *testing.F) {
	for _, s := range []string{
		`{"source":{"sourceType":"ACCOUNT","accountId":"InternalAccount:a"},"destination":{"destinationType":"ACCOUNT","accountId":"InternalAccount:b"}}`,
		`{"source":{"accountId":"InternalAccount:a"},"destination":{"accountId":"InternalAccount:a"}}`,
		`{"source":{"accountId":"ExternalAccount:a"},"destination":{"accountId":"InternalAccount:\u0062"}}`,
		`{"source":{"accountId":null},"destination":{}}`,
		`{"source":{"accountId":"InternalAccount:a","accountId":"InternalAccount:b"},"destination":{}}`,
		`{"Source":{"AccountId":"InternalAccount:a"},"destination":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := AccountsNamed(body)
		var req Request
		if jsonx.Decode(body, &req) != nil || req.Source == nil || req.Destination == nil {
			return
		}
		if want := internalAccountIDs(req.Source.AccountID, req.Destination.AccountID); !slices.Equal(got, want) {
			t.Fatalf("%q: AccountsNamed %q; the quote reads %q", body, got, want)
		}
	})
}
