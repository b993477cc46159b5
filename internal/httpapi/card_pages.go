package httpapi

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/carddata"
	"github.com/paymentsd/paymentsd/internal/store"
)

// The hosted card pages (docs/cards-data.md): the reveal page and the PIN
// page, reached through signed single-use URLs. Nothing on them is cached,
// sent as a referrer, or framed by anyone but the platform's origin; they run
// no inline script.

// pageHeaders sets the headers of a hosted card page. frameAncestors is the
// only origin that may frame it ("" for none).
func pageHeaders(w http.ResponseWriter, csp, frameAncestors string) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Pragma", "no-cache")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	if frameAncestors == "" {
		frameAncestors = "'none'"
		hd.Set("X-Frame-Options", "DENY")
	}
	hd.Set("Content-Security-Policy", csp+"; base-uri 'none'; form-action 'none'; frame-ancestors "+frameAncestors)
}

// refused shows the page of a link that cannot be used.
func (h *cardDataHandlers) refused(w http.ResponseWriter, err error) error {
	status, msg := http.StatusNotFound, "This link is not valid."
	switch {
	case errors.Is(err, carddata.ErrTokenUsed):
		status, msg = http.StatusGone, "This link was already used. Each link shows the page once: ask for a new one."
	case errors.Is(err, carddata.ErrTokenExpired):
		status, msg = http.StatusGone, "This link has expired. Ask for a new one."
	case errors.Is(err, store.ErrNotFound), apierrStatus(err) == http.StatusNotFound:
		status, msg = http.StatusNotFound, "This card is not available."
	case apierrStatus(err) != 0:
		status, msg = http.StatusConflict, "This card's details are not available now."
	case !errors.Is(err, carddata.ErrTokenInvalid):
		status, msg = http.StatusInternalServerError, "Something went wrong. Please try again later."
	}
	pageHeaders(w, "default-src 'none'; style-src 'self'", "")
	w.WriteHeader(status)
	return carddata.Render(w, carddata.RefusedPage{AssetBase: cardPagesAssets, Message: msg})
}

func apierrStatus(err error) int {
	if e, ok := apierr.From(err); ok {
		return e.Status
	}
	return 0
}

// frameOrigin is the platform origin allowed to frame its pages.
func (h *cardDataHandlers) frameOrigin(r *http.Request, t store.Tenant) string {
	cfg, err := h.s.config.Get(r.Context(), t)
	if err != nil || cfg.CardConfigs.PinTargetOrigin == nil {
		return ""
	}
	return *cfg.CardConfigs.PinTargetOrigin
}

// revealPage shows PAN, expiry and CVV2 once (R-CARD-42).
func (h *cardDataHandlers) revealPage(w http.ResponseWriter, r *http.Request) error {
	claims, err := h.data.Use(r.Context(), r.URL.Query().Get("t"), carddata.KindReveal)
	if err != nil {
		return h.refused(w, err)
	}
	t := claims.Tenant()
	sd, err := h.cards.SensitiveData(r.Context(), t, claims.CardID)
	if err == nil && sd.Status == "CLOSED" {
		err = apierr.Conflict("closed")
	}
	if err != nil {
		return h.refused(w, err)
	}
	shown, err := h.data.Reveal(r.Context(), carddata.Card{Tenant: t, ID: claims.CardID, PAN: sd.PAN,
		ExpMonth: sd.ExpiryMonth, ExpYear: sd.ExpiryYear})
	if err != nil {
		return h.refused(w, err)
	}
	style := "'self'"
	if u, err := url.Parse(claims.CSSURL); err == nil && claims.CSSURL != "" {
		style += " " + u.Scheme + "://" + u.Host
	}
	pageHeaders(w, "default-src 'none'; style-src "+style, h.frameOrigin(r, t))
	h.s.log.LogAttrs(r.Context(), slog.LevelInfo, "card details revealed", slog.String("card_id", claims.CardID),
		slog.String("platform_id", t.PlatformID), slog.String("request_id", requestID(r.Context())))
	return carddata.Render(w, carddata.RevealPage{Revealed: shown, AssetBase: cardPagesAssets, CSSURL: claims.CSSURL})
}

// pinPage shows the PIN form once; its script encrypts the PIN (R-CARD-43).
func (h *cardDataHandlers) pinPage(w http.ResponseWriter, r *http.Request) error {
	claims, submit, err := h.data.OpenPINPage(r.Context(), r.URL.Query().Get("t"))
	if err != nil {
		return h.refused(w, err)
	}
	key, err := h.data.TransportPublicKey(r.Context())
	if err != nil {
		return h.refused(w, err)
	}
	pageHeaders(w, "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'", claims.Origin)
	return carddata.Render(w, carddata.PINPage{AssetBase: cardPagesAssets, CardID: claims.CardID, TransportKey: key,
		SubmitToken: submit, Action: cardPINPage, Origin: claims.Origin})
}

// pinSubmitMaxBody bounds the PIN page's submission.
const pinSubmitMaxBody = 8 << 10

type pinSubmitRequest struct {
	SubmitToken  string                `json:"submitToken"`
	EncryptedPin *carddata.PINEnvelope `json:"encryptedPin"`
}

// pinSubmit takes the PIN page's one submission (R-CARD-45 through the
// hosted page).
func (h *cardDataHandlers) pinSubmit(w http.ResponseWriter, r *http.Request) error {
	// A public route: its body is read here, bounded.
	body, err := readBody(w, r, pinSubmitMaxBody, false)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return apierr.Newf(apierr.CodePayloadTooLarge, "Request body exceeds %d bytes", pinSubmitMaxBody)
	case err != nil:
		return apierr.InvalidInput("Could not read the request body")
	}
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	var req pinSubmitRequest
	if err := decodeChecked(r, &req, func(req pinSubmitRequest) error {
		return requireEnvelope(setPINRequest{EncryptedPin: req.EncryptedPin})
	}); err != nil {
		return err
	}
	claims, err := h.data.Check(r.Context(), req.SubmitToken, carddata.KindPINSubmit)
	if err != nil {
		return apierr.New("UNAUTHORIZED", "The PIN page's submission token is not valid or has expired: open a new PIN page")
	}
	t := claims.Tenant()
	sd, err := h.cards.SensitiveData(r.Context(), t, claims.CardID)
	if err != nil {
		return err
	}
	if sd.Status == "CLOSED" {
		return apierr.New("CARD_NOT_MUTABLE", "The card is closed: its PIN cannot be set")
	}
	st, err := h.data.SubmitPIN(r.Context(), claims, carddata.Card{Tenant: t, ID: claims.CardID, PAN: sd.PAN,
		ExpMonth: sd.ExpiryMonth, ExpYear: sd.ExpiryYear}, *req.EncryptedPin)
	if errors.Is(err, carddata.ErrTokenUsed) {
		return apierr.Conflict("This PIN page was already used to set the PIN: open a new PIN page")
	}
	if err != nil {
		return cardError(err)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"cardId": claims.CardID, "pinStatus": string(st.Status)})
	return nil
}

// asset serves the pages' script and stylesheet.
func (h *cardDataHandlers) asset(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	body, err := fs.ReadFile(carddata.Assets, path.Join("assets", path.Base(name)))
	if err != nil || path.Base(name) != name {
		return apierr.NotFound("NOT_FOUND", "Asset "+name)
	}
	ct := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}[path.Ext(name)]
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, err = w.Write(body)
	return err
}
