package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/paymentsd/paymentsd/internal/httpapi"
)

// client calls the public HTTP API with one sandbox token.
type client struct {
	base string // http://host:port/<version>
	auth string
	hc   *http.Client
}

func newClient(server, creds string, conns int) *client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     90 * time.Second,
	}
	return &client{
		base: server + "/" + httpapi.Version,
		auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(creds)),
		hc:   &http.Client{Transport: tr, Timeout: 30 * time.Second},
	}
}

// apiResult is one HTTP answer.
type apiResult struct {
	Status int
	Body   []byte
}

// Code is the error code of a non-2xx answer ("HTTP_<status>" when the body
// has none).
func (r apiResult) Code() string {
	var e struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(r.Body, &e) == nil && e.Code != "" {
		return e.Code
	}
	return fmt.Sprintf("HTTP_%d", r.Status)
}

// do makes one request. body is marshalled to JSON unless nil.
func (c *client) do(ctx context.Context, method, path string, body any, idemKey string) (apiResult, error) {
	var rdr io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return apiResult{}, err
		}
		rdr = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rdr)
	if err != nil {
		return apiResult{}, err
	}
	req.Header.Set("Authorization", c.auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return apiResult{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return apiResult{}, err
	}
	return apiResult{Status: resp.StatusCode, Body: b}, nil
}

// retryable reports whether an answer leaves the outcome unknown, so the
// request must be sent again with the same Idempotency-Key.
func retryable(r apiResult, err error) bool {
	if err != nil {
		return true
	}
	switch {
	case r.Status >= 500, r.Status == http.StatusTooManyRequests:
		return true
	case r.Status == http.StatusConflict && r.Code() == "OPERATION_IN_PROGRESS":
		return true
	}
	return false
}

// doRetry sends the request until the answer is definitive or ctx ends,
// always with the same key. It returns the answer and the number of retries.
func (c *client) doRetry(ctx context.Context, method, path string, body any, idemKey string) (apiResult, int, error) {
	backoff := 20 * time.Millisecond
	for n := 0; ; n++ {
		r, err := c.do(ctx, method, path, body, idemKey)
		if !retryable(r, err) {
			return r, n, nil
		}
		if ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("%s %s: still %d %s", method, path, r.Status, r.Code())
			}
			return r, n, fmt.Errorf("gave up: %w", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		if backoff < 500*time.Millisecond {
			backoff *= 2
		}
	}
}

// create POSTs body with idemKey (retried with it until definitive) and
// returns the id of what was created: 201, or 200 for a replay.
func (c *client) create(ctx context.Context, path string, body any, idemKey string) (string, error) {
	r, _, err := c.doRetry(ctx, "POST", path, body, idemKey)
	if err != nil {
		return "", err
	}
	var made struct {
		ID string `json:"id"`
	}
	if r.Status != http.StatusCreated && r.Status != http.StatusOK || json.Unmarshal(r.Body, &made) != nil || made.ID == "" {
		return "", fmt.Errorf("POST %s: %d %s", path, r.Status, bytes.TrimSpace(r.Body))
	}
	return made.ID, nil
}

// must expects status want and decodes the body into out (if not nil).
func (c *client) must(ctx context.Context, method, path string, body any, want int, out any) error {
	r, _, err := c.doRetry(ctx, method, path, body, "")
	if err != nil {
		return err
	}
	if r.Status != want {
		return fmt.Errorf("%s %s: %d %s", method, path, r.Status, bytes.TrimSpace(r.Body))
	}
	if out != nil {
		return json.Unmarshal(r.Body, out)
	}
	return nil
}
