package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Actions are form posts that call one API route each as the session's
// token. The form's formId is the route's Idempotency-Key, so a form sent
// twice (a double click, a resend after a lost answer) acts once.

// act calls the route and answers: back to the page with the outcome, or the
// API's refusal shown on the error page (nothing changed).
func (h *Handler) act(w http.ResponseWriter, r *http.Request, s *session, method, target string, body any, fallback, done string) {
	err := h.call(r, s, method, target, body, r.PostForm.Get("formId"), nil)
	if err != nil {
		h.refused(w, r, s, err)
		return
	}
	h.redirectBack(w, r, fallback, done)
}

// refused shows the API's answer to an action it refused.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		h.fail(w, r, err)
		return
	}
	v := h.view(r, s, "Not done", nil).withError("The API refused: " + ae.Error())
	v.Form = map[string]string{"back": safeBack(r.PostForm.Get("back"))}
	h.pages.render(w, ae.Status, "error", v)
}

// decideTransaction approves or rejects an incoming payment waiting for the
// platform.
func (h *Handler) decideTransaction(w http.ResponseWriter, r *http.Request, s *session) {
	tid, decision := r.PathValue("id"), r.PathValue("decision")
	if decision != "approve" && decision != "reject" {
		h.pages.render(w, http.StatusNotFound, "error", h.view(r, s, "Not found", nil).withError("No such action"))
		return
	}
	var body any = struct{}{}
	if reason := strings.TrimSpace(r.PostForm.Get("reason")); decision == "reject" && reason != "" {
		body = map[string]string{"reason": reason}
	}
	h.act(w, r, s, http.MethodPost, "/transactions/"+url.PathEscape(tid)+"/"+decision, body,
		"/dashboard/transactions/"+url.PathEscape(tid), "Transaction "+decision+"d.")
}

// redeliver sends an event to the webhook endpoint again.
func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request, s *session) {
	eid := r.PathValue("id")
	h.act(w, r, s, http.MethodPost, "/events/"+url.PathEscape(eid)+"/redeliver", struct{}{},
		"/dashboard/events/"+url.PathEscape(eid), "Redelivery queued.")
}

// rotateSecret rotates the webhook signing secret.
func (h *Handler) rotateSecret(w http.ResponseWriter, r *http.Request, s *session) {
	h.act(w, r, s, http.MethodPost, "/webhooks/secret/rotate", struct{}{}, "/dashboard/webhooks",
		"Signing secret rotated; the previous one stays valid for its overlap.")
}

// testWebhook sends a TEST event to the configured endpoint.
func (h *Handler) testWebhook(w http.ResponseWriter, r *http.Request, s *session) {
	var out obj
	if err := h.call(r, s, http.MethodPost, "/sandbox/webhooks/test", struct{}{}, r.PostForm.Get("formId"), &out); err != nil {
		h.refused(w, r, s, err)
		return
	}
	h.redirectBack(w, r, "/dashboard/webhooks", "Test webhook sent: the endpoint answered "+str(out["response_status"])+".")
}

// createToken creates an API token and shows its secret, once.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, s *session) {
	body := map[string]any{"name": strings.TrimSpace(r.PostForm.Get("name")), "permissions": r.PostForm["permissions"]}
	var tok obj
	if err := h.call(r, s, http.MethodPost, "/tokens", body, r.PostForm.Get("formId"), &tok); err != nil {
		h.refused(w, r, s, err)
		return
	}
	h.show(w, r, s, "token_created", "tokens", "Token created", map[string]any{"token": tok})
}

// revokeToken deletes an API token.
func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, s *session) {
	h.act(w, r, s, http.MethodDelete, "/tokens/"+url.PathEscape(r.PathValue("id")), nil, "/dashboard/tokens", "Token revoked.")
}

// sandboxTool runs one sandbox operation from the sandbox page's forms.
func (h *Handler) sandboxTool(w http.ResponseWriter, r *http.Request, s *session) {
	f := r.PostForm
	switch r.PathValue("tool") {
	case "fund":
		amount, err := strconv.ParseInt(strings.TrimSpace(f.Get("amount")), 10, 64)
		if err != nil {
			h.badForm(w, r, s, "The amount must be a whole number of the currency's smallest unit (cents for USD).")
			return
		}
		h.act(w, r, s, http.MethodPost, "/sandbox/internal-accounts/"+url.PathEscape(strings.TrimSpace(f.Get("accountId")))+"/fund",
			map[string]any{"amount": amount}, "/dashboard/sandbox", "Account funded.")
	case "incoming":
		amount, err := strconv.ParseInt(strings.TrimSpace(f.Get("amount")), 10, 64)
		if err != nil {
			h.badForm(w, r, s, "The amount must be a whole number of the currency's smallest unit (cents for USD).")
			return
		}
		body := map[string]any{"accountId": strings.TrimSpace(f.Get("accountId")), "amount": amount}
		for _, k := range []string{"paymentRail", "senderName"} {
			if v := strings.TrimSpace(f.Get(k)); v != "" {
				body[k] = v
			}
		}
		h.act(w, r, s, http.MethodPost, "/sandbox/incoming-payments", body, "/dashboard/sandbox", "Incoming payment simulated.")
	case "return":
		h.act(w, r, s, http.MethodPost, "/sandbox/transactions/"+url.PathEscape(strings.TrimSpace(f.Get("transactionId")))+"/return",
			struct{}{}, "/dashboard/sandbox", "Return simulated.")
	default:
		h.pages.render(w, http.StatusNotFound, "error", h.view(r, s, "Not found", nil).withError("No such sandbox tool"))
	}
}

func (h *Handler) badForm(w http.ResponseWriter, r *http.Request, s *session, msg string) {
	h.pages.render(w, http.StatusBadRequest, "error", h.view(r, s, "Not done", nil).withError(msg))
}
