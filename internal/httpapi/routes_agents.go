package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/internal/agents"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/wallets"
)

func init() { routeGroups = append(routeGroups, (*Server).agentRoutes) }

// agentRoutes: agents, their policies, installation and approvals with
// platform credentials (R-AGENT-01..22), and the agent's own API under
// `Authorization: Bearer` (R-AUTH-07, R-AUTH-08, R-AGENT-24..36). Purchase
// cards (/agents/me/cards) are in routes_agents_cards.go.
func (s *Server) agentRoutes() {
	h := &agentHandlers{s: s, svc: s.agentService()}
	s.handle(route{pattern: "POST /agents", need: auth.NeedWrite, idempotent: true, storedBody: withoutDeviceCode, h: h.create})
	s.handle(route{pattern: "GET /agents", need: auth.NeedView, query: listQuery("customerId", "isPaused", "isConnected", "createdAfter", "createdBefore", "updatedAfter", "updatedBefore"), h: h.list})
	s.handle(route{pattern: "GET /agents/{agentId}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "PATCH /agents/{agentId}", need: auth.NeedWrite, h: h.update})
	s.handle(route{pattern: "DELETE /agents/{agentId}", need: auth.NeedWrite, h: h.delete})
	s.handle(route{pattern: "PATCH /agents/{agentId}/policy", need: auth.NeedWrite, h: h.updatePolicy})
	s.handle(route{pattern: "POST /agents/{agentId}/device-codes", need: auth.NeedWrite, h: h.newCode})
	s.handle(route{pattern: "POST /agents/device-codes/status", need: auth.NeedView, h: h.codeStatus})
	s.handle(route{pattern: "POST /agents/device-codes/redeem", open: true, h: h.redeem})
	s.handle(route{pattern: "GET /agents/approvals", need: auth.NeedView, query: listQuery("agentId", "customerId", "startDate", "endDate", "sortOrder"), h: h.approvals})
	s.handle(route{pattern: "POST /agents/{agentId}/actions/{actionId}/approve", need: auth.NeedMoney, h: h.approve})
	s.handle(route{pattern: "POST /agents/{agentId}/actions/{actionId}/reject", need: auth.NeedWrite, h: h.reject})
	s.agentOwnRoutes(h)
}

// agentServices holds each server's agents service.
var agentServices sync.Map // *Server → *agents.Service

func (s *Server) agentService() *agents.Service {
	if svc, ok := agentServices.Load(s); ok {
		return svc.(*agents.Service)
	}
	fresh := agents.New(s.db, s.quoteService(), s.walletService(), s.log)
	fresh.Convert = s.convertAmount
	fresh.External = s.chainAccount
	fresh.Cards = s.CardService()
	svc, _ := agentServices.LoadOrStore(s, fresh)
	return svc.(*agents.Service)
}

// AgentService exposes the server's agents service (tests drive its
// expiry by hand).
func (s *Server) AgentService() *agents.Service { return s.agentService() }

// convertAmount converts an amount between currencies at the engine's mid
// rate, rounding up: what a limit or threshold is compared with.
func (s *Server) convertAmount(ctx context.Context, env string, amount int64, from, to string) (int64, error) {
	fc, ok1 := currency.Lookup(from)
	tc, ok2 := currency.Lookup(to)
	if !ok1 || !ok2 {
		return 0, apierr.New("QUOTE_RATE_UNAVAILABLE", "No exchange rate between "+from+" and "+to)
	}
	q, err := s.pricingEngine(env).Rates.Rate(ctx, to, from)
	if err != nil {
		return 0, apierr.New("QUOTE_RATE_UNAVAILABLE", "No exchange rate between "+from+" and "+to+" to compare with the agent's policy")
	}
	v := decimal.NewFromInt(amount).Mul(q.Mid).Shift(int32(tc.Decimals - fc.Decimals)).Ceil()
	if v.GreaterThan(decimal.NewFromInt(1 << 62)) {
		return 1 << 62, nil
	}
	return v.IntPart(), nil
}

// RunAgentActionExpiry fails PENDING_APPROVAL actions whose time passed,
// every interval until ctx ends (every node may run it).
func (s *Server) RunAgentActionExpiry(ctx context.Context, interval time.Duration) {
	s.sweep(ctx, interval, "agent action expiry", s.agentService().ExpireDue)
}

// withoutDeviceCode keeps a replayed POST /agents answer without its device
// code, which is never stored in clear.
func withoutDeviceCode(body []byte) []byte {
	var c map[string]json.RawMessage
	if err := json.Unmarshal(body, &c); err != nil {
		return []byte("{}")
	}
	delete(c, "deviceCode")
	out, err := json.Marshal(c)
	if err != nil {
		return []byte("{}")
	}
	return out
}

type agentCtxKey struct{}

// authenticateAgent checks the bearer token of an agent route (R-AUTH-07)
// and the policy permission it needs (R-AGENT-24).
func (s *Server) authenticateAgent(w http.ResponseWriter, r *http.Request, rt route) (context.Context, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="paymentsd-agents"`)
		return nil, apierr.Unauthorized()
	}
	c, err := s.agentService().Authenticate(r.Context(), strings.TrimSpace(token))
	if err != nil {
		if e, ok := apierr.From(err); ok && e.Code == apierr.CodeUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="paymentsd-agents"`)
		}
		return nil, err
	}
	// The agent's principal holds no platform permission: nothing but
	// agent routes ever accepts it.
	p := auth.Principal{TokenID: "agent|" + c.Agent.ID, Tenant: c.Agent.Tenant}
	if err := s.admit(w, r, p); err != nil {
		return nil, err
	}
	if rt.agentNeeds != "" {
		if err := c.Require(rt.agentNeeds); err != nil {
			return nil, err
		}
	}
	ctx := auth.WithPrincipal(r.Context(), p)
	return context.WithValue(ctx, agentCtxKey{}, c), nil
}

