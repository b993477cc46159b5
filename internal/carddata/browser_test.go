package carddata_test

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/paymentsd/paymentsd/internal/browsertest"
	"github.com/paymentsd/paymentsd/internal/carddata"
	"github.com/paymentsd/paymentsd/internal/store"
)

// pinPageServer serves the PIN page template and its script the way the
// HTTP layer does (assets from carddata.Assets, a CSP without inline script),
// to check in a real browser that the script's WebCrypto envelope opens in
// Go: the browser-side half of the PIN transport.
func pinPageServer(t *testing.T, s *carddata.Service, c carddata.Card) (*httptest.Server, string) {
	t.Helper()
	tok, _, err := s.MintPINEntry(ctx, c.Tenant, c.ID, "https://app.example.com")
	if err != nil {
		t.Fatal(err)
	}
	assets, _ := fs.Sub(carddata.Assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		claims, submit, err := s.OpenPINPage(r.Context(), r.URL.Query().Get("t"))
		if err != nil {
			w.WriteHeader(http.StatusGone)
			carddata.Render(w, carddata.RefusedPage{AssetBase: "/assets", Message: err.Error()})
			return
		}
		key, _ := s.TransportPublicKey(r.Context())
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors "+claims.Origin)
		carddata.Render(w, carddata.PINPage{AssetBase: "/assets", CardID: claims.CardID, TransportKey: key,
			SubmitToken: submit, Action: "/submit", Origin: claims.Origin})
	})
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			SubmitToken  string               `json:"submitToken"`
			EncryptedPin carddata.PINEnvelope `json:"encryptedPin"`
		}
		if json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		claims, err := s.Check(r.Context(), body.SubmitToken, carddata.KindPINSubmit)
		if err == nil {
			_, err = s.SubmitPIN(r.Context(), claims, c, body.EncryptedPin)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, tok
}

// The PIN page's script encrypts the PIN in the browser (WebCrypto ECDH,
// HKDF, AES-GCM over a format 4 PIN field); the service opens it, stores its
// PVV, and the PIN then verifies. A second load of the page is refused.
func TestPINPage_BrowserEnvelopeOpensInGo(t *testing.T) {
	each(t, func(t *testing.T, _ *store.DB, s *carddata.Service, clock *time.Time) {
		c := testCard("Card:browser")
		srv, tok := pinPageServer(t, s, c)
		b := browsertest.New(t)
		if err := chromedp.Do(b,
			chromedp.Navigate(srv.URL+"/page?t="+tok),
			chromedp.WaitVisible(chromedp.CSS(`#pin-entry[data-ready="true"]`)),
			chromedp.SendKeys(chromedp.CSS("#pin"), "7319"),
			chromedp.SendKeys(chromedp.CSS("#confirm"), "7319"),
			chromedp.Click(chromedp.CSS("#submit")),
		); err != nil {
			t.Fatal(err)
		}
		done, err := chromedp.Run(b, chromedp.Poll[string](`document.getElementById("pin-status").className === "done" ? "done" :
			(document.getElementById("pin-status").className === "error" ? "error: " + document.getElementById("pin-status").textContent : "")`))
		if err != nil || done != "done" {
			t.Fatalf("page status %q, %v", done, err)
		}
		if ok, _, err := s.VerifyPIN(ctx, c, seal(t, s, c.ID, "7319")); err != nil || !ok {
			t.Fatalf("the PIN set in the browser does not verify: %v %v", ok, err)
		}
		if err := chromedp.Do(b, chromedp.Navigate(srv.URL+"/page?t="+tok)); err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(b, chromedp.Text(chromedp.CSS("#refused")))
		if err != nil || !strings.Contains(text, "already used") {
			t.Fatalf("second load shows %q, %v", text, err)
		}
	})
}
