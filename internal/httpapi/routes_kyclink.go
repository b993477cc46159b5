package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/formdata"
	"github.com/paymentsd/paymentsd/internal/kyclink"
)

func init() { routeGroups = append(routeGroups, (*Server).kycLinkRoutes) }

// kycLinkRoutes: hosted KYC links (R-CUST-33..35) and the public page
// behind them, served without credentials or version prefix: the link's
// token (query parameter `token`) is the credential.
func (s *Server) kycLinkRoutes() {
	h := &kycLinkHandlers{s: s}
	s.handle(route{pattern: "POST /customers/{customerId}/kyc-link", need: auth.NeedWrite, idempotent: true, h: h.create})
	// Pages people open from a link: parameters a mail client or tracker
	// adds to it are ignored (anyQuery), only token is read.
	s.handle(route{pattern: "GET /kyc", public: true, query: []string{"token"}, anyQuery: true, h: h.page}) // kyclink.PagePath
	s.handle(route{pattern: "POST /kyc", public: true, query: []string{"token"}, anyQuery: true, h: h.submit})
}

type kycLinkHandlers struct{ s *Server }

// publicURL is the base of hosted links: Options.PublicURL, or this
// request's host.
func (h *kycLinkHandlers) publicURL(r *http.Request) string {
	if u := strings.TrimRight(h.s.opts.PublicURL, "/"); u != "" {
		return u
	}
	return "http://" + r.Host
}

