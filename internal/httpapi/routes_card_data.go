package httpapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/carddata"
	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).cardDataRoutes) }

// cardDataServices holds each server's card-data service (its keys are
// opened once per node).
var cardDataServices sync.Map // *Server → *carddata.Service

func (s *Server) cardDataService() *carddata.Service {
	if svc, ok := cardDataServices.Load(s); ok {
		return svc.(*carddata.Service)
	}
	svc, _ := cardDataServices.LoadOrStore(s, carddata.New(s.db))
	return svc.(*carddata.Service)
}

// Paths of the hosted card pages (no credentials, no version prefix: the
// signed single-use token `t` is the credential).
const (
	cardPagesBase   = "/card-pages"
	cardRevealPage  = cardPagesBase + "/reveal"
	cardPINPage     = cardPagesBase + "/pin"
	cardPagesAssets = cardPagesBase + "/assets"
)

// cardDataRoutes: card data as a card program holds it (R-CARD-28,
// R-CARD-41..48): reveal, PIN entry, set-pin, unblock, tokenization and the
// hosted pages. docs/cards-data.md.
func (s *Server) cardDataRoutes() {
	cs := s.CardService()
	cs.PINStatus = carddata.CardPINStatus
	h := &cardDataHandlers{s: s, data: s.cardDataService(), cards: cs}
	s.handle(route{pattern: "POST /cards/{id}/reveal", need: auth.NeedWrite, h: h.reveal})
	s.handle(route{pattern: "GET /cards/{id}/pin-entry-url", need: auth.NeedWrite, h: h.pinEntryURL})
	s.handle(route{pattern: "GET /cards/pin-encryption-key", need: auth.NeedView, h: h.pinKey})
	s.handle(route{pattern: "POST /cards/{id}/set-pin", need: auth.NeedWrite, h: h.setPIN})
	s.handle(route{pattern: "POST /cards/{id}/pin/unblock", need: auth.NeedWrite, h: h.unblock})
	s.handle(route{pattern: "POST /cards/{id}/tokenize", need: auth.NeedWrite, h: h.tokenize})
	s.handle(route{pattern: "POST /sandbox/cards/{id}/simulate/pin_entry", need: auth.NeedWrite, h: h.simulatePINEntry})
	s.handle(route{pattern: "GET " + cardRevealPage, public: true, query: []string{"t"}, anyQuery: true, h: h.revealPage})
	s.handle(route{pattern: "GET " + cardPINPage, public: true, query: []string{"t"}, anyQuery: true, h: h.pinPage})
	s.handle(route{pattern: "POST " + cardPINPage, public: true, h: h.pinSubmit})
	s.handle(route{pattern: "GET " + cardPagesAssets + "/{name}", public: true, h: h.asset})
}

type cardDataHandlers struct {
	s     *Server
	data  *carddata.Service
	cards *cards.Service
}

// publicURL is the base of hosted pages: Options.PublicURL, or this
// request's host.
func (h *cardDataHandlers) publicURL(r *http.Request) string {
	if u := strings.TrimRight(h.s.opts.PublicURL, "/"); u != "" {
		return u
	}
	return "http://" + r.Host
}

// card returns a card of the caller's tenant with its sensitive data.
func (h *cardDataHandlers) card(r *http.Request) (cards.Card, carddata.Card, error) {
	t := principal(r).Tenant
	id := r.PathValue("id")
	c, err := h.cards.Get(r.Context(), t, id)
	if err != nil {
		return cards.Card{}, carddata.Card{}, err
	}
	sd, err := h.cards.SensitiveData(r.Context(), t, id)
	if err != nil {
		return cards.Card{}, carddata.Card{}, err
	}
	return c, carddata.Card{Tenant: t, ID: id, PAN: sd.PAN, ExpMonth: sd.ExpiryMonth, ExpYear: sd.ExpiryYear}, nil
}

// decodeChecked is decode followed by validate on success too (decode runs
// validate only alongside field errors of its own).
func decodeChecked[T any](r *http.Request, v *T, validate func(T) error) error {
	if err := decode(r, v, validate); err != nil {
		return err
	}
	return validate(*v)
}

// cardError maps the errors of package carddata to API errors.
func cardError(err error) error {
	var soon *carddata.UnblockTooSoonError
	field := map[error]string{carddata.ErrBadCSSURL: "cssUrl", carddata.ErrBadEnvelope: "encryptedPin",
		carddata.ErrBadPIN: "encryptedPin", carddata.ErrBadProviderKey: "walletProviderPublicKey"}
	switch {
	case errors.As(err, &soon):
		return apierr.New("PIN_CHANGE_REQUIRED", "The PIN was unblocked less than seven days ago; set a new PIN with POST /cards/{id}/set-pin, or unblock again after pinUnblockAvailableAt").
			WithDetails(map[string]any{"pinUnblockAvailableAt": soon.AvailableAt.UTC().Format(time.RFC3339)})
	case errors.Is(err, carddata.ErrNoPIN):
		return apierr.Conflict("The card has no PIN: set one with POST /cards/{id}/set-pin")
	case errors.Is(err, carddata.ErrPINBlocked):
		return apierr.Conflict("The card's PIN is blocked")
	}
	for e, name := range field {
		if errors.Is(err, e) {
			var f apierr.Fields
			f.Add(name, apierr.Format, "%s", strings.TrimPrefix(e.Error(), "carddata: "))
			return f.Err()
		}
	}
	return err
}

