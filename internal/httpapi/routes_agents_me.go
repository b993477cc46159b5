package httpapi

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/agents"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// agentOwnRoutes: the agent's API, each route scoped to the agent's
// customer (R-AUTH-08) and gated by the policy permission it names
// (R-AGENT-24). Lists and reads of other customers' objects answer 404.
func (s *Server) agentOwnRoutes(h *agentHandlers) {
	me := &agentMeHandlers{agentHandlers: h, tx: &transactions.Service{DB: s.db}, acc: s.accountService(),
		ext: s.externalAccountService()}
	s.handle(route{pattern: "GET /agents/me", agent: true, h: me.self})
	s.handle(route{pattern: "GET /agents/me/internal-accounts", agent: true, query: listQuery("currency", "type"), h: me.internalAccounts})
	s.handle(route{pattern: "GET /agents/me/actions", agent: true, query: listQuery(), h: me.actions})
	s.handle(route{pattern: "GET /agents/me/actions/{actionId}", agent: true, h: me.action})
	s.handle(route{pattern: "GET /agents/me/transactions", agent: true, query: listQuery("type", "status", "sortOrder"), h: me.transactions})
	s.handle(route{pattern: "GET /agents/me/transactions/{transactionId}", agent: true, h: me.transaction})
	s.handle(route{pattern: "POST /agents/me/quotes", agent: true, agentNeeds: agents.PermCreateQuotes, h: me.createQuote})
	s.handle(route{pattern: "GET /agents/me/quotes/{quoteId}", agent: true, h: me.quote})
	s.handle(route{pattern: "POST /agents/me/quotes/{quoteId}/execute", agent: true, agentNeeds: agents.PermExecuteQuotes, h: me.execute})
	s.handle(route{pattern: "POST /agents/me/external-accounts", agent: true, agentNeeds: agents.PermManageExternalAccounts, h: me.createExternal})
	s.handle(route{pattern: "GET /agents/me/external-accounts", agent: true, agentNeeds: agents.PermManageExternalAccounts, query: listQuery("accountType", "status", "currency"), h: me.externalAccounts})
	s.handle(route{pattern: "GET /agents/me/external-accounts/{externalAccountId}", agent: true, agentNeeds: agents.PermManageExternalAccounts, h: me.externalAccount})
	s.handle(route{pattern: "DELETE /agents/me/external-accounts/{externalAccountId}", agent: true, agentNeeds: agents.PermManageExternalAccounts, h: me.deleteExternal})
	s.handle(route{pattern: "POST /agents/me/deposits", agent: true, agentNeeds: agents.PermReceiveFunds, h: me.createDeposit})
	s.handle(route{pattern: "GET /agents/me/deposits/{depositId}", agent: true, agentNeeds: agents.PermReceiveFunds, h: me.deposit})
	s.handle(route{pattern: "POST /sandbox/agents/deposits/{depositId}/pay", need: auth.NeedMoney, h: me.payDeposit})
	// Deprecated, as the reference still lists them (CREATE_TRANSFERS).
	s.handle(route{pattern: "POST /agents/me/transfer-out", agent: true, agentNeeds: agents.PermCreateTransfers, h: me.agentTransfer(true)})
	s.handle(route{pattern: "POST /agents/me/transfer-in", agent: true, agentNeeds: agents.PermCreateTransfers, h: me.agentTransfer(false)})
}

type agentMeHandlers struct {
	*agentHandlers
	tx  *transactions.Service
	acc *accounts.Service
	ext *externalaccounts.Service
}

