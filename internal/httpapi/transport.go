package httpapi

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// WrapListener makes the answers Go's HTTP server gives before any handler
// runs JSON error bodies like every other: a request line or header it
// cannot parse, such as a bad %-escape in the path (400), headers over
// MaxHeaderBytes (431), an unknown transfer coding (501) or protocol version
// (505). The server writes those in plain text straight to the connection,
// in one write whose status line is followed by a fixed set of headers;
// the connections of this listener recognise that write and send the JSON
// error instead. Serve the API on the wrapped listener (cmd/paymentsd does).
func WrapListener(ln net.Listener) net.Listener { return jsonErrorListener{ln} }

type jsonErrorListener struct{ net.Listener }

func (l jsonErrorListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonErrorConn{Conn: c}, nil
}

type jsonErrorConn struct{ net.Conn }

func (c *jsonErrorConn) Write(p []byte) (int, error) {
	resp, ok := jsonServerError(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(resp); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite keeps the server's half-close after a 431 working.
func (c *jsonErrorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// serverErrorHeaders follow the status line of every answer net/http's
// server writes itself (net/http/server.go, conn.serve).
const serverErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// jsonServerError turns one of the server's own plain-text answers into the
// same answer with a JSON error body; ok is false for any other write.
func jsonServerError(p []byte) (resp []byte, ok bool) {
	head, text, found := bytes.Cut(p, []byte(serverErrorHeaders))
	if !found || !bytes.HasPrefix(head, []byte("HTTP/1.1 ")) || bytes.Contains(head, []byte("\r\n")) || len(head) < 12 {
		return nil, false
	}
	status, err := strconv.Atoi(string(head[9:12]))
	if err != nil {
		return nil, false
	}
	var e *apierr.Error
	switch status {
	case 400:
		reason := "The HTTP request could not be parsed (a malformed request line, path escape or header)"
		if _, detail, ok := strings.Cut(string(text), ": "); ok {
			reason += ": " + detail
		}
		e = apierr.InvalidInput(reason)
	case 431:
		e = apierr.New("REQUEST_HEADERS_TOO_LARGE", "The request's headers are too large")
	case 501:
		e = apierr.New("NOT_IMPLEMENTED", "The request uses a transfer encoding this server does not implement")
	case 505:
		e = apierr.New("HTTP_VERSION_NOT_SUPPORTED", "The request's HTTP version is not supported; use HTTP/1.1")
	default:
		return nil, false
	}
	body, err := json.Marshal(e)
	if err != nil {
		return nil, false
	}
	rid := make([]byte, 12)
	_, _ = rand.Read(rid)
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"+
		"X-Request-Id: req_%s\r\nConnection: close\r\n\r\n%s", e.Status, statusText(head), len(body), hex.EncodeToString(rid), body), true
}

// statusText is the reason phrase of the server's status line.
func statusText(head []byte) string {
	phrase := string(head[12:])
	phrase, _, _ = strings.Cut(strings.TrimSpace(phrase), ":")
	return phrase
}
