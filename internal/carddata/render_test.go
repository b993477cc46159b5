package carddata

import (
	"strings"
	"testing"
)

func TestRender_Pages(t *testing.T) {
	var b strings.Builder
	err := Render(&b, RevealPage{Revealed: Revealed{PAN: "4000001234567899", ExpMonth: 3, ExpYear: 2029, CVV2: "042"},
		AssetBase: "/card-pages/assets", CSSURL: `https://cdn.example.com/a.css?x=1&y="2"`})
	if err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<dd id="pan">4000 0012 3456 7899</dd>`, `<dd id="expiry">03/29</dd>`, `<dd id="cvv">042</dd>`,
		`href="https://cdn.example.com/a.css?x=1&amp;y=%222%22"`} {
		if !strings.Contains(html, want) {
			t.Errorf("reveal page lacks %s:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "style=") {
		t.Error("reveal page has inline script or style")
	}
	b.Reset()
	if err := Render(&b, PINPage{AssetBase: "/a", CardID: `Card:"x"`, TransportKey: "k", SubmitToken: "s", Action: "/p",
		Origin: "https://app.example.com"}); err != nil {
		t.Fatal(err)
	}
	html = b.String()
	if !strings.Contains(html, `<script src="/a/pin-entry.js"></script>`) || !strings.Contains(html, `data-card="Card:&#34;x&#34;"`) {
		t.Errorf("PIN page:\n%s", html)
	}
	if strings.Count(html, "<script") != 1 {
		t.Error("PIN page has an inline script")
	}
	if err := Render(&b, 42); err == nil {
		t.Error("unknown page rendered")
	}
}