// agentCaller returns the authenticated agent.
func agentCaller(r *http.Request) agents.Caller {
	c, _ := r.Context().Value(agentCtxKey{}).(agents.Caller)
	return c
}

// remoteKey names the caller of an unauthenticated request for rate
// limiting: its address without the port.
func remoteKey(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

type agentHandlers struct {
	s   *Server
	svc *agents.Service
}

func (h *agentHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req agents.CreateRequest
	if err := decode(r, &req, func(req agents.CreateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	created(r)
	out, err := h.svc.Create(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// queryBool reads an optional true/false filter.
func queryBool(f *apierr.Fields, q map[string][]string, name string) *bool {
	switch first(q, name) {
	case "":
		return nil
	case "true":
		v := true
		return &v
	case "false":
		v := false
		return &v
	}
	f.Add(name, apierr.Type, "must be true or false")
	return nil
}

func (h *agentHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.AgentFilter{CustomerID: first(q, "customerId"), Paused: queryBool(&f, q, "isPaused"),
		Connected: queryBool(&f, q, "isConnected"), CreatedAfter: queryTime(&f, q, "createdAfter"),
		CreatedBefore: queryTime(&f, q, "createdBefore"), UpdatedAfter: queryTime(&f, q, "updatedAfter"),
		UpdatedBefore: queryTime(&f, q, "updatedBefore")}
	return writeListPage(w, r, h.s.cursors, &f, "agents", func(after string, limit int) ([]agents.Agent, int, error) {
		return h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(a agents.Agent) string { return a.ID })
}

func (h *agentHandlers) get(w http.ResponseWriter, r *http.Request) error {
	a, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("agentId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *agentHandlers) update(w http.ResponseWriter, r *http.Request) error {
	var req agents.UpdateRequest
	if err := decode(r, &req, func(req agents.UpdateRequest) error { return req.Validate() }); err != nil {
		return err
	}
	a, err := h.svc.Update(r.Context(), principal(r).Tenant, r.PathValue("agentId"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *agentHandlers) delete(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.Delete(r.Context(), principal(r).Tenant, r.PathValue("agentId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *agentHandlers) updatePolicy(w http.ResponseWriter, r *http.Request) error {
	var req agents.PolicyIn
	if err := decode(r, &req, func(req agents.PolicyIn) error { return req.Validate("", false) }); err != nil {
		return err
	}
	a, err := h.svc.UpdatePolicy(r.Context(), principal(r).Tenant, r.PathValue("agentId"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *agentHandlers) newCode(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	if err := decode(r, &none, nil); err != nil {
		return err
	}
	c, err := h.svc.NewDeviceCode(r.Context(), principal(r).Tenant, r.PathValue("agentId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

// rateLimited sets Retry-After on a refused device-code attempt.
func rateLimited(w http.ResponseWriter, err error) error {
	var rl *agents.RateLimited
	if errors.As(err, &rl) {
		w.Header().Set("Retry-After", strconv.Itoa(rl.RetryAfter))
	}
	return err
}

func (h *agentHandlers) codeStatus(w http.ResponseWriter, r *http.Request) error {
	var req agents.CodeRequest
	if err := decode(r, &req, func(req agents.CodeRequest) error { return req.Validate() }); err != nil {
		return err
	}
	st, err := h.svc.CodeStatus(r.Context(), principal(r).Tenant, remoteKey(r), req)
	if err != nil {
		return rateLimited(w, err)
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (h *agentHandlers) redeem(w http.ResponseWriter, r *http.Request) error {
	var req agents.CodeRequest
	if err := decode(r, &req, func(req agents.CodeRequest) error { return req.Validate() }); err != nil {
		return err
	}
	out, err := h.svc.Redeem(r.Context(), remoteKey(r), req)
	if err != nil {
		return rateLimited(w, err)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// queryDateBound reads an inclusive ISO 8601 bound: a date-time, or a date
// (its start for a lower bound, its last microsecond for an upper one).
func queryDateBound(f *apierr.Fields, q map[string][]string, name string, upper bool) *time.Time {
	v := first(q, name)
	if v == "" {
		return nil
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if upper {
			d = d.Add(24*time.Hour - time.Microsecond)
		}
		return &d
	}
	return queryTime(f, q, name)
}

func (h *agentHandlers) approvals(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.AgentActionFilter{Approvals: true, AgentID: first(q, "agentId"), CustomerID: first(q, "customerId"),
		From: queryDateBound(&f, q, "startDate", false), To: queryDateBound(&f, q, "endDate", true),
		Desc: queryEnum(&f, q, "sortOrder", []string{"asc", "desc"}) != "asc"}
	scope := "agent-approvals|" + first(q, "sortOrder")
	return writeListPage(w, r, h.s.cursors, &f, scope, func(after string, limit int) ([]agents.Action, int, error) {
		return h.svc.ListActions(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(a agents.Action) string { return a.ID })
}

func (h *agentHandlers) approve(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	if err := decode(r, &none, nil); err != nil {
		return err
	}
	a, err := h.svc.Approve(r.Context(), principal(r).Tenant, r.PathValue("agentId"), r.PathValue("actionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *agentHandlers) reject(w http.ResponseWriter, r *http.Request) error {
	var req agents.RejectRequest
	if err := decode(r, &req, func(req agents.RejectRequest) error { return req.Validate() }); err != nil {
		return err
	}
	a, err := h.svc.Reject(r.Context(), principal(r).Tenant, r.PathValue("agentId"), r.PathValue("actionId"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// wireDelegations plugs cards and agents into the wallets' delegated-key
// seam, in one place, so that the order in which capabilities register their
// routes cannot decide which of them the wallets consult: agent keys are
// checked by the agents capability, card keys by the cards capability.
func (s *Server) wireDelegations() {
	s.walletService().Delegation = agentDelegation{agents: s.agentService(), next: cards.Delegation{S: s.CardService()}}
}

// agentDelegation plugs agents into the wallets' Delegation seam: agent
// delegated keys are checked against the agent (R-EWA-22); card keys go to
// the delegation that was there before (the cards capability), and without
// one keep the seam's default (format-checked ids, nothing on revocation).
type agentDelegation struct {
	agents *agents.Service
	next   wallets.Delegation
}

func (d agentDelegation) CardFundingSource(ctx context.Context, tx *store.Tx, t store.Tenant, cardID string, wallet store.InternalAccount) (string, error) {
	if d.next != nil {
		return d.next.CardFundingSource(ctx, tx, t, cardID, wallet)
	}
	return "", nil
}

func (d agentDelegation) CheckAgent(ctx context.Context, tx *store.Tx, t store.Tenant, agentID string, wallet store.InternalAccount) error {
	return d.agents.CheckAgentKey(ctx, tx, t, agentID, wallet)
}

func (d agentDelegation) Delegated(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error {
	if d.next != nil {
		return d.next.Delegated(ctx, tx, key)
	}
	return nil
}

func (d agentDelegation) Revoked(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error {
	if d.next != nil {
		return d.next.Revoked(ctx, tx, key)
	}
	return nil
}

// chainAccount returns the customer's SPARK_WALLET external account in cur
// at address, creating it when there is none: the account an agent's
// CHAIN_ADDRESS quote pays (R-AGENT-30).
func (s *Server) chainAccount(ctx context.Context, t store.Tenant, customerID, cur, address string) (string, error) {
	ext := s.externalAccountService()
	typ := "SPARK_WALLET"
	if id, ok, err := findChainAccount(ctx, ext, t, customerID, cur, address); err != nil || ok {
		return id, err
	}
	a, err := ext.Create(ctx, t, externalaccounts.CreateRequest{CustomerID: &customerID, Currency: &cur,
		AccountInfo: &externalaccounts.AccountInfo{AccountType: &typ, Address: &address}})
	if e, isAPI := apierr.From(err); isAPI && e.Code == "DUPLICATE_EXTERNAL_ACCOUNT" {
		// Created meanwhile by a concurrent quote.
		if id, ok, err := findChainAccount(ctx, ext, t, customerID, cur, address); err != nil || ok {
			return id, err
		}
	}
	if err != nil {
		var f apierr.Fields
		if e, isAPI := apierr.From(err); isAPI && e.Status == http.StatusBadRequest {
			f.Add("destination.address", apierr.Format, "is not an address this server can pay in %s: %s", cur, e.Reason)
			return "", f.Err()
		}
		return "", err
	}
	return a.ID, nil
}

func findChainAccount(ctx context.Context, ext *externalaccounts.Service, t store.Tenant, customerID, cur, address string) (string, bool, error) {
	after := ""
	for {
		list, _, err := ext.List(ctx, t, store.ExternalAccountFilter{CustomerID: customerID, AccountType: "SPARK_WALLET", Currency: cur}, after, 100)
		if err != nil {
			return "", false, err
		}
		for _, a := range list {
			if a.AccountInfo.Address != nil && *a.AccountInfo.Address == address {
				return a.ID, true, nil
			}
		}
		if len(list) < 100 {
			return "", false, nil
		}
		after = list[len(list)-1].ID
	}
}
