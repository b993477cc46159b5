package carddata

import (
	"embed"
	"errors"
	"html/template"
	"io"
	"strings"
)

// Assets are the hosted pages' static files (served by the HTTP layer; the
// pages have no inline script or style, so their Content-Security-Policy
// allows only 'self' for scripts).
//
//go:embed assets/pin-entry.js assets/pages.css
var Assets embed.FS

var pages = template.Must(template.New("pages").Parse(`
{{define "reveal"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer"><title>Card details</title>
<link rel="stylesheet" href="{{.AssetBase}}/pages.css">{{if .CSSURL}}
<link rel="stylesheet" href="{{.CSSURL}}">{{end}}</head>
<body><dl class="card" id="card">
<dt>Card number</dt><dd id="pan">{{.PANGroups}}</dd>
<dt>Expires</dt><dd id="expiry">{{printf "%02d/%02d" .ExpMonth .ExpYear2}}</dd>
<dt>CVV</dt><dd id="cvv">{{.CVV2}}</dd>
</dl></body></html>{{end}}
{{define "pin"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer"><title>Set your card PIN</title>
<link rel="stylesheet" href="{{.AssetBase}}/pages.css"></head>
<body><main id="pin-entry" data-card="{{.CardID}}" data-key="{{.TransportKey}}" data-submit="{{.SubmitToken}}"
 data-action="{{.Action}}" data-origin="{{.Origin}}">
<form id="pin-form" method="post" autocomplete="off">
<label>New PIN <input name="pin" id="pin" type="password" inputmode="numeric" minlength="4" maxlength="12" required></label>
<label>Repeat PIN <input name="confirm" id="confirm" type="password" inputmode="numeric" minlength="4" maxlength="12" required></label>
<button name="submit" id="submit" type="submit">Set PIN</button>
</form><p id="pin-status" role="status"></p></main>
<script src="{{.AssetBase}}/pin-entry.js"></script></body></html>{{end}}
{{define "refused"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Link not available</title>
<link rel="stylesheet" href="{{.AssetBase}}/pages.css"></head>
<body><p id="refused" class="error">{{.Message}}</p></body></html>{{end}}
`))

// RevealPage is the content of the hosted reveal page.
type RevealPage struct {
	Revealed
	AssetBase string // URL path the assets are served under
	CSSURL    string // the platform's stylesheet (checked by CheckCSSURL)
}

// PANGroups is the PAN in groups of four digits.
func (p RevealPage) PANGroups() string {
	var b strings.Builder
	for i := 0; i < len(p.PAN); i++ {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(p.PAN[i])
	}
	return b.String()
}

// ExpYear2 is the expiry year's last two digits.
func (p RevealPage) ExpYear2() int { return p.ExpYear % 100 }

// PINPage is the content of the hosted PIN page.
type PINPage struct {
	AssetBase    string
	CardID       string
	TransportKey string // Service.TransportPublicKey
	SubmitToken  string // from OpenPINPage
	Action       string // the URL the page posts its one submission to
	Origin       string // the platform origin told when the PIN is set
}

// RefusedPage is shown instead of a page whose link is invalid, expired or
// already used.
type RefusedPage struct {
	AssetBase string
	Message   string
}

// Render writes a hosted page (RevealPage, PINPage or RefusedPage).
func Render(w io.Writer, page any) error {
	switch p := page.(type) {
	case RevealPage:
		return pages.ExecuteTemplate(w, "reveal", p)
	case PINPage:
		return pages.ExecuteTemplate(w, "pin", p)
	case RefusedPage:
		return pages.ExecuteTemplate(w, "refused", p)
	}
	return errUnknownPage
}

var errUnknownPage = errors.New("carddata: unknown page")