// R-AGENT-25
func (h *agentMeHandlers) self(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	a, err := h.svc.Get(r.Context(), c.Agent.Tenant, c.Agent.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// R-AGENT-26: the agent's customer's accounts only.
func (h *agentMeHandlers) internalAccounts(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.InternalAccountFilter{CustomerID: c.Agent.CustomerID, Type: queryEnum(&f, q, "type", accounts.Types)}
	filter.Currency = queryCurrency(&f, q)
	return writeListPage(w, r, h.s.cursors, &f, "agent-internal-accounts|"+c.Agent.ID, func(after string, limit int) ([]accounts.InternalAccount, int, error) {
		return h.acc.List(r.Context(), c.Agent.Tenant, filter, after, limit)
	}, func(a accounts.InternalAccount) string { return a.ID })
}

// R-AGENT-27
func (h *agentMeHandlers) actions(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	var f apierr.Fields
	filter := store.AgentActionFilter{AgentID: c.Agent.ID}
	return writeListPage(w, r, h.s.cursors, &f, "agent-actions|"+c.Agent.ID, func(after string, limit int) ([]agents.Action, int, error) {
		return h.svc.ListActions(r.Context(), c.Agent.Tenant, filter, after, limit)
	}, func(a agents.Action) string { return a.ID })
}

func (h *agentMeHandlers) action(w http.ResponseWriter, r *http.Request) error {
	a, err := h.svc.GetAction(r.Context(), agentCaller(r), r.PathValue("actionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// R-AGENT-28: the customer's transactions; another's is 404.
func (h *agentMeHandlers) transactions(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.TransactionFilter{CustomerID: c.Agent.CustomerID,
		Type:       queryEnum(&f, q, "type", transactions.Types),
		Status:     queryEnum(&f, q, "status", transactions.Statuses),
		Descending: queryEnum(&f, q, "sortOrder", []string{"asc", "desc"}) != "asc"}
	return writeListPage(w, r, h.s.cursors, &f, "agent-transactions|"+c.Agent.ID+"|"+first(q, "sortOrder"), func(after string, limit int) ([]transactions.Transaction, int, error) {
		return h.tx.List(r.Context(), c.Agent.Tenant, filter, after, limit)
	}, func(x transactions.Transaction) string { return x.ID })
}

func (h *agentMeHandlers) transaction(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	x, err := h.tx.Get(r.Context(), c.Agent.Tenant, r.PathValue("transactionId"))
	if err == nil && x.CustomerID != c.Agent.CustomerID {
		err = apierr.NotFound("TRANSACTION_NOT_FOUND", "Transaction "+r.PathValue("transactionId"))
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// R-AGENT-29
func (h *agentMeHandlers) createQuote(w http.ResponseWriter, r *http.Request) error {
	var req agents.QuoteRequest
	if err := decode(r, &req, func(req agents.QuoteRequest) error { return req.Validate() }); err != nil {
		return err
	}
	q, err := h.svc.CreateQuote(r.Context(), agentCaller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, q)
	return nil
}

// R-AGENT-32
func (h *agentMeHandlers) quote(w http.ResponseWriter, r *http.Request) error {
	q, err := h.svc.GetQuote(r.Context(), agentCaller(r), r.PathValue("quoteId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, q)
	return nil
}

// R-AGENT-33, R-AGENT-14
func (h *agentMeHandlers) execute(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	if err := decode(r, &none, nil); err != nil {
		return err
	}
	a, err := h.svc.ExecuteQuote(r.Context(), agentCaller(r), r.PathValue("quoteId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// ownExternal reads an external account of the agent's customer; any other
// is 404.
func (h *agentMeHandlers) ownExternal(r *http.Request) (externalaccounts.ExternalAccount, error) {
	c := agentCaller(r)
	a, err := h.ext.Get(r.Context(), c.Agent.Tenant, false, r.PathValue("externalAccountId"))
	if err == nil && a.CustomerID != c.Agent.CustomerID {
		err = apierr.NotFound("ACCOUNT_NOT_FOUND", "External account "+r.PathValue("externalAccountId"))
	}
	return a, err
}

// R-AGENT-34: customerId is optional, and only the agent's customer's.
func (h *agentMeHandlers) createExternal(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	var req externalaccounts.CreateRequest
	if err := decode(r, &req, func(req externalaccounts.CreateRequest) error {
		if req.CustomerID == nil {
			req.CustomerID = &c.Agent.CustomerID
		}
		return req.Validate(h.s.db.Now())
	}); err != nil {
		return err
	}
	if req.CustomerID == nil {
		req.CustomerID = &c.Agent.CustomerID
	}
	if *req.CustomerID != c.Agent.CustomerID {
		return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+*req.CustomerID)
	}
	a, err := h.ext.Create(r.Context(), c.Agent.Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (h *agentMeHandlers) externalAccounts(w http.ResponseWriter, r *http.Request) error {
	c := agentCaller(r)
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.ExternalAccountFilter{CustomerID: c.Agent.CustomerID,
		AccountType: queryEnum(&f, q, "accountType", externalaccounts.AccountTypes()),
		Status:      queryEnum(&f, q, "status", externalaccounts.Statuses)}
	filter.Currency = queryCurrency(&f, q)
	return writeListPage(w, r, h.s.cursors, &f, "agent-external-accounts|"+c.Agent.ID, func(after string, limit int) ([]externalaccounts.ExternalAccount, int, error) {
		return h.ext.List(r.Context(), c.Agent.Tenant, filter, after, limit)
	}, func(a externalaccounts.ExternalAccount) string { return a.ID })
}

func (h *agentMeHandlers) externalAccount(w http.ResponseWriter, r *http.Request) error {
	a, err := h.ownExternal(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

func (h *agentMeHandlers) deleteExternal(w http.ResponseWriter, r *http.Request) error {
	a, err := h.ownExternal(r)
	if err != nil {
		return err
	}
	if err := h.ext.Delete(r.Context(), agentCaller(r).Agent.Tenant, false, a.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// agentTransfer serves the deprecated transfer-out (out) and transfer-in:
// the answer is the AgentAction, 201.
func (h *agentMeHandlers) agentTransfer(out bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req agents.TransferRequest
		if err := decode(r, &req, func(req agents.TransferRequest) error { return req.Validate(out) }); err != nil {
			return err
		}
		a, err := h.svc.Transfer(r.Context(), agentCaller(r), req, out)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, a)
		return nil
	}
}

// R-AGENT-35: a Lightning invoice or a chain address for money to arrive in
// a BTC account of the agent's customer.
func (h *agentMeHandlers) createDeposit(w http.ResponseWriter, r *http.Request) error {
	var req agents.DepositRequest
	if err := decode(r, &req, func(req agents.DepositRequest) error { return req.Validate() }); err != nil {
		return err
	}
	d, err := h.svc.CreateDeposit(r.Context(), agentCaller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

func (h *agentMeHandlers) deposit(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.GetDeposit(r.Context(), agentCaller(r), r.PathValue("depositId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// payDepositRequest is the body of the sandbox payment of a deposit.
type payDepositRequest struct {
	Amount *int64 `json:"amount"`
}

// payDeposit is the sandbox payer paying a deposit's target (platform
// credentials): the rail simulator credits the account.
func (h *agentMeHandlers) payDeposit(w http.ResponseWriter, r *http.Request) error {
	var req payDepositRequest
	if err := decode(r, &req, nil); err != nil {
		return err
	}
	d, err := h.svc.PayDeposit(r.Context(), principal(r).Tenant, rails.NewService(h.s.db), r.PathValue("depositId"), req.Amount)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}