func (h *kycLinkHandlers) create(w http.ResponseWriter, r *http.Request) error {
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	var req kyclink.CreateRequest
	if err := decode(r, &req, func(req kyclink.CreateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	l, err := parts.links.Create(r.Context(), principal(r).Tenant, r.PathValue("customerId"), req, h.publicURL(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, l)
	return nil
}

// writePage sends one of the hosted pages. The page holds personal data and
// its URL a credential: nothing is cached, framed, or sent as a referrer.
func (h *kycLinkHandlers) writePage(w http.ResponseWriter, r *http.Request, status int, name string, data any) error {
	body, err := kyclink.Render(name, data)
	if err != nil {
		return err
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return nil
}

func (h *kycLinkHandlers) message(w http.ResponseWriter, r *http.Request, status int, title, text string) error {
	return h.writePage(w, r, status, "message", kyclink.MessageView{Title: title, Text: text})
}

func (h *kycLinkHandlers) internal(w http.ResponseWriter, r *http.Request, err error) error {
	h.s.log.LogAttrs(r.Context(), slog.LevelError, "kyc page failed",
		slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
	return h.message(w, r, http.StatusInternalServerError, "Something went wrong",
		"We could not process this page. Please try again in a few minutes.")
}

// closed answers a link that cannot be used, or reports false.
func (h *kycLinkHandlers) closed(w http.ResponseWriter, r *http.Request, sess kyclink.Session) (bool, error) {
	switch sess.State {
	case kyclink.StateUnknown:
		return true, h.message(w, r, http.StatusNotFound, "Link not found",
			"This verification link is not valid. Check that you opened the whole link, or ask the service that sent it for a new one.")
	case kyclink.StateUsed:
		return true, h.message(w, r, http.StatusGone, "This link has already been used",
			"Each verification link works once, and this one has been used. If you still need to verify, ask the service that sent it for a new link.")
	case kyclink.StateExpired:
		return true, h.message(w, r, http.StatusGone, "This link has expired",
			"Verification links are valid for a limited time, and this one has expired. Ask the service that sent it for a new link.")
	}
	if st := sess.Customer.Status(); customers.Final(st) {
		return true, h.message(w, r, http.StatusOK, "Verification already complete",
			"There is nothing more to do: your verification is complete (status "+st+").")
	}
	return false, nil
}

func (h *kycLinkHandlers) open(w http.ResponseWriter, r *http.Request) (*fileParts, kyclink.Session, bool, error) {
	parts, err := h.s.fileParts()
	if err != nil {
		return nil, kyclink.Session{}, true, h.internal(w, r, err)
	}
	sess, err := parts.links.Open(r.Context(), r.URL.Query().Get("token"))
	if err != nil {
		return nil, kyclink.Session{}, true, h.internal(w, r, err)
	}
	done, err := h.closed(w, r, sess)
	return parts, sess, done, err
}

func (h *kycLinkHandlers) form(w http.ResponseWriter, r *http.Request, status int, sess kyclink.Session,
	values map[string]string, msgs []kyclink.Message) error {
	typ := sess.Customer.CustomerType
	return h.writePage(w, r, status, "form", kyclink.FormView{
		Business: typ == customers.Business, Sandbox: sess.Sandbox(), Nonce: sess.Nonce,
		ExpiresAt: sess.Link.ExpiresAt.Format("2006-01-02 15:04 UTC"), Fields: kyclink.DataFields(typ),
		DocumentTypes: kyclink.DocumentTypes(typ), Values: values, Messages: msgs,
		MaxMB: customers.MaxDocumentBytes / 1_000_000,
	})
}

func (h *kycLinkHandlers) page(w http.ResponseWriter, r *http.Request) error {
	_, sess, done, err := h.open(w, r)
	if done {
		return err
	}
	values := kyclink.Values(sess.Customer)
	if n := values["nationality"]; n != "" {
		values[kyclink.FieldDocumentCountry] = n
	} else if c := values["address.country"]; c != "" {
		values[kyclink.FieldDocumentCountry] = c
	}
	return h.form(w, r, http.StatusOK, sess, values, nil)
}

// labels names the form's inputs in messages.
func labels(typ string) map[string]string {
	m := map[string]string{kyclink.FieldDocumentType: "Document type", kyclink.FieldSide: "Side",
		kyclink.FieldDocumentCountry: "Country that issued the document", kyclink.FieldDocumentNumber: "Document number",
		kyclink.FieldFile: "File", "documentHolder": "Document"}
	for _, f := range kyclink.DataFields(typ) {
		m[f.Name] = f.Label
	}
	return m
}

func (h *kycLinkHandlers) submit(w http.ResponseWriter, r *http.Request) error {
	parts, sess, done, err := h.open(w, r)
	if done {
		return err
	}
	ctx := r.Context()
	typ := sess.Customer.CustomerType
	allowed := []string{kyclink.FieldNonce, kyclink.FieldDocumentType, kyclink.FieldSide, kyclink.FieldDocumentCountry,
		kyclink.FieldDocumentNumber}
	for _, f := range kyclink.DataFields(typ) {
		allowed = append(allowed, f.Name)
	}
	body := http.MaxBytesReader(w, r.Body, documentMaxBody)
	var stored customers.StoredFile
	values, fields, err := multipartForm(r, body, allowed, kyclink.FieldFile, func(p *formdata.Part) error {
		f, err := parts.docs.StoreFile(ctx, p, p.FileName())
		if err == nil {
			stored = f
		}
		return err
	})
	if err != nil {
		parts.docs.Discard(ctx, stored)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return h.message(w, r, http.StatusRequestEntityTooLarge, "The file is too large",
				"The form could not be sent because it is too large. Go back and choose a file of at most 10 MB.")
		}
		if _, ok := apierr.From(err); !ok {
			return h.internal(w, r, err)
		}
		return h.message(w, r, http.StatusBadRequest, "The form could not be read",
			"Go back to the verification page, fill in the form and submit it again.")
	}
	if !sess.CheckNonce(values[kyclink.FieldNonce]) {
		parts.docs.Discard(ctx, stored)
		return h.message(w, r, http.StatusForbidden, "Please reload the page",
			"This form did not come from the verification page, or it is out of date. Reload the page and submit it again.")
	}
	delete(values, kyclink.FieldNonce)

	// Everything the page asks for is needed for a complete packet.
	for _, f := range kyclink.DataFields(typ) {
		if f.Required && strings.TrimSpace(values[f.Name]) == "" {
			fields.Add(f.Name, apierr.Required, "is required")
		}
	}
	if strings.TrimSpace(values[kyclink.FieldDocumentType]) == "" {
		fields.Add(kyclink.FieldDocumentType, apierr.Required, "is required")
	} else if !slices.Contains(kyclink.DocumentTypes(typ), strings.TrimSpace(values[kyclink.FieldDocumentType])) {
		fields.Add(kyclink.FieldDocumentType, apierr.Enum, "must be one of %s", strings.Join(kyclink.DocumentTypes(typ), ", "))
	}
	if strings.TrimSpace(values[kyclink.FieldDocumentCountry]) == "" {
		fields.Add(kyclink.FieldDocumentCountry, apierr.Required, "is required")
	}
	svc := parts.links.Customers
	now := h.s.db.Now()
	update := kyclink.Update(typ, values)
	doc := kyclink.Document(values)
	customerID := sess.Customer.ID
	doc.DocumentHolder = &customerID
	verr := apierr.MergeFields(fields.Err(), apierr.MergeFields(update.Validate(now, svc.Catalog), doc.Validate(now)))
	if verr == nil {
		verr = customers.DocumentRejection(sess.Link.Tenant, doc.DocumentNumber)
	}
	if verr != nil {
		parts.docs.Discard(ctx, stored)
		return h.refused(w, r, sess, values, verr)
	}

	res, err := parts.links.Complete(ctx, sess, kyclink.Submission{Update: update, Document: doc, File: stored})
	if errors.Is(err, kyclink.ErrLinkUsed) {
		return h.message(w, r, http.StatusGone, "This link has already been used",
			"Each verification link works once, and this one has been used. If you still need to verify, ask the service that sent it for a new link.")
	}
	if err != nil {
		ae, ok := apierr.From(err)
		switch {
		case !ok || ae.Status >= 500:
			return h.internal(w, r, err)
		case len(apierr.FieldList(err)) > 0 || slices.Contains(customers.DocumentRejections, ae.Code):
			return h.refused(w, r, sess, values, err)
		}
		// The API's reasons are written for developers; the person gets a
		// plain explanation (the reason is in the platform's API answers).
		h.s.log.Info("kyc page submission refused", "request_id", requestID(ctx), "code", ae.Code)
		return h.message(w, r, ae.Status, "Verification could not be submitted",
			"Your information cannot be submitted right now. Please contact the service that sent you this link.")
	}
	return h.writePage(w, r, http.StatusOK, "result", kyclink.NewResultView(res, sess.Sandbox()))
}

// refused shows the form again for invalid fields or a refused document.
func (h *kycLinkHandlers) refused(w http.ResponseWriter, r *http.Request, sess kyclink.Session, values map[string]string, err error) error {
	if ae, ok := apierr.From(err); ok && slices.Contains(customers.DocumentRejections, ae.Code) {
		var f apierr.Fields
		f.Add(kyclink.FieldFile, ae.Code, "was refused (%s); upload a clearer or another document",
			strings.ToLower(strings.ReplaceAll(ae.Code, "_", " ")))
		err = f.Err()
	}
	return h.invalid(w, r, sess, values, err)
}

// invalid shows the form again with what the person entered and every
// problem found.
func (h *kycLinkHandlers) invalid(w http.ResponseWriter, r *http.Request, sess kyclink.Session, values map[string]string, err error) error {
	names := labels(sess.Customer.CustomerType)
	var msgs []kyclink.Message
	for _, fe := range apierr.FieldList(err) {
		field := kyclink.FormField(fe.Field)
		label := names[field]
		if label == "" {
			label = field
		}
		msgs = append(msgs, kyclink.Message{Field: field, Label: label, Text: fe.Message})
	}
	return h.form(w, r, http.StatusBadRequest, sess, values, msgs)
}
