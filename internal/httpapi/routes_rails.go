package httpapi

import (
	"context"
	"net/http"

	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

func init() { routeGroups = append(routeGroups, (*Server).railRoutes) }

// railRoutes: the platform's approve, reject and cancel of transactions
// (R-TXN-05, R-QUOTE-34), and the sandbox's rail helpers: paying a quote's
// payment instructions (R-QUOTE-31), incoming bank deposits and their ACH
// returns, dishonors and contests (R-TXN-33..35), and their refunds to the
// sender (R-TXN-46). See docs/sandbox.md.
func (s *Server) railRoutes() {
	h := &railHandlers{s: s, svc: rails.NewService(s.db)}
	s.handle(route{pattern: "POST /transactions/{transactionId}/approve", need: auth.NeedMoney, h: h.approve})
	s.handle(route{pattern: "POST /transactions/{transactionId}/reject", need: auth.NeedMoney, h: h.reject})
	s.handle(route{pattern: "POST /transactions/{transactionId}/cancel", need: auth.NeedMoney, h: h.cancel})
	s.handle(route{pattern: "POST /sandbox/send", need: auth.NeedMoney, idempotent: true, h: h.send})
	s.handle(route{pattern: "POST /sandbox/incoming-payments", need: auth.NeedMoney, idempotent: true, h: h.incoming})
	s.handle(route{pattern: "POST /sandbox/transactions/{transactionId}/return", need: auth.NeedMoney, h: h.ret})
	s.handle(route{pattern: "POST /sandbox/transactions/{transactionId}/dishonor", need: auth.NeedMoney, h: h.dishonor})
	s.handle(route{pattern: "POST /sandbox/transactions/{transactionId}/contest", need: auth.NeedMoney, h: h.contest})
	s.handle(route{pattern: "POST /sandbox/transactions/{transactionId}/refund", need: auth.NeedMoney, idempotent: true, h: h.refund})
}

type railHandlers struct {
	s   *Server
	svc *rails.Service
}

// reasonBody is the optional body of reject and cancel (and approve, whose
// receiverCustomerInfo is accepted and not used in sandbox).
type reasonBody struct {
	Reason               *string        `json:"reason"`
	ReceiverCustomerInfo map[string]any `json:"receiverCustomerInfo"`
}

// optionalBody decodes an optional JSON body.
func optionalBody(r *http.Request) (reasonBody, error) {
	var b reasonBody
	if len(bodyOf(r)) == 0 {
		return b, nil
	}
	return b, decode(r, &b, nil)
}

func (h *railHandlers) reply(w http.ResponseWriter, x transactions.Transaction, err error) error {
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

type txnAction func(ctx context.Context, t store.Tenant, transactionID string) (transactions.Transaction, error)

func (h *railHandlers) act(w http.ResponseWriter, r *http.Request, fn txnAction) error {
	if _, err := optionalBody(r); err != nil {
		return err
	}
	x, err := fn(r.Context(), principal(r).Tenant, r.PathValue("transactionId"))
	return h.reply(w, x, err)
}

func (h *railHandlers) approve(w http.ResponseWriter, r *http.Request) error {
	return h.act(w, r, h.svc.Approve)
}

func (h *railHandlers) reject(w http.ResponseWriter, r *http.Request) error {
	b, err := optionalBody(r)
	if err != nil {
		return err
	}
	reason := ""
	if b.Reason != nil {
		reason = *b.Reason
	}
	x, err := h.svc.Reject(r.Context(), principal(r).Tenant, r.PathValue("transactionId"), reason)
	return h.reply(w, x, err)
}

func (h *railHandlers) cancel(w http.ResponseWriter, r *http.Request) error {
	return h.act(w, r, h.svc.Cancel)
}
func (h *railHandlers) ret(w http.ResponseWriter, r *http.Request) error {
	return h.act(w, r, h.svc.Return)
}
func (h *railHandlers) dishonor(w http.ResponseWriter, r *http.Request) error {
	return h.act(w, r, h.svc.Dishonor)
}
func (h *railHandlers) contest(w http.ResponseWriter, r *http.Request) error {
	return h.act(w, r, h.svc.Contest)
}

// refund sends a completed incoming payment back to its sender (R-TXN-46).
// Its optional body names the refund's reason (USER_CANCELLATION when
// omitted).
func (h *railHandlers) refund(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Reason *string `json:"reason"`
	}
	if len(bodyOf(r)) > 0 {
		if err := decode(r, &b, nil); err != nil {
			return err
		}
	}
	reason := rails.RefundUserCancellation // the sender asked for it back
	if b.Reason != nil {
		reason = *b.Reason
	}
	x, err := h.svc.RefundIncoming(r.Context(), principal(r).Tenant, r.PathValue("transactionId"), reason)
	return h.reply(w, x, err)
}

func (h *railHandlers) incoming(w http.ResponseWriter, r *http.Request) error {
	var req rails.IncomingRequest
	if err := decode(r, &req, func(req rails.IncomingRequest) error { return req.Validate() }); err != nil {
		return err
	}
	x, err := h.svc.Receive(r.Context(), principal(r).Tenant, req)
	return h.reply(w, x, err)
}

func (h *railHandlers) send(w http.ResponseWriter, r *http.Request) error {
	var req rails.SendRequest
	if err := decode(r, &req, func(req rails.SendRequest) error { return req.Validate() }); err != nil {
		return err
	}
	q := h.s.quoteService()
	x, err := h.svc.Send(r.Context(), principal(r).Tenant, req, rails.FundedQuotes{
		FundingAccount: q.FundingAccount,
		ExecuteFunded: func(ctx context.Context, tx *store.Tx, t store.Tenant, quoteID string) (string, error) {
			out, err := q.ExecuteFunded(ctx, tx, t, quoteID)
			return out.TransactionID, err
		},
	})
	return h.reply(w, x, err)
}
