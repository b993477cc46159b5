package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/browsertest"
	"github.com/paymentsd/paymentsd/internal/carddata"
)

// cdataPageURL turns a hosted-page link the API returned into one on the
// test's listening server.
func cdataPageURL(t *testing.T, srv *httptest.Server, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL + u.RequestURI()
}

func luhn(pan string) bool {
	sum := 0
	for i := range len(pan) {
		d := int(pan[len(pan)-1-i] - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

// R-CARD-42: the reveal link opens, in a real browser, a page that shows the
// card number, expiry and CVV once; a second load is refused. The page is
// never cached, framed only by the platform's origin and runs no script;
// neither the number nor the CVV reaches the logs.
func TestCardPages_RevealInBrowser_R_CARD_42(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		card := e.cdActive(t, cust, acct)
		id := card["id"].(string)
		e.cdataOrigin(t, "https://app.example.com")
		srv := httptest.NewServer(e.srv)
		defer srv.Close()
		link := e.do("POST", "/cards/"+id+"/reveal", nil).JSON(t)["panEmbedUrl"].(string)

		b := browsertest.New(t)
		if err := chromedp.Do(b, chromedp.Navigate(cdataPageURL(t, srv, link))); err != nil {
			t.Fatal(err)
		}
		pan := strings.ReplaceAll(browserText(t, b, "#pan"), " ", "")
		expiry, cvv := browserText(t, b, "#expiry"), browserText(t, b, "#cvv")
		last4 := card["last4"].(string)
		if len(pan) != 16 || !luhn(pan) || !strings.HasSuffix(pan, last4) || !strings.HasPrefix(pan, "400000") {
			t.Fatalf("PAN shown %q (last4 %s)", pan, last4)
		}
		month, year := int(card["expMonth"].(float64)), int(card["expYear"].(float64))
		if want := twoDigits(month) + "/" + twoDigits(year%100); expiry != want {
			t.Fatalf("expiry %q, want %q", expiry, want)
		}
		// The CVV is the one computed from the card's data (never stored).
		sd, err := e.srv.CardService().SensitiveData(context.Background(), e.acTenant(), id)
		if err != nil {
			t.Fatal(err)
		}
		want, err := e.srv.cardDataService().Reveal(context.Background(), carddata.Card{Tenant: e.acTenant(), ID: id,
			PAN: sd.PAN, ExpMonth: sd.ExpiryMonth, ExpYear: sd.ExpiryYear})
		if err != nil || !regexp.MustCompile(`^[0-9]{3}$`).MatchString(cvv) || cvv != want.CVV2 {
			t.Fatalf("CVV shown %q, computed %q %v", cvv, want.CVV2, err)
		}
		// A second load: refused.
		if err := chromedp.Do(b, chromedp.Navigate(cdataPageURL(t, srv, link))); err != nil {
			t.Fatal(err)
		}
		if txt := browserText(t, b, "#refused"); !strings.Contains(txt, "already used") {
			t.Fatalf("second load shows %q", txt)
		}
		// Headers of a fresh link, then its second load over plain HTTP.
		fresh := cdataPageURL(t, srv, e.do("POST", "/cards/"+id+"/reveal", nil).JSON(t)["panEmbedUrl"].(string))
		res := httpGet(t, fresh)
		csp := res.Header.Get("Content-Security-Policy")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" ||
			!strings.Contains(csp, "frame-ancestors https://app.example.com") || strings.Contains(csp, "script-src") ||
			strings.Contains(csp, "unsafe-inline") || res.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Fatalf("reveal page %d, headers %v", res.StatusCode, res.Header)
		}
		if res := httpGet(t, fresh); res.StatusCode != http.StatusGone {
			t.Fatalf("second load over HTTP: %d", res.StatusCode)
		}
		if res := httpGet(t, srv.URL+"/card-pages/reveal?t=forged.token"); res.StatusCode != http.StatusNotFound {
			t.Fatalf("forged link: %d", res.StatusCode)
		}
		token := link[strings.Index(link, "t=")+2:]
		if logs := e.logs.String(); strings.Contains(logs, pan) || strings.Contains(logs, token) {
			t.Fatal("the logs carry the card number or the reveal link's token")
		}
	})
}

