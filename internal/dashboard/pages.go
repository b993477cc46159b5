package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

const pageSize = 25

// show renders a signed-in page, with the flash message left for it.
func (h *Handler) show(w http.ResponseWriter, r *http.Request, s *session, name, nav, title string, data map[string]any) {
	v := h.view(r, s, title, data)
	v.Nav, v.Flash = nav, h.takeFlash(w, r)
	h.pages.render(w, http.StatusOK, name, v)
}

// apiFailed renders what the API answered when a page's main read failed:
// its status and message (404 for another tenant's id, as the API says).
func (h *Handler) apiFailed(w http.ResponseWriter, r *http.Request, s *session, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		h.fail(w, r, err)
		return
	}
	h.pages.render(w, ae.Status, "error", h.view(r, s, http.StatusText(ae.Status), nil).withError(ae.Error()))
}

// home: today's totals (UTC day) and what waits for someone.
func (h *Handler) home(w http.ResponseWriter, r *http.Request, s *session) {
	t := s.principal.Tenant
	midnight := h.opts.DB.Now().UTC().Truncate(24 * time.Hour)
	stats, err := h.opts.DB.Read().TransactionStatsSince(r.Context(), t, midnight, id.Floor("Transaction", midnight.Add(-24*time.Hour)))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	customers, err := h.list(r, s, "/customers", url.Values{"limit": {"1"}})
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	waiting, err := h.list(r, s, "/transactions", url.Values{"limit": {"10"}, "type": {"INCOMING"}, "status": {"PENDING"}})
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	data := todayCharts(stats)
	data["customers"] = customers.TotalCount
	data["waiting"] = waiting
	h.show(w, r, s, "home", "home", "Overview", data)
}

// todayCharts sums today's transactions by status and volume by currency.
func todayCharts(stats []store.TransactionStat) map[string]any {
	byStatus := map[string]int64{}
	byCurrency := map[string]int64{}
	var total int64
	for _, st := range stats {
		byStatus[st.Status] += st.Count
		total += st.Count
		if st.Status != "FAILED" && st.Status != "REJECTED" && st.Status != "EXPIRED" {
			byCurrency[st.Currency] += st.Volume
		}
	}
	var statusBars, volumeBars []bar
	for _, k := range sortedKeys(byStatus) {
		statusBars = append(statusBars, bar{Label: k, Value: float64(byStatus[k]), Text: str(byStatus[k])})
	}
	for _, k := range sortedKeys(byCurrency) {
		volumeBars = append(volumeBars, bar{Label: k, Value: float64(byCurrency[k]), Text: minor(byCurrency[k], k)})
	}
	return map[string]any{
		"total": total, "statusBars": statusBars, "volumeBars": volumeBars,
		"statusChart": barChart("Transactions today by status", statusBars),
		"volumeChart": barChart("Volume today by currency", volumeBars),
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// listView is a page of one API list (path) with the page's filters (names),
// rendered by the template name, which is also its navigation entry.
func (h *Handler) listView(path, name, title string, names ...string) func(http.ResponseWriter, *http.Request, *session) {
	return h.listViewWith(path, name, title, func(r *http.Request) url.Values { return filters(r, pageSize, names...) })
}

// listViewWith is listView with the list's query built by query.
func (h *Handler) listViewWith(path, name, title string, query func(*http.Request) url.Values) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		list, err := h.list(r, s, path, query(r))
		if err != nil {
			h.apiFailed(w, r, s, err)
			return
		}
		h.show(w, r, s, name, name, title, map[string]any{"list": list})
	}
}

// customers: search by id or platform customer id, filters, pages.
func (h *Handler) customers(w http.ResponseWriter, r *http.Request, s *session) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if id.Valid("Customer", q) {
		http.Redirect(w, r, "/dashboard/customers/"+url.PathEscape(q), http.StatusSeeOther)
		return
	}
	h.listViewWith("/customers", "customers", "Customers", func(r *http.Request) url.Values {
		f := filters(r, pageSize, "customerType", "region", "createdAfter", "createdBefore")
		if q != "" {
			f.Set("platformCustomerId", q)
		}
		return f
	})(w, r, s)
}

