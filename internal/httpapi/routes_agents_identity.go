package httpapi

import (
	"errors"
	"net/http"

	"github.com/paymentsd/paymentsd/internal/agents"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/kyclink"
)

func init() { routeGroups = append(routeGroups, (*Server).agentIdentityRoutes) }

// agentIdentityRoutes: the agent's customer's identity, under
// MANAGE_IDENTITY (R-AGENT-36): the same services as the platform's
// /customers/{customerId}, /customers/{customerId}/kyc-link and
// /verifications, for the agent's customer only.
func (s *Server) agentIdentityRoutes() {
	h := &agentIdentityHandlers{s: s}
	need := agents.PermManageIdentity
	s.handle(route{pattern: "GET /agents/me/customer", agent: true, agentNeeds: need, h: h.get})
	s.handle(route{pattern: "PATCH /agents/me/customer", agent: true, agentNeeds: need, h: h.update})
	s.handle(route{pattern: "POST /agents/me/kyc-link", agent: true, agentNeeds: need, h: h.kycLink})
	s.handle(route{pattern: "POST /agents/me/verifications", agent: true, agentNeeds: need, h: h.verify})
}

type agentIdentityHandlers struct{ s *Server }

func (h *agentIdentityHandlers) get(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	out, err := h.s.customerService().Get(r.Context(), c.Agent.Tenant, c.Agent.CustomerID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// update changes the customer as PATCH /customers/{customerId} does. A
// contact change tied to embedded-wallet credentials needs the customer's
// own signature, which an agent does not hold: it answers the 202 challenge
// the customer's app must sign.
func (h *agentIdentityHandlers) update(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	svc := h.s.customerService()
	var req customers.UpdateRequest
	if err := decode(r, &req, func(req customers.UpdateRequest) error { return req.Validate(h.s.db.Now(), svc.Catalog) }); err != nil {
		return err
	}
	out, err := svc.Update(r.Context(), c.Agent.Tenant, c.Agent.CustomerID, req)
	var challenged *customers.Challenged
	if errors.As(err, &challenged) {
		writeJSON(w, http.StatusAccepted, challenged.Challenge)
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *agentIdentityHandlers) kycLink(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	var req kyclink.CreateRequest
	if err := decode(r, &req, func(req kyclink.CreateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	l, err := parts.links.Create(r.Context(), c.Agent.Tenant, c.Agent.CustomerID, req, (&kycLinkHandlers{s: h.s}).publicURL(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, l)
	return nil
}

// verify submits the customer for verification; customerId is optional and
// can only be the agent's customer.
func (h *agentIdentityHandlers) verify(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	var req customers.VerificationRequest
	if err := decode(r, &req, nil); err != nil {
		return err
	}
	if req.CustomerID != nil && *req.CustomerID != c.Agent.CustomerID {
		return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+*req.CustomerID)
	}
	req.CustomerID = &c.Agent.CustomerID
	v, err := h.s.customerService().Submit(r.Context(), c.Agent.Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