// usable refuses a card whose status does not allow the operation.
func usable(c cards.Card, op string, statuses ...string) error {
	for _, st := range statuses {
		if c.Status == st {
			return nil
		}
	}
	if c.Status == "CLOSED" {
		return apierr.New("CARD_NOT_MUTABLE", "The card is closed: "+op+" is not available for closed cards")
	}
	return apierr.Conflict("The card is " + c.Status + ": " + op + " needs a card that is " + strings.Join(statuses, " or "))
}

var revealStatuses = []string{"ACTIVE", "FROZEN", "PENDING_AUTH"}

type revealRequest struct {
	CSSURL *string `json:"cssUrl"`
}

// reveal mints a reveal page URL (R-CARD-42). Never idempotent: the URL is
// a bearer secret and must not be stored for a replay.
func (h *cardDataHandlers) reveal(w http.ResponseWriter, r *http.Request) error {
	var req revealRequest
	if err := decodeChecked(r, &req, func(req revealRequest) error {
		if req.CSSURL != nil {
			return cardError(carddata.CheckCSSURL(*req.CSSURL))
		}
		return nil
	}); err != nil {
		return err
	}
	c, _, err := h.card(r)
	if err != nil {
		return err
	}
	u, expires, err := h.mintReveal(r, principal(r).Tenant, c, req.CSSURL)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"panEmbedUrl": u, "expiresAt": expires})
	return nil
}

// mintReveal mints the hosted reveal page's signed single-use URL for a
// card that supports reveal and is in a status that allows it, with the
// given stylesheet or the platform's.
func (h *cardDataHandlers) mintReveal(r *http.Request, t store.Tenant, c cards.Card, cssURL *string) (string, time.Time, error) {
	if !c.CardCapabilities.SupportsPanReveal {
		return "", time.Time{}, apierr.InvalidInput("Reveal is not available for this card: its cardCapabilities.supportsPanReveal is false")
	}
	if err := usable(c, "reveal", revealStatuses...); err != nil {
		return "", time.Time{}, err
	}
	css := ""
	if cssURL != nil {
		css = *cssURL
	} else if cfg, err := h.s.config.Get(r.Context(), t); err == nil && cfg.CardConfigs.PanRevealCssUrl != nil {
		css = *cfg.CardConfigs.PanRevealCssUrl
	}
	tok, claims, err := h.data.MintReveal(r.Context(), t, c.ID, css)
	if err != nil {
		return "", time.Time{}, cardError(err)
	}
	return h.publicURL(r) + cardRevealPage + "?t=" + url.QueryEscape(tok), claims.ExpiresAt(), nil
}

// pinEntryURL mints a PIN page URL (R-CARD-43, R-CARD-44).
func (h *cardDataHandlers) pinEntryURL(w http.ResponseWriter, r *http.Request) error {
	t := principal(r).Tenant
	cfg, err := h.s.config.Get(r.Context(), t)
	if err != nil {
		return err
	}
	c, err := h.cards.Get(r.Context(), t, r.PathValue("id"))
	if err != nil {
		return err
	}
	if cfg.CardConfigs.PinTargetOrigin == nil || *cfg.CardConfigs.PinTargetOrigin == "" {
		return apierr.Conflict("Set cardConfigs.pinTargetOrigin with PATCH /config first: the PIN page may be framed only by that origin")
	}
	if err := usable(c, "setting a PIN", revealStatuses...); err != nil {
		return err
	}
	tok, claims, err := h.data.MintPINEntry(r.Context(), t, c.ID, *cfg.CardConfigs.PinTargetOrigin)
	if err != nil {
		return cardError(err)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"iframeUrl": h.publicURL(r) + cardPINPage + "?t=" + url.QueryEscape(tok),
		"expiresAt": claims.ExpiresAt()})
	return nil
}

// pinKey is the key clients encrypt PIN blocks to (docs/cards-data.md).
func (h *cardDataHandlers) pinKey(w http.ResponseWriter, r *http.Request) error {
	key, err := h.data.TransportPublicKey(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"publicKey": key, "algorithm": "ECDH-P256-HKDF-SHA256-A256GCM",
		"info": carddata.PINEnvelopeInfo, "pinBlockFormat": "ISO-9564-1-FORMAT-4-PIN-FIELD"})
	return nil
}

type setPINRequest struct {
	EncryptedPin *carddata.PINEnvelope `json:"encryptedPin"`
}

func requireEnvelope(req setPINRequest) error {
	if req.EncryptedPin == nil {
		var f apierr.Fields
		f.Add("encryptedPin", apierr.Required, "is required")
		return f.Err()
	}
	return nil
}

