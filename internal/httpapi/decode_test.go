package httpapi

import (
	"net/http"
	"testing"
)

// R-ERR-02: with an unknown field in an otherwise valid body, the merged
// validation runs over the decoded request, so only the unknown field is
// reported; validating an empty copy would also report the present fields as
// missing.
func TestDecode_MergedValidationSeesDecodedBody_R_ERR_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/verifications", `{"customerId":"Customer:0195a2f5-b3e7-7d02-8000-000000000001","bogus":1}`},
			{"POST", "/tokens", `{"name":"n","permissions":["VIEW"],"bogus":1}`},
			{"POST", "/quotes", `{"source":{"sourceType":"ACCOUNT","accountId":"InternalAccount:0195a2f5-b3e7-7d02-8000-000000000001"},` +
				`"destination":{"destinationType":"ACCOUNT","accountId":"InternalAccount:0195a2f5-b3e7-7d02-8000-000000000002"},` +
				`"lockedCurrencySide":"SENDING","lockedCurrencyAmount":100,"bogus":1}`},
		} {
			r := e.do(c.method, c.path, c.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			got := fieldErrors(t, r)
			if len(got) != 1 || got["bogus"] != "additionalProperties" {
				t.Errorf("%s %s: %v", c.method, c.path, got)
			}
		}
	})
}