// customer: the customer with accounts, external accounts, verifications,
// beneficial owners and latest transactions.
func (h *Handler) customer(w http.ResponseWriter, r *http.Request, s *session) {
	cid := r.PathValue("id")
	c, err := h.get(r, s, "/customers/"+url.PathEscape(cid))
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	data := map[string]any{"customer": c}
	by := url.Values{"customerId": {cid}, "limit": {"50"}}
	for key, path := range map[string]string{"accounts": "/customers/internal-accounts",
		"external": "/customers/external-accounts", "verifications": "/verifications", "owners": "/beneficial-owners"} {
		if data[key], err = h.list(r, s, path, by); err != nil {
			h.apiFailed(w, r, s, err)
			return
		}
	}
	if data["cards"], err = h.list(r, s, "/cards", url.Values{"customerId": {cid}, "limit": {"50"}}); err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	if data["documents"], err = h.list(r, s, "/documents", url.Values{"documentHolder": {cid}, "limit": {"50"}}); err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	if data["transactions"], err = h.list(r, s, "/transactions", url.Values{"customerId": {cid}, "limit": {"20"}}); err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	h.show(w, r, s, "customer", "customers", str(c["id"]), data)
}

// accounts: the platform's own internal accounts and customers' accounts.
func (h *Handler) accounts(w http.ResponseWriter, r *http.Request, s *session) {
	platform, err := h.list(r, s, "/platform/internal-accounts", url.Values{"limit": {"100"}})
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	f := filters(r, pageSize, "type", "currency", "customerId")
	customers, err := h.list(r, s, "/customers/internal-accounts", f)
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	h.show(w, r, s, "accounts", "accounts", "Internal accounts", map[string]any{"platform": platform, "customers": customers})
}

// transactionFilters are the filters of the transaction list page.
var transactionFilters = []string{"customerId", "type", "status", "reference", "startDate", "endDate", "sortOrder"}

// event: one event, its payload and every delivery attempt.
func (h *Handler) event(w http.ResponseWriter, r *http.Request, s *session) {
	ev, err := h.get(r, s, "/events/"+url.PathEscape(r.PathValue("id")))
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	h.show(w, r, s, "event", "events", str(ev["type"]), map[string]any{"event": ev})
}

// webhooks: the endpoint, its signing keys' ages and the tools.
func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request, s *session) {
	cfg, err := h.get(r, s, "/config")
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	failing, err := h.list(r, s, "/events", url.Values{"limit": {"100"}})
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	var notDelivered []obj
	for _, ev := range failing.Data {
		if d, ok := ev["delivery"].(map[string]any); ok && str(d["status"]) != "DELIVERED" {
			notDelivered = append(notDelivered, ev)
		}
	}
	h.show(w, r, s, "webhooks", "webhooks", "Webhooks", map[string]any{"config": cfg, "notDelivered": notDelivered})
}

// config: the platform configuration as the API returns it.
func (h *Handler) config(w http.ResponseWriter, r *http.Request, s *session) {
	cfg, err := h.get(r, s, "/config")
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	h.show(w, r, s, "config", "config", "Configuration", map[string]any{"config": cfg})
}

// sandbox: the developer tools (sandbox tokens only, as /sandbox/* is).
func (h *Handler) sandbox(w http.ResponseWriter, r *http.Request, s *session) {
	if !s.principal.Sandbox() {
		h.pages.render(w, http.StatusForbidden, "error", h.view(r, s, "Sandbox only", nil).
			withError("Sandbox tools answer only to sandbox tokens."))
		return
	}
	h.show(w, r, s, "sandbox", "sandbox", "Sandbox tools", map[string]any{})
}
