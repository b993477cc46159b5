package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
)

// The ledger views: the one place the dashboard reads the store rather than
// the API, because the API does not expose postings. Every read is scoped to
// the session's tenant.

// transferView is a ledger transfer with its postings and whether they
// balance (sum to zero in each currency).
type transferView struct {
	store.LedgerTransfer
	Postings []postingView
	Balanced bool
}

// postingView is a posting with its account's name ("" for an internal
// account, whose id says what it is).
type postingView struct {
	store.LedgerPosting
	AccountName string
}

// accountCheck compares an account's stored balance with the sum of its
// postings.
type accountCheck struct {
	AccountID string
	Currency  string
	Stored    int64
	Derived   int64
	Equal     bool
}

// transaction: the transaction, its quote, its status timeline (its events)
// and the ledger transfers and postings behind each step.
func (h *Handler) transaction(w http.ResponseWriter, r *http.Request, s *session) {
	tid := r.PathValue("id")
	txn, err := h.get(r, s, "/transactions/"+url.PathEscape(tid))
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	data := map[string]any{"txn": txn}
	if qid := str(txn["quoteId"]); qid != "" {
		if q, err := h.get(r, s, "/quotes/"+url.PathEscape(qid)); err == nil {
			data["quote"] = q
		}
	}
	timeline, err := h.list(r, s, "/events", url.Values{"resourceId": {tid}, "limit": {"100"}})
	if err != nil {
		h.apiFailed(w, r, s, err)
		return
	}
	data["timeline"] = timeline
	transfers, checks, err := h.ledgerOf(r, s.principal.Tenant, tid)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	data["transfers"], data["checks"] = transfers, checks
	h.show(w, r, s, "transaction", "transactions", tid, data)
}

// ledgerOf returns the transfers whose reference is the transaction, with
// their postings, and the balance check of every internal account they touch.
func (h *Handler) ledgerOf(r *http.Request, t store.Tenant, ref string) ([]transferView, []accountCheck, error) {
	q := h.opts.DB.Read()
	trs, err := q.LedgerTransfersByReference(r.Context(), t, ref)
	if err != nil || len(trs) == 0 {
		return nil, nil, err
	}
	ids := make([]string, len(trs))
	for i, tr := range trs {
		ids[i] = tr.ID
	}
	postings, err := q.LedgerPostingsOf(r.Context(), t, ids)
	if err != nil {
		return nil, nil, err
	}
	var touched []string
	seen := map[string]bool{}
	for _, ps := range postings {
		for _, p := range ps {
			if !seen[p.AccountID] {
				seen[p.AccountID] = true
				touched = append(touched, p.AccountID)
			}
		}
	}
	names, err := q.LedgerAccountsByID(r.Context(), t, touched)
	if err != nil {
		return nil, nil, err
	}
	out := make([]transferView, len(trs))
	for i, tr := range trs {
		out[i] = viewTransfer(tr, postings[tr.ID], names)
	}
	checks, err := h.checkAccounts(r, t, touched)
	return out, checks, err
}

// viewTransfer names the postings' accounts and checks that the postings
// sum to zero in each currency.
func viewTransfer(tr store.LedgerTransfer, ps []store.LedgerPosting, names map[string]store.LedgerAccount) transferView {
	v := transferView{LedgerTransfer: tr, Balanced: true}
	sums := map[string]int64{}
	for _, p := range ps {
		sums[p.Currency] += p.Amount
		name := names[p.AccountID].Name
		if name == "" {
			name = names[p.AccountID].Code
		}
		v.Postings = append(v.Postings, postingView{LedgerPosting: p, AccountName: name})
	}
	for _, sum := range sums {
		v.Balanced = v.Balanced && sum == 0
	}
	return v
}

// checkAccounts checks the internal accounts among ids (an internal
// account's ledger account has its id); system accounts are skipped, their
// postings being too many to sum on a page view.
func (h *Handler) checkAccounts(r *http.Request, t store.Tenant, ids []string) ([]accountCheck, error) {
	q := h.opts.DB.Read()
	accts, err := q.GetInternalAccounts(r.Context(), t, ids...)
	if err != nil {
		return nil, err
	}
	var out []accountCheck
	for _, aid := range ids {
		a, ok := accts[aid]
		if !ok {
			continue
		}
		stored, err := q.GetLedgerBalance(r.Context(), t, a.LedgerAccountID)
		if err != nil {
			return nil, err
		}
		derived, err := q.DerivedLedgerBalance(r.Context(), t, a.LedgerAccountID)
		if err != nil {
			return nil, err
		}
		out = append(out, accountCheck{AccountID: aid, Currency: a.Currency, Stored: stored.Posted, Derived: derived.Posted,
			Equal: stored.Posted == derived.Posted && stored.PendingDebits == derived.PendingDebits &&
				stored.PendingCredits == derived.PendingCredits})
	}
	return out, nil
}

// account: an internal account, its balance over the last 30 days (the sum
// of its posted postings at the end of each UTC day), its latest postings
// and the check that its balance equals its postings.
func (h *Handler) account(w http.ResponseWriter, r *http.Request, s *session) {
	t := s.principal.Tenant
	q := h.opts.DB.Read()
	a, err := q.GetInternalAccount(r.Context(), t, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		h.pages.render(w, http.StatusNotFound, "error", h.view(r, s, "Not found", nil).withError("No internal account "+r.PathValue("id")))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.opts.DB.Now().UTC()
	points, err := h.balanceHistory(r, t, a.LedgerAccountID, now, 30)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	from := now.AddDate(0, 0, -30)
	postings, err := q.LedgerStatement(r.Context(), t, a.LedgerAccountID, &from, nil, nil, 200)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	checks, err := h.checkAccounts(r, t, []string{a.ID})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cur := a.Currency
	chart := lineChart("Balance of "+a.ID+" over 30 days", points, func(v float64) string { return minor(int64(v), cur) })
	h.show(w, r, s, "account", "accounts", a.ID, map[string]any{"account": a, "chart": chart, "points": points,
		"postings": postings, "checks": checks})
}

// balanceHistory is the posted balance at the end of each of the last days
// UTC days, and now.
func (h *Handler) balanceHistory(r *http.Request, t store.Tenant, ledgerID string, now time.Time, days int) ([]point, error) {
	q := h.opts.DB.Read()
	start := now.Truncate(24*time.Hour).AddDate(0, 0, -days+1)
	var pts []point
	for d := start; d.Before(now); d = d.AddDate(0, 0, 1) {
		at := d
		v, err := q.LedgerPostedSumBefore(r.Context(), t, ledgerID, &at)
		if err != nil {
			return nil, err
		}
		pts = append(pts, point{Label: d.Format("Jan 2"), Value: float64(v)})
	}
	v, err := q.LedgerPostedSumBefore(r.Context(), t, ledgerID, nil)
	if err != nil {
		return nil, err
	}
	return append(pts, point{Label: "now", Value: float64(v)}), nil
}
