// Package page implements list pagination (R-CONV-10..14): a limit of 1 to
// 100 (default 20), and opaque cursors that are signed, so a forged or
// edited cursor is refused, and bound to the list and filters they came from.
// Lists page by keyset (the last id seen), never by OFFSET.
package page

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Limits of the page size.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// List is the response envelope of every list endpoint.
type List[T any] struct {
	Data       []T    `json:"data"`
	HasMore    bool   `json:"hasMore"`
	NextCursor string `json:"nextCursor,omitempty"`
	TotalCount int    `json:"totalCount"`
}

// Codec signs and checks cursors with a server secret.
type Codec struct{ key []byte }

// NewCodec returns a codec keyed by secret (shared by all nodes).
func NewCodec(secret []byte) *Codec { return &Codec{key: append([]byte(nil), secret...)} }

// Request is a parsed page request.
type Request struct {
	Limit int
	After string // the keyset position: last key of the previous page, "" for the first
	scope string
}

type payload struct {
	After string `json:"a"`
	Scope string `json:"s"`
}

// Parse reads `limit` and `cursor` from q. scope names the list and its
// filters; a cursor issued under another scope is refused.
func (c *Codec) Parse(q url.Values, scope string) (Request, error) {
	r := Request{Limit: DefaultLimit, scope: scope}
	var f apierr.Fields
	if raw := q.Get("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		switch {
		case err != nil:
			f.Add("limit", apierr.Type, "must be an integer from 1 to %d", MaxLimit)
		case n < 1:
			f.Add("limit", apierr.Minimum, "must be at least 1")
		case n > MaxLimit:
			f.Add("limit", apierr.Maximum, "must be at most %d", MaxLimit)
		default:
			r.Limit = n
		}
	}
	if raw := q.Get("cursor"); raw != "" {
		after, ok := c.open(raw, scope)
		if !ok {
			f.Add("cursor", apierr.Format, "is not a cursor this list issued; pass nextCursor from the previous page unchanged, with the same filters")
		}
		r.After = after
	}
	if err := f.Err(); err != nil {
		return Request{}, err
	}
	return r, nil
}

// Build makes the response for rows fetched with Limit+1 (the extra row only
// tells whether there is more). key returns a row's keyset value.
func Build[T any](c *Codec, r Request, rows []T, total int, key func(T) string) List[T] {
	out := List[T]{Data: rows, TotalCount: total}
	if out.Data == nil {
		out.Data = []T{}
	}
	if len(rows) > r.Limit {
		out.Data = rows[:r.Limit]
		out.HasMore = true
		out.NextCursor = c.seal(key(out.Data[len(out.Data)-1]), r.scope)
	}
	return out
}

func (c *Codec) seal(after, scope string) string {
	body, _ := json.Marshal(payload{After: after, Scope: scope})
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(c.mac(enc))
}

func (c *Codec) open(cursor, scope string) (string, bool) {
	enc, sig, ok := strings.Cut(cursor, ".")
	if !ok {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, c.mac(enc)) {
		return "", false
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	var p payload
	if json.Unmarshal(body, &p) != nil || p.Scope != scope || p.After == "" {
		return "", false
	}
	return p.After, true
}

func (c *Codec) mac(msg string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("cursor|"))
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Scope builds a scope string from a list name and its filter values, so that
// a cursor only continues the list it came from.
func Scope(list string, filters url.Values) string {
	f := url.Values{}
	for k, v := range filters {
		if k == "limit" || k == "cursor" {
			continue
		}
		f[k] = v
	}
	return list + "?" + f.Encode() // Encode sorts by key
}

// Render turns a page of stored rows into their API form, in order; the
// first row that fails to render fails the page.
func Render[R, T any](rows []R, render func(R) (T, error)) ([]T, error) {
	out := make([]T, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = render(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
