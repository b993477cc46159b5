package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// R-TOKCFG-01..04: create (secret once), list, get, delete; expiresAt optional.
func TestTokens_Lifecycle_R_TOKCFG_01_04(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		r := e.do("POST", "/tokens", `{"name":"Reporting","permissions":["VIEW"]}`)
		expect(t, r, http.StatusCreated, "")
		tok := r.JSON(t)
		id := tok["id"].(string)
		if !strings.HasPrefix(id, "Token:") || tok["clientSecret"] == "" || tok["clientId"] == "" {
			t.Fatalf("create response %s", r.Body)
		}
		if _, has := tok["expiresAt"]; has {
			t.Fatal("a token created without expiresAt reports none (R-TOKCFG-02)")
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Error("a response carrying a secret must not be cached")
		}
		got := e.do("GET", "/tokens/"+id, nil)
		expect(t, got, http.StatusOK, "")
		if _, has := got.JSON(t)["clientSecret"]; has {
			t.Fatal("the secret is shown only once")
		}
		exp := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		r = e.do("POST", "/tokens", map[string]any{"name": "Temp", "permissions": []string{"TRANSACT"}, "expiresAt": exp.Format(time.RFC3339)})
		expect(t, r, http.StatusCreated, "")
		id2 := r.JSON(t)["id"].(string)
		if got := e.do("GET", "/tokens/"+id2, nil).JSON(t)["expiresAt"]; got != "2031-05-06T07:08:09Z" {
			t.Fatalf("expiresAt round trip (R-TOKCFG-03): %v", got)
		}
		expect(t, e.do("DELETE", "/tokens/"+id, nil), http.StatusNoContent, "")
		expect(t, e.do("GET", "/tokens/"+id, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		expect(t, e.do("DELETE", "/tokens/"+id, nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		expect(t, e.do("GET", "/tokens/Token:0195a2f5-b3e7-7d02-8000-000000000001", nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
		expect(t, e.do("GET", "/tokens/whatever", nil), http.StatusNotFound, "TOKEN_NOT_FOUND")
	})
}

// R-ERR-02, R-ERR-03: every invalid field listed with its constraint; nothing stored.
func TestTokens_Validation_R_ERR_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		before := e.snapshot()
		cases := []struct {
			body string
			want map[string]string
		}{
			{`{}`, map[string]string{"name": "required", "permissions": "required"}},
			{`{"name":"","permissions":[]}`, map[string]string{"name": "minLength", "permissions": "minLength"}},
			{`{"name":"` + strings.Repeat("n", 256) + `","permissions":["VIEW","ADMIN","VIEW"]}`,
				map[string]string{"name": "maxLength", "permissions[1]": "enum", "permissions[2]": "uniqueItems"}},
			{`{"name":"x","permissions":["VIEW"],"expiresAt":"2001-01-01T00:00:00Z"}`, map[string]string{"expiresAt": "minimum"}},
			{`{"name":7,"permissions":"VIEW","color":"red","expiresAt":"soon"}`,
				map[string]string{"name": "type", "permissions": "type", "color": "additionalProperties", "expiresAt": "format"}},
			{`{"permissions":["ROOT"],"extra":1}`, map[string]string{"name": "required", "permissions[0]": "enum", "extra": "additionalProperties"}},
		}
		for _, c := range cases {
			r := e.do("POST", "/tokens", c.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			got := fieldErrors(t, r)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s:\n got %v\nwant %v", c.body, got, c.want)
			}
		}
		if e.snapshot() != before {
			t.Fatal("invalid requests changed stored data")
		}
	})
}

// R-CONV-10..14: limit/cursor paging without gaps or repeats; bounds named;
// forged cursors refused.
func TestTokens_Pagination_R_CONV_10_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		for i := range 44 { // plus the bootstrap token: 45
			expect(t, e.do("POST", "/tokens", fmt.Sprintf(`{"name":"t%d","permissions":["VIEW"]}`, i)), http.StatusCreated, "")
		}
		first := e.do("GET", "/tokens", nil).JSON(t)
		if len(first["data"].([]any)) != 20 || first["hasMore"] != true || first["totalCount"].(float64) != 45 {
			t.Fatalf("default page (R-CONV-13): %d items, hasMore %v, total %v", len(first["data"].([]any)), first["hasMore"], first["totalCount"])
		}
		seen := map[string]bool{}
		cursor := ""
		pages := 0
		for {
			q := "/tokens?limit=7"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p := e.do("GET", q, nil)
			expect(t, p, http.StatusOK, "")
			m := p.JSON(t)
			pages++
			for _, x := range m["data"].([]any) {
				id := x.(map[string]any)["id"].(string)
				if seen[id] {
					t.Fatalf("repeat %s", id)
				}
				seen[id] = true
			}
			nc, has := m["nextCursor"]
			if m["hasMore"] != has {
				t.Fatalf("nextCursor present=%v but hasMore=%v (R-CONV-11)", has, m["hasMore"])
			}
			if !has {
				break
			}
			cursor = nc.(string)
		}
		if len(seen) != 45 || pages != 7 {
			t.Fatalf("saw %d tokens in %d pages", len(seen), pages)
		}

		for _, bad := range []string{"limit=1000", "limit=101", "limit=0", "limit=-5", "limit=ten"} {
			r := e.do("GET", "/tokens?"+bad, nil)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if _, ok := fieldErrors(t, r)["limit"]; !ok {
				t.Errorf("%s: error does not name limit", bad)
			}
		}
		if r := e.do("GET", "/tokens?limit=1000", nil); !strings.Contains(string(r.Body), "100") {
			t.Errorf("the error names the bound: %s", r.Body)
		}
		real := e.do("GET", "/tokens?limit=2", nil).JSON(t)["nextCursor"].(string)
		for _, forged := range []string{"abc", real + "x", "e30.e30", strings.ToUpper(real)} {
			r := e.do("GET", "/tokens?cursor="+url.QueryEscape(forged), nil)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fieldErrors(t, r)["cursor"] != "format" {
				t.Errorf("forged %q: %s", forged, r.Body)
			}
		}
		// A cursor only continues the list and filters it came from.
		expect(t, e.do("GET", "/tokens?name=t1&cursor="+url.QueryEscape(real), nil), http.StatusBadRequest, "INVALID_INPUT")
		// Filters.
		if n := e.do("GET", "/tokens?name=t3", nil).JSON(t)["totalCount"]; n.(float64) != 1 {
			t.Fatalf("name filter: %v", n)
		}
		expect(t, e.do("GET", "/tokens?createdAfter=yesterday", nil), http.StatusBadRequest, "INVALID_INPUT")
		if n := e.do("GET", "/tokens?createdAfter="+url.QueryEscape(time.Now().Add(time.Hour).Format(time.RFC3339)), nil).JSON(t)["totalCount"]; n.(float64) != 0 {
			t.Fatalf("createdAfter filter: %v", n)
		}
	})
}
