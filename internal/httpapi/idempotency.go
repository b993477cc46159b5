package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// idempotent runs rt under its Idempotency-Key (R-IDEM-*): the first request
// runs; a repeat with the same method, path and body replays the stored
// status and body; the same key with a different request is 409 CONFLICT,
// unless the stored response is an error, which is replayed (R-IDEM-12); a
// repeat while the first is still running waits for it, then replays (or gets
// 409 OPERATION_IN_PROGRESS if it takes too long).
func (s *Server) idempotent(rt route, w http.ResponseWriter, r *http.Request) error {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		if rt.requireIdem {
			return idemKeyError("required", "this endpoint requires an Idempotency-Key header")
		}
		return rt.h(w, r)
	}
	hash := requestHash(r)
	if rt.recordsInTx {
		return s.idempotentInTx(rt, w, r, key, hash)
	}
	return s.idempotentClaimed(rt, w, r, key, hash)
}

// idempotentClaimed claims the key in a transaction of its own, runs the
// handler, and settles the key with its response.
func (s *Server) idempotentClaimed(rt route, w http.ResponseWriter, r *http.Request, key, hash string) error {
	tenant := principal(r).Tenant
	lock := randomToken()
	deadline := time.Now().Add(s.opts.IdempotencyWait)
	for {
		rec, claimed, err := s.db.ClaimIdempotencyKey(r.Context(), tenant, key, hash, lock, s.db.Now().Add(s.opts.IdempotencyLock))
		if errors.Is(err, store.ErrConflict) {
			continue // lost an insert race; read the winner's record
		}
		if err != nil {
			return err
		}
		if claimed {
			break
		}
		if rec.RequestHash != hash && !(rec.Done() && rec.StatusCode >= 400) {
			return apierr.Conflict("This Idempotency-Key was already used with a different request; use a new key for a new request")
		}
		if rec.Done() {
			// A stored error is replayed even to a corrected request: the key
			// is spent, and the client must use a new one (R-IDEM-12).
			replayRecord(w, rt, rec)
			return nil
		}
		if time.Now().After(deadline) {
			return apierr.New(apierr.CodeOperationInProgress, "A request with this Idempotency-Key is still in progress; retry later with the same key")
		}
		done, err := s.awaitSettled(r.Context(), tenant, key, deadline)
		if err != nil {
			return err
		}
		if done != nil && (done.RequestHash == hash || done.StatusCode >= 400) {
			replayRecord(w, rt, *done)
			return nil
		}
		// Released, taken over, or lock expired: claim again (a different
		// request's finished success is refused there).
	}

	claim := &idempotency.Claim{Tenant: tenant, Key: key, LockToken: lock}
	rec := &recorder{header: http.Header{}}
	err := rt.h(rec, r.WithContext(idempotency.With(r.Context(), claim)))
	if err != nil {
		rec = &recorder{header: http.Header{}}
		s.writeError(rec, r, err)
	}
	// Settle the key without the request's context: the client leaving must
	// not leave the key half-settled.
	ctx := context.WithoutCancel(r.Context())
	stored, err := s.db.Write().GetIdempotencyKey(ctx, tenant, key)
	switch {
	case err == nil && stored.Done() && stored.LockToken == lock:
		// The service recorded its response with its effect; that is the
		// response, now and on every replay.
		rec.status, rec.body = stored.StatusCode, stored.ResponseBody
	case err == nil && !stored.Done() && stored.LockToken == lock:
		if replayable(rec.status) {
			body := rec.body
			if rt.storedBody != nil && rec.status < 300 {
				body = rt.storedBody(body)
			}
			err = s.db.Write().CompleteIdempotencyKey(ctx, tenant, key, lock, rec.status, body)
		} else {
			err = s.db.Write().ReleaseIdempotencyKey(ctx, tenant, key, lock)
		}
	}
	s.idemWaits.settled(tenant, key)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	rec.send(w)
	return nil
}

// replayRecord sends a finished key's stored response.
func replayRecord(w http.ResponseWriter, rt route, rec store.IdemRecord) {
	status := rec.StatusCode
	if rt.replayStatus != 0 && status >= 200 && status < 300 {
		status = rt.replayStatus
	}
	replay(w, status, rec.ResponseBody)
}

