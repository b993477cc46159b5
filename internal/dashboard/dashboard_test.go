package dashboard

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestMinorUnits(t *testing.T) {
	for _, c := range []struct {
		in   string
		dec  int
		want string
	}{
		{"0", 2, "0.00"}, {"5", 2, "0.05"}, {"123456", 2, "1234.56"}, {"-5", 2, "-0.05"},
		{"1000", 0, "1000"}, {"99999999999999999999", 8, "999999999999.99999999"}, {"abc", 2, "abc"},
	} {
		if got := minorUnits(c.in, c.dec); got != c.want {
			t.Errorf("minorUnits(%s, %d) = %s, want %s", c.in, c.dec, got, c.want)
		}
	}
}

func TestMoneyFormatsAPIAmounts(t *testing.T) {
	var v map[string]any
	d := json.NewDecoder(strings.NewReader(`{"amount": 20906, "currency": {"code": "USD", "decimals": 2}}`))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if got := money(v); got != "209.06 USD" {
		t.Fatalf("money = %q", got)
	}
	if got := money(nil); got != "" {
		t.Fatalf("money(nil) = %q", got)
	}
	if got := minor(int64(-1500), "JPY"); got != "-1500 JPY" {
		t.Fatalf("minor JPY = %q", got)
	}
}

func TestSafeBackKeepsToTheDashboard(t *testing.T) {
	for in, want := range map[string]string{
		"/dashboard/tokens":               "/dashboard/tokens",
		"/dashboard/events/Event:1?x=1":   "/dashboard/events/Event:1?x=1",
		"https://evil.example/dashboard/": "",
		"//evil.example/dashboard/":       "",
		"/dashboard/\\evil":               "",
		"/other":                          "",
		"":                                "",
	} {
		if got := safeBack(in); got != want {
			t.Errorf("safeBack(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for origin, want := range map[string]bool{"": true, "http://example.test": true, "http://evil.test": false, "::": false} {
		r := httptest.NewRequest("POST", "http://example.test/dashboard/tokens", nil)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if got := sameOrigin(r); got != want {
			t.Errorf("Origin %q: %v, want %v", origin, got, want)
		}
	}
}

func TestPageLinkReplacesTheCursor(t *testing.T) {
	q := url.Values{"status": {"FAILED"}, "cursor": {"old"}}
	got := pageLink("/dashboard/transactions", q, "next")
	if got != "/dashboard/transactions?cursor=next&status=FAILED" {
		t.Fatalf("pageLink = %s", got)
	}
}

func TestChartsEscapeLabels(t *testing.T) {
	svg := string(barChart("by <status>", []bar{{Label: `<script>alert(1)</script>`, Value: 3, Text: "3"}, {Label: "B", Value: 0, Text: "0"}}))
	if strings.Contains(svg, "<script>") || !strings.Contains(svg, "&lt;script&gt;") {
		t.Fatalf("bar chart does not escape its labels: %s", svg)
	}
	line := string(lineChart("balance", []point{{"a", 1}, {"<b>", 5}}, func(v float64) string { return str(v) }))
	if strings.Contains(line, "<b>") || !strings.Contains(line, "<path") {
		t.Fatalf("line chart: %s", line)
	}
	if lineChart("one point", []point{{"a", 1}}, str2) != "" || barChart("none", nil) != "" {
		t.Fatal("charts without data should be empty")
	}
}

func str2(v float64) string { return str(v) }

func TestTemplatesParse(t *testing.T) {
	p, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"signin", "error", "home", "customers", "customer", "accounts", "account",
		"transactions", "transaction", "events", "event", "webhooks", "tokens", "token_created", "config", "sandbox",
		"cards", "card", "agents", "approvals"} {
		if p.sets[name] == nil {
			t.Errorf("no page %s", name)
		}
	}
	rec := httptest.NewRecorder()
	p.render(rec, 200, "signin", view{Title: "Sign in", Form: map[string]string{"csrf": "x"}})
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `name="clientSecret"`) {
		t.Fatalf("sign-in page: %d %s", rec.Code, rec.Body.String())
	}
}

func FuzzMinorUnits(f *testing.F) {
	f.Add("123456", 2)
	f.Add("-1", 8)
	f.Fuzz(func(t *testing.T, amount string, decimals int) {
		if decimals > 30 || decimals < -5 {
			return
		}
		out := minorUnits(amount, decimals)
		if out == "" && amount != "" {
			t.Fatalf("minorUnits(%q, %d) is empty", amount, decimals)
		}
		if strings.Count(out, ".") > 1 && !strings.Contains(amount, ".") {
			t.Fatalf("minorUnits(%q, %d) = %q", amount, decimals, out)
		}
	})
}

func FuzzSafeBack(f *testing.F) {
	f.Add("/dashboard/tokens")
	f.Add("//evil")
	f.Fuzz(func(t *testing.T, back string) {
		got := safeBack(back)
		if got != "" && (!strings.HasPrefix(got, "/dashboard/") || strings.ContainsAny(got, "\\\r\n")) {
			t.Fatalf("safeBack(%q) = %q", back, got)
		}
	})
}