// setPIN sets the PIN from a client-encrypted PIN block (R-CARD-45).
func (h *cardDataHandlers) setPIN(w http.ResponseWriter, r *http.Request) error {
	var req setPINRequest
	if err := decodeChecked(r, &req, requireEnvelope); err != nil {
		return err
	}
	c, sd, err := h.card(r)
	if err != nil {
		return err
	}
	if err := usable(c, "setting a PIN", revealStatuses...); err != nil {
		return err
	}
	if _, err := h.data.SetPIN(r.Context(), sd, *req.EncryptedPin); err != nil {
		return cardError(err)
	}
	return h.writeCard(w, r, c.ID)
}

// unblock restores the existing PIN (R-CARD-46, R-CARD-47).
func (h *cardDataHandlers) unblock(w http.ResponseWriter, r *http.Request) error {
	t := principal(r).Tenant
	c, err := h.cards.Get(r.Context(), t, r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := usable(c, "unblocking the PIN", revealStatuses...); err != nil {
		return err
	}
	if _, err := h.data.Unblock(r.Context(), t, c.ID); err != nil {
		return cardError(err)
	}
	return h.writeCard(w, r, c.ID)
}

func (h *cardDataHandlers) writeCard(w http.ResponseWriter, r *http.Request, id string) error {
	c, err := h.cards.Get(r.Context(), principal(r).Tenant, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

type tokenizeRequest struct {
	WalletProvider          string `json:"walletProvider"`
	WalletProviderPublicKey string `json:"walletProviderPublicKey"`
	Nonce                   string `json:"nonce"`
	DeviceID                string `json:"deviceId"`
}

var walletProviders = []string{"APPLE_PAY", "GOOGLE_PAY", "SAMSUNG_PAY"}

func (req tokenizeRequest) validate() error {
	var f apierr.Fields
	if !slices.Contains(walletProviders, req.WalletProvider) {
		f.Add("walletProvider", apierr.Enum, "must be one of %s", strings.Join(walletProviders, ", "))
	}
	if req.WalletProviderPublicKey == "" {
		f.Add("walletProviderPublicKey", apierr.Required, "is required")
	} else if _, err := carddata.ParseProviderKey(req.WalletProviderPublicKey); err != nil {
		f.Add("walletProviderPublicKey", apierr.Format, "must be an uncompressed P-256 public key in base64")
	}
	if len(req.Nonce) > 256 {
		f.Add("nonce", apierr.MaxLength, "must be at most 256 characters")
	}
	if len(req.DeviceID) > 256 {
		f.Add("deviceId", apierr.MaxLength, "must be at most 256 characters")
	}
	return f.Err()
}

// tokenize seals a provisioning payload for a wallet provider (R-CARD-48).
// Never idempotent: the payload must not be stored.
func (h *cardDataHandlers) tokenize(w http.ResponseWriter, r *http.Request) error {
	var req tokenizeRequest
	if err := decodeChecked(r, &req, tokenizeRequest.validate); err != nil {
		return err
	}
	c, sd, err := h.card(r)
	if err != nil {
		return err
	}
	if !c.CardCapabilities.SupportsDigitalWalletTokenization {
		return apierr.InvalidInput("Tokenization is not available for this card: its cardCapabilities.supportsDigitalWalletTokenization is false")
	}
	if err := usable(c, "tokenization", "ACTIVE"); err != nil {
		return err
	}
	p, err := h.data.Tokenize(r.Context(), sd, carddata.ProvisioningRequest{ProviderPublicKey: req.WalletProviderPublicKey,
		Nonce: req.Nonce, DeviceID: req.DeviceID})
	if err != nil {
		return cardError(err)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"cardId": c.ID, "walletProvider": req.WalletProvider,
		"provisioningId": p.ProvisioningID, "ephemeralPublicKey": p.EphemeralPublicKey,
		"encryptedData": p.EncryptedData, "expiresAt": p.ExpiresAt})
	return nil
}

// simulatePINEntry is the sandbox card network's PIN check at a terminal:
// the entered PIN (client-encrypted, as for set-pin) is verified against the
// card's PVV and counted (R-CARD-41: three consecutive wrong entries block).
func (h *cardDataHandlers) simulatePINEntry(w http.ResponseWriter, r *http.Request) error {
	var req setPINRequest
	if err := decodeChecked(r, &req, requireEnvelope); err != nil {
		return err
	}
	c, sd, err := h.card(r)
	if err != nil {
		return err
	}
	ok, st, err := h.data.VerifyPIN(r.Context(), sd, *req.EncryptedPin)
	if errors.Is(err, carddata.ErrPINBlocked) {
		ok, st, err = false, carddata.PINState{Status: carddata.PINBlocked}, nil
	}
	if err != nil {
		return cardError(err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"cardId": c.ID, "pinVerified": ok, "pinStatus": string(st.Status)})
	return nil
}
