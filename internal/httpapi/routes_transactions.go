package httpapi

import (
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

func init() { routeGroups = append(routeGroups, (*Server).transactionRoutes) }

// transactionRoutes: the transactions of the caller's environment
// (R-TXN-01..04).
func (s *Server) transactionRoutes() {
	h := &transactionHandlers{s: s, svc: &transactions.Service{DB: s.db}}
	s.handle(route{pattern: "GET /transactions", need: auth.NeedView, query: listQuery("customerId", "platformCustomerId", "accountIdentifier", "senderAccountIdentifier", "receiverAccountIdentifier", "reference", "cardId", "type", "status", "startDate", "endDate", "createdAfter", "createdBefore", "sortOrder"), h: h.list})
	s.handle(route{pattern: "GET /transactions/{transactionId}", need: auth.NeedView, h: h.get})
}

type transactionHandlers struct {
	s   *Server
	svc *transactions.Service
}

func (h *transactionHandlers) get(w http.ResponseWriter, r *http.Request) error {
	x, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("transactionId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// txnLater returns the later of two optional bounds, txnEarlier the earlier.
func txnLater(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.After(*a)) {
		return b
	}
	return a
}

func txnEarlier(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.Before(*a)) {
		return b
	}
	return a
}

func (h *transactionHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.TransactionFilter{
		CustomerID:                q.Get("customerId"),
		PlatformCustomerID:        q.Get("platformCustomerId"),
		AccountIdentifier:         q.Get("accountIdentifier"),
		SenderAccountIdentifier:   q.Get("senderAccountIdentifier"),
		ReceiverAccountIdentifier: q.Get("receiverAccountIdentifier"),
		Reference:                 q.Get("reference"),
		CardID:                    q.Get("cardId"),
		Type:                      queryEnum(&f, q, "type", transactions.Types),
		// startDate/endDate and createdAfter/createdBefore are the same
		// inclusive bounds on createdAt under two names; both apply.
		CreatedAfter:  txnLater(queryTime(&f, q, "startDate"), queryTime(&f, q, "createdAfter")),
		CreatedBefore: txnEarlier(queryTime(&f, q, "endDate"), queryTime(&f, q, "createdBefore")),
		Descending:    queryEnum(&f, q, "sortOrder", []string{"asc", "desc"}) != "asc",
	}
	// The platform's own id as customerId selects the platform's own
	// transactions.
	if filter.CustomerID != "" && filter.CustomerID == principal(r).Tenant.PlatformID {
		filter.CustomerID, filter.PlatformOnly = "", true
	}
	if filter.Type == transactions.TypeCard && q.Get("status") != "" {
		// R-TXN-04
		f.Add("status", apierr.AdditionalProperties, "cannot be combined with type=CARD: card transactions have statuses of their own")
	} else {
		filter.Status = queryEnum(&f, q, "status", transactions.Statuses)
	}
	return writeListPage(w, r, h.s.cursors, &f, "transactions", func(after string, limit int) ([]transactions.Transaction, int, error) {
		return h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(x transactions.Transaction) string { return x.ID })
}
