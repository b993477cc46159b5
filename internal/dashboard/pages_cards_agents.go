package dashboard

import (
	"net/http"
	"net/url"
	"strings"
)

// card: one card, its limits and its transactions; freeze and unfreeze.
func (h *Handler) card(w http.ResponseWriter, r *http.Request, s *session) {
	cid := r.PathValue("id")
	c, err := h.get(r, s, "/cards/"+url.PathEscape(cid))
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	txns, err := h.list(r, s, "/transactions", url.Values{"type": {"CARD"}, "cardId": {cid}, "limit": {"50"}})
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	h.show(w, r, s, "card", "cards", "Card ••••"+str(c["last4"]), map[string]any{"card": c, "transactions": txns})
}

// setCardStatus freezes (FROZEN) or unfreezes (ACTIVE) a card through
// PATCH /cards/{id}; the card's state machine decides what is allowed.
func (h *Handler) setCardStatus(w http.ResponseWriter, r *http.Request, s *session) {
	cid := r.PathValue("id")
	status := map[string]string{"freeze": "FROZEN", "unfreeze": "ACTIVE"}[r.PathValue("change")]
	if status == "" {
		h.pages.render(w, http.StatusNotFound, "error", h.view(r, s, "Not found", nil).withError("No such action"))
		return
	}
	h.act(w, r, s, http.MethodPatch, "/cards/"+url.PathEscape(cid), map[string]string{"status": status},
		"/dashboard/cards/"+url.PathEscape(cid), "Card "+strings.ToLower(status)+".")
}

// approvals lists the agent actions their policy sent for approval, oldest
// first.
func approvalsQuery(r *http.Request) url.Values {
	f := filters(r, pageSize, "agentId", "customerId")
	f.Set("sortOrder", "asc")
	return f
}

// decideAction approves (the operation runs) or rejects (nothing runs) an
// agent action waiting for approval.
func (h *Handler) decideAction(w http.ResponseWriter, r *http.Request, s *session) {
	agentID, actionID, decision := r.PathValue("agentId"), r.PathValue("actionId"), r.PathValue("decision")
	if decision != "approve" && decision != "reject" {
		h.pages.render(w, http.StatusNotFound, "error", h.view(r, s, "Not found", nil).withError("No such action"))
		return
	}
	body := map[string]any{}
	if reason := strings.TrimSpace(r.PostForm.Get("reason")); decision == "reject" && reason != "" {
		body["reason"] = reason
	}
	h.act(w, r, s, http.MethodPost, "/agents/"+url.PathEscape(agentID)+"/actions/"+url.PathEscape(actionID)+"/"+decision,
		body, "/dashboard/approvals", "Action "+decision+"d.")
}