// R-CARD-43, R-CARD-45: the PIN page, in a real browser, encrypts the PIN in
// the page and submits it once; the card's PIN then verifies at the sandbox
// network's terminal and the page does not load again. R-CARD-41: three
// wrong entries block it; R-CARD-46: unblock restores it.
func TestCardPages_PINInBrowser_R_CARD_43_R_CARD_45_R_CARD_41_R_CARD_46(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		id := e.cdActive(t, cust, acct)["id"].(string)
		e.cdataOrigin(t, "https://app.example.com")
		srv := httptest.NewServer(e.srv)
		defer srv.Close()
		link := e.do("GET", "/cards/"+id+"/pin-entry-url", nil).JSON(t)["iframeUrl"].(string)

		b := browsertest.New(t)
		if err := chromedp.Do(b,
			chromedp.Navigate(cdataPageURL(t, srv, link)),
			chromedp.WaitVisible(chromedp.CSS(`#pin-entry[data-ready="true"]`)),
			chromedp.SendKeys(chromedp.CSS("#pin"), "8642"),
			chromedp.SendKeys(chromedp.CSS("#confirm"), "8642"),
			chromedp.Click(chromedp.CSS("#submit")),
		); err != nil {
			t.Fatal(err)
		}
		status, err := chromedp.Run(b, chromedp.Poll[string](`(function () {
			var s = document.getElementById("pin-status");
			return s.className === "done" ? "done" : (s.className === "error" ? "error: " + s.textContent : "");
		})()`))
		if err != nil || status != "done" {
			t.Fatalf("PIN page status %q, %v", status, err)
		}
		if c := e.cdGet(t, id); c["pinStatus"] != "OK" {
			t.Fatalf("card after the page %v", c["pinStatus"])
		}
		if ok, _ := e.cdataEnter(t, id, "8642"); !ok {
			t.Fatal("the PIN set in the browser does not verify")
		}
		if err := chromedp.Do(b, chromedp.Navigate(cdataPageURL(t, srv, link))); err != nil {
			t.Fatal(err)
		}
		if txt := browserText(t, b, "#refused"); !strings.Contains(txt, "already used") {
			t.Fatalf("second load shows %q", txt)
		}
		// Headers of a fresh PIN page.
		res := httpGet(t, cdataPageURL(t, srv, e.do("GET", "/cards/"+id+"/pin-entry-url", nil).JSON(t)["iframeUrl"].(string)))
		csp := res.Header.Get("Content-Security-Policy")
		if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" ||
			!strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
			!strings.Contains(csp, "frame-ancestors https://app.example.com") {
			t.Fatalf("PIN page %d, headers %v", res.StatusCode, res.Header)
		}
		// R-CARD-41, R-CARD-46 on the PIN the page set.
		for range 3 {
			e.cdataEnter(t, id, "1357")
		}
		if c := e.cdGet(t, id); c["pinStatus"] != "BLOCKED" {
			t.Fatalf("after three wrong entries %v", c["pinStatus"])
		}
		expect(t, e.do("POST", "/cards/"+id+"/pin/unblock", nil), http.StatusOK, "")
		if ok, st := e.cdataEnter(t, id, "8642"); !ok || st != "OK" {
			t.Fatalf("after unblock: %v %s", ok, st)
		}
	})
}

func browserText(t *testing.T, b context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(b, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("%s: %v", css, err)
	}
	return strings.TrimSpace(s)
}

func httpGet(t *testing.T, u string) *http.Response {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10%10), byte('0' + n%10)}) }

// R-CARD-43 (one successful submission per session), over plain HTTP: the
// page's submission token sets the PIN once; a second submission is 409, a
// forged token 401, and neither changes the PIN.
func TestCardPages_PINSubmissionOnce_R_CARD_43(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, acct := e.cdSetup(t)
		id := e.cdActive(t, cust, acct)["id"].(string)
		e.cdataOrigin(t, "https://app.example.com")
		srv := httptest.NewServer(e.srv)
		defer srv.Close()
		link := e.do("GET", "/cards/"+id+"/pin-entry-url", nil).JSON(t)["iframeUrl"].(string)
		res, err := http.Get(cdataPageURL(t, srv, link))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		m := regexp.MustCompile(`data-submit="([^"]+)"`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("no submission token on the page: %s", page)
		}
		submit := func(token, pin string) int {
			b, _ := json.Marshal(map[string]any{"submitToken": token, "encryptedPin": e.cdataSeal(t, id, pin)})
			r, err := http.Post(srv.URL+"/card-pages/pin", "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			return r.StatusCode
		}
		if got := submit(string(m[1]), "1470"); got != http.StatusOK {
			t.Fatalf("first submission %d", got)
		}
		if got := submit(string(m[1]), "2581"); got != http.StatusConflict {
			t.Fatalf("second submission %d", got)
		}
		if got := submit("forged.token", "2581"); got != http.StatusUnauthorized {
			t.Fatalf("forged token %d", got)
		}
		if ok, _ := e.cdataEnter(t, id, "1470"); !ok {
			t.Fatal("the first submission's PIN does not verify")
		}
	})
}
