package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// R-TOKCFG-04: an unknown token id is 404 TOKEN_NOT_FOUND on GET and DELETE;
// so are a deleted token and a token of the other environment, and a refused
// DELETE revokes nothing.
func TestTokens_UnknownID_R_TOKCFG_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for _, tokenID := range []string{id.New(id.Token), id.New(id.Token), "Token:not-a-uuid", "nothing-like-an-id"} {
			expect(t, e.do("GET", "/tokens/"+tokenID, nil), http.StatusNotFound, "TOKEN_NOT_FOUND") // R-TOKCFG-04
			expect(t, e.do("DELETE", "/tokens/"+tokenID, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		}
		r := e.do("POST", "/tokens", `{"name":"prod reader","permissions":["VIEW"]}`, jsonBody, withCreds(e.production))
		expect(t, r, http.StatusCreated, "")
		var prod struct{ ID, ClientID, ClientSecret string }
		if err := json.Unmarshal(r.Body, &prod); err != nil {
			t.Fatal(err)
		}
		expect(t, e.do("GET", "/tokens/"+prod.ID, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		expect(t, e.do("DELETE", "/tokens/"+prod.ID, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		expect(t, e.do("GET", "/tokens/"+prod.ID, nil, withCreds(prod.ClientID+":"+prod.ClientSecret)), http.StatusOK, "")
		expect(t, e.do("DELETE", "/tokens/"+prod.ID, nil, withCreds(e.production)), http.StatusNoContent, "")
		expect(t, e.do("GET", "/tokens/"+prod.ID, nil, withCreds(e.production)), http.StatusNotFound, "TOKEN_NOT_FOUND")
		expect(t, e.do("DELETE", "/tokens/"+prod.ID, nil, withCreds(e.production)), http.StatusNotFound, "TOKEN_NOT_FOUND")
	})
}

// R-AUTH-06: tokens report the permission names they were given (VIEW,
// TRANSACT) on creation, on GET and in the list; the initial token is TRANSACT.
func TestTokens_ReportPermissions_R_AUTH_06(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		perms := func(m map[string]any) []string {
			var out []string
			for _, p := range m["permissions"].([]any) {
				out = append(out, p.(string))
			}
			return out
		}
		ids := map[string][]string{}
		for _, want := range [][]string{{"VIEW"}, {"TRANSACT"}, {"VIEW", "TRANSACT"}} {
			body, _ := json.Marshal(map[string]any{"name": strings.Join(want, "+"), "permissions": want})
			r := e.do("POST", "/tokens", string(body), jsonBody)
			expect(t, r, http.StatusCreated, "")
			created := r.JSON(t)
			if got := perms(created); !slices.Equal(got, want) {
				t.Fatalf("created with %v, reports %v", want, got) // R-AUTH-06
			}
			tokenID := created["id"].(string)
			if got := perms(e.do("GET", "/tokens/"+tokenID, nil).JSON(t)); !slices.Equal(got, want) {
				t.Fatalf("GET reports %v, want %v", got, want) // R-AUTH-06
			}
			ids[tokenID] = want
		}
		list := e.do("GET", "/tokens?limit=100", nil)
		expect(t, list, http.StatusOK, "")
		initial := 0
		for _, x := range list.JSON(t)["data"].([]any) {
			tok := x.(map[string]any)
			got := perms(tok)
			if want, ok := ids[tok["id"].(string)]; ok {
				if !slices.Equal(got, want) {
					t.Fatalf("list reports %v, want %v", got, want)
				}
				delete(ids, tok["id"].(string))
				continue
			}
			if !slices.Equal(got, []string{"TRANSACT"}) {
				t.Fatalf("the initial token reports %v", got)
			}
			initial++
		}
		if len(ids) != 0 || initial != 1 {
			t.Fatalf("not listed: %v; initial tokens: %d", ids, initial)
		}
	})
}

// R-ERR-01: every error a client can provoke carries a string code and a
// string reason, and details, when present, is an object.
func TestErrors_BodyShape_R_ERR_01(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{MaxBodyBytes: 4096})
		c1, c2 := e.acCustomer(t, jsonBody), e.acCustomer(t, jsonBody)
		expect(t, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": c1}, key("err-01"), jsonBody), http.StatusCreated, "")
		cases := []struct {
			name   string
			status int
			r      resp
		}{
			{"validation", 400, e.do("POST", "/tokens", `{"permissions":["NOPE"]}`, jsonBody)},
			{"malformed JSON", 400, e.do("POST", "/tokens", `{"name":`, jsonBody)},
			{"bad query", 400, e.do("GET", "/tokens?limit=0", nil)},
			{"no credentials", 401, e.do("GET", "/tokens", nil, withCreds(""))},
			{"wrong secret", 401, e.do("GET", "/tokens", nil, withCreds(strings.Split(e.sandbox, ":")[0]+":wrong"))},
			{"sandbox route, production token", 403, e.do("POST", "/sandbox/internal-accounts/"+id.New(id.InternalAccount)+"/fund",
				`{"amount":1}`, jsonBody, withCreds(e.production))},
			{"view token writes", 403, e.do("POST", "/tokens", `{"name":"x","permissions":["VIEW"]}`, jsonBody,
				withCreds(e.newToken(t, "VIEW")))},
			{"unknown resource", 404, e.do("GET", "/customers/"+id.New(id.Customer), nil)},
			{"unknown path", 404, e.do("GET", "/no-such-endpoint", nil)},
			{"wrong method", 405, e.do("PUT", "/tokens", `{}`, jsonBody)},
			{"key reused", 409, e.do("POST", "/internal-accounts", cobj{"type": "RULE_BASED", "customerId": c2}, key("err-01"), jsonBody)},
			{"too large", 413, e.do("POST", "/tokens", `{"name":"`+strings.Repeat("x", 5000)+`"}`, jsonBody)},
		}
		for _, c := range cases {
			if c.r.Status != c.status {
				t.Errorf("%s: status %d, want %d: %s", c.name, c.r.Status, c.status, c.r.Body)
				continue
			}
			if ct := c.r.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", c.name, ct)
			}
			var m map[string]any
			if err := json.Unmarshal(c.r.Body, &m); err != nil {
				t.Errorf("%s: not a JSON object: %s", c.name, c.r.Body)
				continue
			}
			code, codeOK := m["code"].(string)
			reason, reasonOK := m["reason"].(string)
			if !codeOK || code == "" || !reasonOK || reason == "" { // R-ERR-01
				t.Errorf("%s: code and reason must be non-empty strings: %s", c.name, c.r.Body)
			}
			if d, has := m["details"]; has {
				if _, isObject := d.(map[string]any); !isObject {
					t.Errorf("%s: details is not an object: %s", c.name, c.r.Body)
				}
			}
		}
	})
}

