package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// apiError is an API answer of 4xx or 5xx, as the API's error body says it.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("the API answered %d", e.Status)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// obj is a JSON object as the API returned it; numbers stay json.Number.
type obj = map[string]any

// call serves one API request as the session's token and decodes a 2xx
// answer into out (when out is not nil); any other answer is an *apiError.
func (h *Handler) call(r *http.Request, s *session, method, target string, body any, idemKey string, out any) error {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return err
		}
	}
	status, resp := h.opts.API.Call(r.Context(), s.principal, method, target, raw, idemKey)
	if status >= 400 {
		var e struct{ Code, Reason, Message string }
		_ = json.Unmarshal(resp, &e)
		msg := e.Message
		if msg == "" {
			msg = e.Reason
		}
		return &apiError{Status: status, Code: e.Code, Message: msg}
	}
	if out == nil || len(resp) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(resp))
	dec.UseNumber()
	return dec.Decode(out)
}

// get reads an API object.
func (h *Handler) get(r *http.Request, s *session, target string) (obj, error) {
	var o obj
	err := h.call(r, s, http.MethodGet, target, nil, "", &o)
	return o, err
}

// listPage is one page of an API list.
type listPage struct {
	Data       []obj  `json:"data"`
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor"`
	TotalCount int    `json:"totalCount"`
}

// list reads one page of an API list; q holds its filters, limit and cursor.
func (h *Handler) list(r *http.Request, s *session, path string, q url.Values) (listPage, error) {
	var p listPage
	target := path
	if enc := q.Encode(); enc != "" {
		target += "?" + enc
	}
	err := h.call(r, s, http.MethodGet, target, nil, "", &p)
	return p, err
}

// filters copies the named query parameters of the page's URL that are set,
// with the page's cursor and a limit, for an API list.
func filters(r *http.Request, limit int, names ...string) url.Values {
	q := url.Values{}
	for _, n := range append(names, "cursor") {
		if v := r.URL.Query().Get(n); v != "" {
			q.Set(n, v)
		}
	}
	q.Set("limit", fmt.Sprint(limit))
	return q
}
