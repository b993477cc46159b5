package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/currency"
)

// view is what every template receives.
type view struct {
	Title   string
	Nav     string // the navigation entry to mark current
	Signed  bool
	Sandbox bool
	Env     string
	Client  string // the signed-in token's client id
	CSRF    string
	Can     perms
	Flash   string
	Error   string
	Path    string // this page's path and query, where a form returns
	Query   url.Values
	Form    map[string]string
	Data    map[string]any
}

// perms says which API permissions the signed-in token holds, so pages offer
// only the actions the API would allow (the API still decides).
type perms struct{ Write, Money bool }

func (v view) withError(msg string) view { v.Error = msg; return v }

// view builds the common part of a signed-in page's view.
func (h *Handler) view(r *http.Request, s *session, title string, data map[string]any) view {
	p := s.principal
	return view{Title: title, Signed: true, Sandbox: p.Sandbox(), Env: p.Tenant.Env, Client: p.ClientID,
		CSRF: s.CSRF(), Can: perms{Write: p.Allows(auth.NeedWrite), Money: p.Allows(auth.NeedMoney)},
		Path: r.URL.RequestURI(), Query: r.URL.Query(), Data: data}
}

// pages holds one parsed template set per page, each with the layout.
type pages struct{ sets map[string]*template.Template }

func parsePages() (*pages, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{sets: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// render writes a page; a template error is a 500 without details.
func (p *pages) render(w http.ResponseWriter, status int, name string, v view) {
	var buf bytes.Buffer
	t, ok := p.sets[name]
	if !ok {
		http.Error(w, "no such page", http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var funcs = template.FuncMap{
	"money":    money,
	"minor":    minor,
	"when":     when,
	"pretty":   pretty,
	"str":      str,
	"state":    stateClass,
	"pageLink": pageLink,
	"formId":   randomToken,
	"dict":     dict,
	"list":     func(v ...string) []string { return v },
}

// money formats an API CurrencyAmount object ({amount, currency{code,decimals}}).
func money(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	cur, _ := m["currency"].(map[string]any)
	code := str(cur["code"])
	dec, _ := cur["decimals"].(json.Number)
	d, err := dec.Int64()
	if err != nil {
		d = int64(decimalsOf(code))
	}
	return minorUnits(str(m["amount"]), int(d)) + " " + code
}

// minor formats an amount in a currency's smallest unit.
func minor(amount any, code string) string {
	return minorUnits(str(amount), decimalsOf(code)) + " " + code
}

func decimalsOf(code string) int {
	if c, ok := currency.Lookup(code); ok {
		return c.Decimals
	}
	return 0
}

// minorUnits places the decimal point in an integer amount.
func minorUnits(amount string, decimals int) string {
	n, ok := new(big.Int).SetString(amount, 10)
	if !ok {
		return amount
	}
	sign := ""
	if n.Sign() < 0 {
		sign, n = "-", n.Neg(n)
	}
	s := n.String()
	if decimals <= 0 {
		return sign + s
	}
	for len(s) <= decimals {
		s = "0" + s
	}
	return sign + s[:len(s)-decimals] + "." + s[len(s)-decimals:]
}

// when formats an RFC 3339 time as UTC to the second.
func when(v any) string {
	s := str(v)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func pretty(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ""
	}
	return string(b)
}

// str renders a JSON value as text ("" for null or absent).
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "yes"
		}
		return "no"
	}
	return fmt.Sprint(v)
}

// stateClass is the CSS class of a status badge.
func stateClass(v any) string {
	switch str(v) {
	case "COMPLETED", "APPROVED", "ACTIVE", "DELIVERED", "SUCCEEDED", "VERIFIED":
		return "badge ok"
	case "FAILED", "REJECTED", "EXPIRED", "CLOSED", "DECLINED", "REFUNDED", "CANCELLED", "DEAD":
		return "badge bad"
	}
	return "badge wait"
}

// pageLink is path with q's parameters and cursor set to cursor.
func pageLink(path string, q url.Values, cursor string) string {
	out := url.Values{}
	for k, vs := range q {
		if k != "cursor" {
			out[k] = vs
		}
	}
	out.Set("cursor", cursor)
	return path + "?" + out.Encode()
}

// dict builds a map from key, value pairs (for sub-templates).
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[str(kv[i])] = kv[i+1]
	}
	return m
}