// The spec's code-to-status tables, each code sent through the one error
// mapper: the status is the table's and the code is sent exactly as issued.
var specCodes = []struct {
	rule   string
	status int
	codes  []string
}{
	// R-ERR-08
	{"R-ERR-08", 400, []string{"INVALID_UMA_ADDRESS", "INVALID_RECEIVER", "PARSE_PAYREQ_RESPONSE_ERROR",
		"PARSE_LNURLP_RESPONSE_ERROR", "CERT_CHAIN_INVALID", "CERT_CHAIN_EXPIRED", "INVALID_PUBKEY_FORMAT",
		"MISSING_REQUIRED_UMA_PARAMETERS", "SENDER_NOT_ACCEPTED", "INVITATION_ALREADY_CLAIMED",
		"INVITATIONS_NOT_CONFIGURED", "INVITATION_CANCELLED"}},
	// R-ERR-09
	{"R-ERR-09", 400, []string{"AMOUNT_OUT_OF_RANGE", "TRANSACTION_SIZE_LIMIT_EXCEEDED", "INVALID_BANK_ACCOUNT",
		"SELF_PAYMENT", "EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED", "INSUFFICIENT_FUNDS", "QUOTE_EXPIRED",
		"QUOTE_RATE_UNAVAILABLE", "DOCUMENTS_REQUIRED", "CARDHOLDER_KYC_NOT_APPROVED"}},
	// R-ERR-11
	{"R-ERR-11", 401, []string{"UNAUTHORIZED", "INVALID_SIGNATURE", "WALLET_SIGNATURE_MISSING",
		"WALLET_SIGNATURE_MALFORMED", "WALLET_SIGNATURE_BODY_MISMATCH", "WALLET_SIGNATURE_INVALID", "REQUEST_ID_MISSING"}},
	{"R-ERR-11", 403, []string{"FORBIDDEN"}},
	// R-ERR-12
	{"R-ERR-12", 404, []string{"TRANSACTION_NOT_FOUND", "QUOTE_NOT_FOUND", "LOOKUP_REQUEST_NOT_FOUND",
		"REFERENCE_NOT_FOUND", "UMA_NOT_FOUND", "USER_NOT_FOUND", "PAYMENT_URL_NOT_FOUND",
		"PAYMENT_DOCUMENT_NOT_FOUND", "ACCOUNT_NOT_FOUND"}},
	// R-ERR-13
	{"R-ERR-13", 404, []string{"INVITATION_NOT_FOUND", "TOKEN_NOT_FOUND", "BULK_UPLOAD_JOB_NOT_FOUND",
		"AUTH_METHOD_NOT_FOUND", "CUSTOMER_NOT_FOUND", "DOCUMENT_HOLDER_NOT_FOUND", "NOT_FOUND", "PLATFORM_NOT_FOUND",
		"REQUEST_NOT_FOUND", "SESSION_NOT_FOUND", "VERIFICATION_NOT_FOUND", "STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND",
		"STABLECOIN_EXTERNAL_ACCOUNT_NOT_FOUND", "STABLECOIN_NOT_FOUND", "STABLECOIN_OPERATION_NOT_FOUND"}},
	// R-ERR-14
	{"R-ERR-14", 409, []string{"TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL", "TRANSACTION_NOT_CANCELLABLE",
		"BENEFICIARY_TRUSTED", "BANK_ACCOUNT_VALIDATION_PENDING", "DUPLICATE_EXTERNAL_ACCOUNT", "DUPLICATE_PAY_REQUEST",
		"UMA_ADDRESS_EXISTS", "SCA_SESSION_REQUIRED", "NOT_YET_AVAILABLE", "CONFLICT", "DOCUMENT_ALREADY_EXISTS",
		"OPERATION_IN_PROGRESS", "WALLET_NOT_PROVISIONED", "PAYMENT_DOCUMENT_ALREADY_USED"}},
	// R-ERR-15
	{"R-ERR-15", 409, []string{"INVALID_STATE_TRANSITION", "CARD_ALREADY_CLOSED", "CARD_NOT_MUTABLE",
		"PIN_CHANGE_REQUIRED", "CARD_LIMIT_REACHED"}},
	// R-ERR-16
	{"R-ERR-16", 409, []string{"EMAIL_OTP_EMAIL_ALREADY_EXISTS", "EMAIL_OTP_CREDENTIAL_SET_CHANGED",
		"SMS_OTP_CREDENTIAL_SET_CHANGED", "SMS_OTP_PHONE_NUMBER_ALREADY_EXISTS", "PASSKEY_ALREADY_ENROLLED",
		"STABLECOIN_GRID_ENABLEMENT_NOT_REQUESTABLE", "STABLECOIN_SYMBOL_ALREADY_EXISTS",
		"STABLECOIN_TOKEN_IDENTIFIER_ALREADY_EXISTS"}},
	// R-ERR-19
	{"R-ERR-19", 410, []string{"PAYMENT_DOCUMENT_EXPIRED"}},
	{"R-ERR-19", 423, []string{"ACCOUNT_LOCKED"}},
	{"R-ERR-19", 424, []string{"PAYMENT_DOCUMENT_ATTACHMENT_FAILED"}},
	// R-ERR-23
	{"R-ERR-23", 502, []string{"INVALID_PAYREQ_RESPONSE", "COUNTERPARTY_SERVER_ERROR"}},
	// R-ERR-24
	{"R-ERR-24", 504, []string{"LOOKUP_REQUEST_FAILED", "QUOTE_REQUEST_FAILED"}},
	// R-ERR-25: codes with a brand word are kept exactly as issued.
	{"R-ERR-25", 500, []string{"GRID_SWITCH_ERROR"}},
	{"R-ERR-25", 400, []string{"STABLECOIN_GRID_OPERATIONS_NOT_ENABLED"}},
	{"R-ERR-25", 409, []string{"STABLECOIN_GRID_ENABLEMENT_NOT_REQUESTABLE"}},
}

