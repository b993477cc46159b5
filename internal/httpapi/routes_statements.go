package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/page"
)

func init() { routeGroups = append(routeGroups, (*Server).statementRoutes) }

// statementRoutes: balance changes of a customer's USD account and
// monthly statement receipts (R-STMT-*).
func (s *Server) statementRoutes() {
	h := &statementHandlers{s: s, svc: s.accountService()}
	s.handle(route{pattern: "GET /internal-accounts/{id}/balance-changes", need: auth.NeedView, query: listQuery("startDate", "endDate"), h: h.balanceChanges})
	s.handle(route{pattern: "POST /internal-accounts/{id}/confirm-statement", need: auth.NeedWrite, h: h.confirm})
}

type statementHandlers struct {
	s   *Server
	svc *accounts.Service
}

// statementInstant reads a required RFC 3339 instant with any offset
// (R-STMT-03). A "+" of an offset that arrived unescaped (and so decoded as
// a space) is read as the "+" it was.
func statementInstant(f *apierr.Fields, q map[string][]string, name string) time.Time {
	raw := first(q, name)
	if raw == "" {
		f.Add(name, apierr.Required, "is required: an RFC 3339 date-time with any offset, such as 2025-10-01T00:00:00-05:00")
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil && strings.Count(raw, " ") == 1 {
		t, err = time.Parse(time.RFC3339Nano, strings.Replace(raw, " ", "+", 1))
	}
	if err != nil {
		f.Add(name, apierr.Format, "must be an RFC 3339 date-time with any offset, such as 2025-10-01T00:00:00-05:00")
		return time.Time{}
	}
	return t
}

func (h *statementHandlers) balanceChanges(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	accountID := r.PathValue("id")
	var f apierr.Fields
	start := statementInstant(&f, q, "startDate")
	end := statementInstant(&f, q, "endDate")
	// A cursor continues the same account and window, however the instants
	// were written.
	scope := "balance-changes:" + accountID + ":" + strconv.FormatInt(start.UnixNano(), 10) + ":" + strconv.FormatInt(end.UnixNano(), 10)
	pr, perr := h.s.cursors.Parse(q, scope)
	var after *accounts.StatementCursor
	if perr == nil && pr.After != "" {
		c, ok := accounts.ParseCursor(pr.After)
		if !ok {
			f.Add("cursor", apierr.Format, "is not a cursor this list issued")
		}
		after = &c
	}
	if err := apierr.MergeFields(f.Err(), perr); err != nil {
		return err
	}
	st, err := h.svc.BalanceChanges(r.Context(), principal(r).Tenant, accountID, start, end, after, pr.Limit+1)
	if err != nil {
		return err
	}
	p := page.Build(h.s.cursors, pr, st.Data, 0, func(c accounts.BalanceChange) string {
		return accounts.FormatCursor(accounts.StatementCursor{CreatedAt: c.EffectiveAt, ID: c.ID})
	})
	st.Data, st.HasMore, st.NextCursor = p.Data, p.HasMore, p.NextCursor
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (h *statementHandlers) confirm(w http.ResponseWriter, r *http.Request) error {
	var req accounts.ConfirmStatementRequest
	if err := decode(r, &req, func(req accounts.ConfirmStatementRequest) error {
		return accounts.ValidateStatementMonth(req.StatementMonth, h.s.db.Now())
	}); err != nil {
		return err
	}
	c, err := h.svc.ConfirmStatement(r.Context(), principal(r).Tenant, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