// idempotentInTx runs a recordsInTx handler under an optimistic claim: a key
// seen before takes the claimed path (replay, conflict, or wait); a new key
// runs the handler at once, and its transaction inserts the finished key. Of
// two concurrent requests with one new key, the second's insert fails after
// the first commits (idempotency.ErrRaced), its effect rolls back, and it
// replays the first's response.
func (s *Server) idempotentInTx(rt route, w http.ResponseWriter, r *http.Request, key, hash string) error {
	tenant := principal(r).Tenant
	for i := range 3 {
		err := s.keyTaken(r, tenant, key, i == 0)
		if err == nil {
			return s.idempotentClaimed(rt, w, r, key, hash)
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		claim := &idempotency.Claim{Tenant: tenant, Key: key, Optimistic: true, Hash: hash}
		rec := &recorder{header: http.Header{}, claim: claim}
		err = rt.h(rec, r.WithContext(idempotency.With(r.Context(), claim)))
		if errors.Is(err, idempotency.ErrRaced) {
			continue
		}
		if err == nil && claim.Body != nil {
			rec.status, rec.body = claim.Status, claim.Body
			rec.send(w)
			return nil
		}
		if err != nil {
			rec = &recorder{header: http.Header{}}
			s.writeError(rec, r, err)
		}
		if replayable(rec.status) {
			// A refusal without effect (or, defensively, a success that did
			// not record) is stored now, so the key stays spent (R-IDEM-12).
			ctx := context.WithoutCancel(r.Context())
			err := s.db.Write().InsertIdempotencyRecord(ctx, tenant, key, hash, rec.status, rec.body)
			if errors.Is(err, store.ErrConflict) {
				continue // another request finished first: replay it
			}
			if err != nil {
				return err
			}
		}
		rec.send(w)
		return nil
	}
	return apierr.New(apierr.CodeOperationInProgress, "A request with this Idempotency-Key is still in progress; retry later with the same key")
}

// keyTaken is nil when the tenant holds key, store.ErrNotFound when it does
// not. The first look takes what the credential's statement found
// (authenticatePlatform), when it looked; a later one, after a race, reads.
func (s *Server) keyTaken(r *http.Request, tenant store.Tenant, key string, first bool) error {
	if k, ok := r.Context().Value(keySeenKey{}).(keySeen); ok && first && k.key == key {
		if k.seen {
			return nil
		}
		return store.ErrNotFound
	}
	_, err := s.db.Read().GetIdempotencyKey(r.Context(), tenant, key)
	return err
}

// replayable reports whether a response is stored for replay. Server errors
// and the statuses the spec says are re-run on retry (409, 410, 424; R-IDEM-11)
// are not; nor is 429, which asks the client to come back.
func replayable(status int) bool {
	switch {
	case status >= 500, status == http.StatusConflict, status == http.StatusGone,
		status == http.StatusFailedDependency, status == http.StatusTooManyRequests:
		return false
	}
	return true
}

func replay(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func idemKeyError(constraint, msg string) error {
	var f apierr.Fields
	f.Add("Idempotency-Key", constraint, "%s", msg)
	return f.Err()
}

// requestHash identifies "the same request": method, path with query, body.
func requestHash(r *http.Request) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s\n", r.Method, r.URL.RequestURI())
	h.Write(bytes.TrimSpace(bodyOf(r)))
	return hex.EncodeToString(h.Sum(nil))
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recorder captures a response so it can be stored before it is sent.
type recorder struct {
	header http.Header
	status int
	body   []byte
	// claim, when set, is the optimistic claim the handler runs under: once
	// its service has recorded a response (claim.Body), idempotentInTx sends
	// that in place of whatever the handler writes (see writeRecorded).
	claim *idempotency.Claim
}

// writeRecorded answers with the body the handler's service recorded under
// the request's Idempotency-Key in the transaction that made its effect
// (idempotency.Record), when it recorded one on an optimistic claim. That
// body, with the claim's status, is what idempotentInTx sends whatever the
// handler writes, and it is the same encoding (idempotency.Encode) of the
// same response, so writeJSON need not encode the response a second time.
func (r *recorder) writeRecorded(status int) bool {
	if r.claim == nil || r.claim.Body == nil {
		return false
	}
	r.header.Set("Content-Type", "application/json")
	r.WriteHeader(status)
	r.body = r.claim.Body
	return true
}

func (rec *recorder) send(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body)
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
