package httpapi

import (
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/internal/agents"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/cards"
)

func init() { routeGroups = append(routeGroups, (*Server).agentCardRoutes) }

// agentCardRoutes: the agent's purchase cards (R-AGENT-37..43), MANAGE_CARDS,
// scoped to the cards the agent issued (another card is 404).
func (s *Server) agentCardRoutes() {
	h := &agentCardHandlers{svc: s.agentService(),
		data: &cardDataHandlers{s: s, data: s.cardDataService(), cards: s.CardService()}, s: s}
	s.handle(route{pattern: "POST /agents/me/cards", agent: true, agentNeeds: agents.PermManageCards, h: h.issue})
	s.handle(route{pattern: "GET /agents/me/cards", agent: true, agentNeeds: agents.PermManageCards, query: listQuery(), h: h.list})
	s.handle(route{pattern: "GET /agents/me/cards/{cardId}", agent: true, agentNeeds: agents.PermManageCards, h: h.get})
	s.handle(route{pattern: "PATCH /agents/me/cards/{cardId}", agent: true, agentNeeds: agents.PermManageCards, h: h.update})
	s.handle(route{pattern: "DELETE /agents/me/cards/{cardId}", agent: true, agentNeeds: agents.PermManageCards, h: h.close})
	s.handle(route{pattern: "POST /agents/me/cards/{cardId}/reveal", agent: true, agentNeeds: agents.PermManageCards, h: h.reveal})
}

type agentCardHandlers struct {
	s    *Server
	svc  *agents.Service
	data *cardDataHandlers
}

// R-AGENT-37, R-AGENT-38, R-AGENT-39: 201 with the card when issued at
// once, 202 with the PENDING_APPROVAL action when the policy asks for an
// approval.
func (h *agentCardHandlers) issue(w http.ResponseWriter, r *http.Request) error {
	var req agents.CardRequest
	if err := decode(r, &req, func(req agents.CardRequest) error { return req.Validate() }); err != nil {
		return err
	}
	card, action, err := h.svc.IssueCard(r.Context(), agentCaller(r), req)
	if err != nil {
		return err
	}
	if action != nil {
		writeJSON(w, http.StatusAccepted, action)
		return nil
	}
	writeJSON(w, http.StatusCreated, card)
	return nil
}

// R-AGENT-40: only the agent's own cards.
func (h *agentCardHandlers) list(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	var f apierr.Fields
	return writeListPage(w, r, h.s.cursors, &f, "agent-cards|"+c.Agent.ID, func(after string, limit int) ([]agents.Card, int, error) {
		return h.svc.ListCards(r.Context(), c, after, limit)
	}, func(c agents.Card) string { return c.Card.ID })
}

func (h *agentCardHandlers) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.GetCard(r.Context(), agentCaller(r), r.PathValue("cardId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// R-AGENT-41: tighten or freeze only.
func (h *agentCardHandlers) update(w http.ResponseWriter, r *http.Request) error {
	var req agents.CardUpdate
	if err := decode(r, &req, func(req agents.CardUpdate) error { return req.Validate() }); err != nil {
		return err
	}
	c, err := h.svc.UpdateCard(r.Context(), agentCaller(r), r.PathValue("cardId"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// R-AGENT-42
func (h *agentCardHandlers) close(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.CloseCard(r.Context(), agentCaller(r), r.PathValue("cardId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// R-AGENT-43: the reveal page's signed single-use URL, audited with the
// agent as actor. Never idempotent: the URL is a bearer secret.
func (h *agentCardHandlers) reveal(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	if err := decode(r, &none, nil); err != nil {
		return err
	}
	c := agentCaller(r)
	u, expires, err := h.svc.Reveal(r.Context(), c, r.PathValue("cardId"), func(card cards.Card) (string, time.Time, error) {
		return h.data.mintReveal(r, c.Agent.Tenant, card, nil)
	})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"panEmbedUrl": u, "expiresAt": expires})
	return nil
}
