package httpapi

import (
	"net/http"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/page"
)

// writeListPage answers one page of a list (R-CONV-10): the cursor is read
// in the scope of list and the request's filters, its errors and the
// filters' (f) are reported together, fetch returns up to limit rows after
// the cursor with the total, and id names a row for the next cursor.
func writeListPage[T any](w http.ResponseWriter, r *http.Request, c *page.Codec, f *apierr.Fields, list string,
	fetch func(after string, limit int) ([]T, int, error), id func(T) string) error {
	q := r.URL.Query()
	pr, perr := c.Parse(q, page.Scope(list, q))
	if err := apierr.MergeFields(f.Err(), perr); err != nil {
		return err
	}
	rows, total, err := fetch(pr.After, pr.Limit+1)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page.Build(c, pr, rows, total, id))
	return nil
}
