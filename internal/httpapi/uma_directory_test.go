package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/uma"
)

// GET /uma-providers lists the platforms of this installation with a UMA
// domain and the sandbox institution, filtered and paginated; /discoveries
// and /vasps serve the sandbox directories.
func TestUma_Directories(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.acSupport(t, "MXN")
		e.umaDomain(t, "pay.example.com")
		other, _ := platforms.Create(context.Background(), e.db, "Other", false)
		expect(t, e.do("PATCH", "/config", cobj{"umaDomain": "other.example.org"}, withCreds(other.SandboxToken)), http.StatusOK, "")
		r := e.do("GET", "/uma-providers?sortOrder=asc", nil)
		expect(t, r, http.StatusOK, "")
		data := r.JSON(t)["data"].([]any)
		var domains []string
		for _, p := range data {
			domains = append(domains, p.(map[string]any)["domain"].(string))
		}
		if len(domains) != 3 || domains[0] != "other.example.org" || domains[1] != "pay.example.com" || domains[2] != uma.SandboxDomain {
			t.Fatalf("%v", domains)
		}
		mx := e.do("GET", "/uma-providers?countryCode=MX&currencyCode=MXN", nil).JSON(t)["data"].([]any)
		if len(mx) != 1 || mx[0].(map[string]any)["domain"] != "pay.example.com" {
			t.Fatalf("%v", mx)
		}
		p1 := e.do("GET", "/uma-providers?limit=2", nil).JSON(t)
		if p1["hasMore"] != true || p1["totalCount"].(float64) != 3 {
			t.Fatalf("%v", p1)
		}
		p2 := e.do("GET", "/uma-providers?limit=2&cursor="+p1["nextCursor"].(string), nil).JSON(t)
		if len(p2["data"].([]any)) != 1 || p2["hasMore"] != false {
			t.Fatalf("%v", p2)
		}
		expect(t, e.do("GET", "/uma-providers?sortOrder=up", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("GET", "/uma-providers?countryCode=MEX", nil), http.StatusBadRequest, "INVALID_INPUT")
		// Production has no sandbox institution, and here no domain.
		if got := e.do("GET", "/uma-providers", nil, withCreds(e.production)).JSON(t)["data"].([]any); len(got) != 0 {
			t.Fatalf("%v", got)
		}
		ph := e.do("GET", "/discoveries?country=PH&currency=PHP", nil).JSON(t)["data"].([]any)
		if len(ph) == 0 || ph[0].(map[string]any)["country"] != "PH" {
			t.Fatalf("%v", ph)
		}
		if all := e.do("GET", "/discoveries", nil).JSON(t)["data"].([]any); len(all) <= len(ph) {
			t.Fatalf("%d", len(all))
		}
		v1 := e.do("GET", "/vasps?limit=3", nil).JSON(t)
		v2 := e.do("GET", "/vasps?limit=100&cursor="+v1["nextCursor"].(string), nil).JSON(t)
		if len(v1["data"].([]any)) != 3 || v1["hasMore"] != true || len(v2["data"].([]any)) != int(v1["totalCount"].(float64))-3 {
			t.Fatalf("%v %v", v1, v2)
		}
	})
}
