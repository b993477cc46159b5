package httpapi

import (
	"net/http"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/webhooks"
)

// Events, webhook signing keys and the sandbox test webhook. Delivery itself
// runs in webhooks.Runner, started next to the server (cmd/paymentsd).

func init() { routeGroups = append(routeGroups, (*Server).webhookRoutes) }

type webhookHandlers struct {
	svc     *webhooks.Service
	cursors *page.Codec
}

func (s *Server) webhookRoutes() {
	h := &webhookHandlers{svc: webhooks.NewService(s.db, s.log, webhooks.ServiceOptions{Guard: s.guard}), cursors: s.cursors}
	s.handle(route{pattern: "GET /events", need: auth.NeedView, query: listQuery("type", "resourceId", "createdAfter", "createdBefore"), h: h.listEvents})
	s.handle(route{pattern: "GET /events/{eventId}", need: auth.NeedView, h: h.getEvent})
	s.handle(route{pattern: "POST /events/{eventId}/redeliver", need: auth.NeedWrite, h: h.redeliver})
	// The secrets let their holder forge deliveries, so reading them needs
	// the same permission as changing them.
	s.handle(route{pattern: "GET /webhooks/signing-keys", need: auth.NeedWrite, h: h.signingKeys})
	s.handle(route{pattern: "POST /webhooks/secret/rotate", need: auth.NeedWrite, h: h.rotateSecret})
	s.handle(route{pattern: "GET /webhooks/public-key", need: auth.NeedView, h: h.publicKey})
	s.handle(route{pattern: "POST /sandbox/webhooks/test", need: auth.NeedWrite, h: h.sendTest})
}

// Filter values longer than any stored value cannot match; refusing them
// keeps absurd inputs out of the queries.
const maxEventFilterLen = 255

func (h *webhookHandlers) listEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.EventFilter{
		Type:          q.Get("type"),
		ResourceID:    q.Get("resourceId"),
		CreatedAfter:  queryTime(&f, q, "createdAfter"),
		CreatedBefore: queryTime(&f, q, "createdBefore"),
	}
	for name, v := range map[string]string{"type": filter.Type, "resourceId": filter.ResourceID} {
		if utf8.RuneCountInString(v) > maxEventFilterLen {
			f.Add(name, apierr.MaxLength, "must be at most %d characters", maxEventFilterLen)
		}
	}
	return writeListPage(w, r, h.cursors, &f, "events", func(after string, limit int) ([]webhooks.Event, int, error) {
		return h.svc.ListEvents(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(e webhooks.Event) string { return e.ID })
}

func (h *webhookHandlers) getEvent(w http.ResponseWriter, r *http.Request) error {
	ev, err := h.svc.GetEvent(r.Context(), principal(r).Tenant, r.PathValue("eventId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ev)
	return nil
}

func (h *webhookHandlers) redeliver(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	ev, err := h.svc.Redeliver(r.Context(), principal(r).Tenant, r.PathValue("eventId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, ev)
	return nil
}

func (h *webhookHandlers) signingKeys(w http.ResponseWriter, r *http.Request) error {
	keys, err := h.svc.SigningKeys(r.Context(), principal(r).Tenant)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // the body carries secrets
	writeJSON(w, http.StatusOK, keys)
	return nil
}

func (h *webhookHandlers) rotateSecret(w http.ResponseWriter, r *http.Request) error {
	var req webhooks.RotateRequest
	if err := decode(r, &req, func(req webhooks.RotateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	keys, err := h.svc.RotateSecret(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, keys)
	return nil
}

func (h *webhookHandlers) publicKey(w http.ResponseWriter, r *http.Request) error {
	pem, err := h.svc.PublicKeyPEM(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write(pem)
	return nil
}

func (h *webhookHandlers) sendTest(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	res, err := h.svc.SendTest(r.Context(), principal(r).Tenant)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
