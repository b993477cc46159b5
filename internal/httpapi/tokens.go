package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/tokens"
)

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	var req tokens.CreateRequest
	if err := decode(r, &req, func(req tokens.CreateRequest) error { return req.Validate(s.db.Now()) }); err != nil {
		return err
	}
	tok, err := s.tokens.Create(r.Context(), principal(r), req)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // the response carries a secret
	writeJSON(w, http.StatusCreated, tok)
	return nil
}

// withoutClientSecret is the stored replay of POST /tokens: the same token,
// without its secret. The secret exists in clear only in the first response
// (the database keeps its hash), so a replay cannot show it; a client that
// lost it deletes the token and creates another.
func withoutClientSecret(body []byte) []byte {
	var tok tokens.Token
	if err := json.Unmarshal(body, &tok); err != nil {
		return []byte("{}") // never the secret
	}
	tok.ClientSecret = ""
	out, err := json.Marshal(tok)
	if err != nil {
		return []byte("{}")
	}
	return out
}

func (s *Server) getToken(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.tokens.Get(r.Context(), principal(r).Tenant, r.PathValue("tokenId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tok)
	return nil
}

func (s *Server) deleteToken(w http.ResponseWriter, r *http.Request) error {
	if err := s.tokens.Delete(r.Context(), principal(r), r.PathValue("tokenId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.TokenFilter{
		Name:          q.Get("name"),
		CreatedAfter:  queryTime(&f, q, "createdAfter"),
		CreatedBefore: queryTime(&f, q, "createdBefore"),
		UpdatedAfter:  queryTime(&f, q, "updatedAfter"),
		UpdatedBefore: queryTime(&f, q, "updatedBefore"),
	}
	return writeListPage(w, r, s.cursors, &f, "tokens", func(after string, limit int) ([]tokens.Token, int, error) {
		return s.tokens.List(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(t tokens.Token) string { return t.ID })
}