// R-ERR-08, R-ERR-09, R-ERR-11, R-ERR-12, R-ERR-13, R-ERR-14, R-ERR-15,
// R-ERR-16, R-ERR-19, R-ERR-23, R-ERR-24, R-ERR-25: whenever a service returns
// one of these codes, the response has the table's status and carries the
// code byte for byte (no renaming of brand words).
func TestErrors_CodeToStatus_SpecTables(t *testing.T) {
	e := newEnv(t, storetest.OpenSQLite(t), Options{})
	for _, group := range specCodes {
		for _, code := range group.codes {
			t.Run(group.rule+"/"+code, func(t *testing.T) {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest("GET", "/"+Version+"/tokens", nil)
				e.srv.writeError(rec, req, apierr.New(code, "because"))
				if rec.Code != group.status {
					t.Fatalf("%s: status %d, want %d (%s)", code, rec.Code, group.status, group.rule)
				}
				if !strings.Contains(rec.Body.String(), `"code":"`+code+`"`) {
					t.Fatalf("%s: body %s does not carry the code exactly", code, rec.Body)
				}
				var m map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m["code"] != code || m["reason"] != "because" {
					t.Fatalf("%s: body %s", code, rec.Body)
				}
			})
		}
	}
}

// R-ERR-23, R-ERR-24: 502 and 504 are retryable: a retry with the same
// Idempotency-Key runs the request again instead of replaying the failure.
func TestErrors_GatewayFailuresAreRetried_R_ERR_23_R_ERR_24(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for path, code := range map[string]string{"/gateway-502": "COUNTERPARTY_SERVER_ERROR", "/gateway-504": "QUOTE_REQUEST_FAILED"} {
			var calls atomic.Int32
			e.srv.handle(route{pattern: "POST " + path, need: 0, idempotent: true, h: func(w http.ResponseWriter, r *http.Request) error {
				if calls.Add(1) == 1 {
					return apierr.New(code, "the counterparty did not answer")
				}
				writeJSON(w, http.StatusOK, map[string]int32{"attempt": calls.Load()})
				return nil
			}})
			e.undocumented["/"+Version+path] = true
			status, _ := apierr.StatusOf(code)
			expect(t, e.do("POST", path, `{}`, jsonBody, key("retry"+path)), status, code)
			r := e.do("POST", path, `{}`, jsonBody, key("retry"+path))
			expect(t, r, http.StatusOK, "")
			if calls.Load() != 2 {
				t.Fatalf("%s: the retry was not run (%d calls)", code, calls.Load())
			}
			replay := e.do("POST", path, `{}`, jsonBody, key("retry"+path))
			if replay.Status != http.StatusOK || string(replay.Body) != string(r.Body) || calls.Load() != 2 {
				t.Fatalf("%s: the success is replayed once it exists: %d %s", code, replay.Status, replay.Body)
			}
		}
	})
}

// R-VER-01: every endpoint lives under the version segment 2025-10-13, and
// production and sandbox share that one base, told apart by the token.
func TestVersion_BasePath_R_VER_01(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		if Version != "2025-10-13" {
			t.Fatalf("Version %q", Version)
		}
		for _, creds := range []string{e.sandbox, e.production} {
			expect(t, e.do("GET", "//2025-10-13/tokens", nil, withCreds(creds)), http.StatusOK, "") // R-VER-01
			expect(t, e.do("GET", "//2025-10-13/config", nil, withCreds(creds)), http.StatusOK, "")
			for _, other := range []string{"//tokens", "//2024-01-01/tokens", "//v1/tokens", "//2025-10-13x/tokens"} {
				expect(t, e.do("GET", other, nil, withCreds(creds)), http.StatusNotFound, "NOT_FOUND")
			}
		}
		sbx := e.do("GET", "//2025-10-13/config", nil).JSON(t)["id"]
		prd := e.do("GET", "//2025-10-13/config", nil, withCreds(e.production)).JSON(t)["id"]
		if sbx == prd {
			t.Fatal("the token, not the address, selects the environment")
		}
	})
}
