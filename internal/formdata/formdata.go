// Package formdata reads multipart/form-data request bodies for every route
// that accepts an upload. Whatever goes wrong in the framing — a body cut
// short, a missing closing boundary, a malformed part header — is a 400
// INVALID_INPUT naming the part being read, whether it is met between parts
// or inside one while a service copies the part's content: a malformed upload
// is never a 500 (R-ERR-01).
package formdata

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// BodyField names the body as a whole in details.errors[] when no part is
// being read.
const BodyField = "(body)"

// Boundary returns the boundary of a multipart/form-data Content-Type, or
// false when contentType is anything else.
func Boundary(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// MediaType checks that a request body is multipart/form-data and returns
// its boundary. Any other media type, or none, is 415
// UNSUPPORTED_MEDIA_TYPE naming Content-Type in details.errors[], as a JSON
// route answers a body of the wrong type; multipart/form-data without a
// boundary is a malformed body, 400 INVALID_INPUT. fileField names the
// route's file field for the reason.
func MediaType(contentType, fileField string) (string, error) {
	if b, ok := Boundary(contentType); ok {
		return b, nil
	}
	var f apierr.Fields
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && mt == "multipart/form-data" {
		f.Add("Content-Type", apierr.Format, "must carry the multipart boundary parameter")
		return "", f.Err()
	}
	f.Add("Content-Type", apierr.Enum, "must be multipart/form-data (with a boundary)")
	e, _ := apierr.From(f.Err())
	reason := "The request body must be multipart/form-data, the file in field `" + fileField + "`"
	if contentType == "" {
		reason += " (the request has no Content-Type)"
	} else {
		reason += " (not " + strconv.Quote(contentType) + ")"
	}
	return "", apierr.New(apierr.CodeUnsupportedMedia, reason).WithDetails(e.Details)
}

// Limits are the sizes an upload route allows, for ExplainOversized.
type Limits struct {
	FileField string
	MinFile   int64 // smallest file, for the message
	MaxFile   int64 // largest file
	MaxText   int64 // largest other field
	MaxBody   int64 // the route's body limit
}

// ExplainOversized explains a multipart body longer than l.MaxBody, given
// its first l.MaxBody bytes (the HTTP layer keeps no more, so memory stays
// bounded): a file over l.MaxFile is 400 INVALID_INPUT maxLength on the
// file field, like a smaller file over the limit; otherwise the part (or
// the body as a whole) that made it too long is named, also maxLength. It
// always returns an error.
func ExplainOversized(contentType string, prefix []byte, l Limits) error {
	var f apierr.Fields
	tooLong := func(field string) error {
		f.Add(field, apierr.MaxLength, "makes the request body longer than %d bytes; upload one file of %d to %d bytes",
			l.MaxBody, l.MinFile, l.MaxFile)
		return f.Err()
	}
	boundary, err := MediaType(contentType, l.FileField)
	if err != nil {
		return err
	}
	mr := NewReader(bytes.NewReader(prefix), boundary)
	for {
		p, err := mr.NextPart()
		if err != nil {
			// The prefix ends between parts or inside a header: the body
			// as a whole is too long.
			return tooLong(BodyField)
		}
		limit := l.MaxText
		if p.FormName() == l.FileField {
			limit = l.MaxFile
		}
		n, err := io.Copy(io.Discard, io.LimitReader(p, limit+1))
		switch {
		case n > limit && p.FormName() == l.FileField:
			f.Add(l.FileField, apierr.MaxLength, "must be at most %d bytes", l.MaxFile)
			return f.Err()
		case n > limit || err != nil:
			name := p.FormName()
			if name == "" {
				name = BodyField
			}
			return tooLong(name)
		}
	}
}

// Reader iterates over the parts of a body.
type Reader struct {
	mr    *multipart.Reader
	final *finalBoundary
	last  string // the form name of the part read last
}

// NewReader reads body, framed by boundary (see Boundary).
func NewReader(body io.Reader, boundary string) *Reader {
	final := &finalBoundary{r: body, delim: []byte("\n--" + boundary + "--"), tail: []byte("\n")}
	return &Reader{mr: multipart.NewReader(final, boundary), final: final, last: BodyField}
}

// NextPart returns the next part, io.EOF after the last one, or an
// INVALID_INPUT error (a *http.MaxBytesError from the body passes through
// unchanged, for the caller to answer as it must).
func (r *Reader) NextPart() (*Part, error) {
	p, err := r.mr.NextPart()
	// Only a bare io.EOF after the closing boundary is the end of the form:
	// a body cut short between parts is "multipart: NextPart: EOF", which
	// wraps io.EOF, and one cut inside a part's header is a bare io.EOF.
	if err == io.EOF && r.final.seen { //nolint:errorlint // see above
		return nil, io.EOF
	}
	if err == io.EOF { //nolint:errorlint // see above
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, Malformed(r.last, err)
	}
	name := p.FormName()
	if name == "" {
		name = BodyField
	}
	r.last = name
	return &Part{Part: p, name: name}, nil
}

// Part is one part of the form. Its Read reports framing errors as
// INVALID_INPUT, so code that copies a part (a blob store, a CSV reader)
// passes a client error on instead of failing with io.ErrUnexpectedEOF.
type Part struct {
	*multipart.Part
	name string
}

// Read reads the part's content.
func (p *Part) Read(b []byte) (int, error) {
	n, err := p.Part.Read(b)
	if err != nil && err != io.EOF { //nolint:errorlint // a bare io.EOF ends the part

		err = Malformed(p.name, err)
	}
	return n, err
}

// Malformed is the error for a framing problem met while reading field (a
// part's form name, or BodyField). A *http.MaxBytesError is returned as is.
func Malformed(field string, err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	if _, ok := apierr.From(err); ok {
		return err
	}
	var f apierr.Fields
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		f.Add(field, apierr.Format, "the multipart body ends before this part does (was the upload cut short?)")
	} else {
		f.Add(field, apierr.Format, "the multipart body is malformed: %v", err)
	}
	return f.Err()
}

// finalBoundary notes whether the closing delimiter ("--boundary--" at the
// start of a line) has passed through it.
type finalBoundary struct {
	r     io.Reader
	delim []byte
	tail  []byte // the last len(delim)-1 bytes read, for a delimiter split across reads
	seen  bool
}

func (f *finalBoundary) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if n == 0 || f.seen {
		return n, err
	}
	keep := len(f.delim) - 1
	joint := append(f.tail, b[:min(n, keep)]...)
	f.seen = bytes.Contains(joint, f.delim) || bytes.Contains(b[:n], f.delim)
	if n >= keep {
		f.tail = append(f.tail[:0], b[n-keep:n]...)
	} else {
		f.tail = append(f.tail[:0], joint[max(0, len(joint)-keep):]...)
	}
	return n, err
}

// Text reads a text part of at most max bytes. A longer value is a
// maxLength error and one that is not UTF-8 (or holds a NUL) a format error, both on the
// part's name; framing errors are as for Read.
func (p *Part) Text(max int) (string, error) {
	b, err := io.ReadAll(io.LimitReader(p, int64(max)+1))
	if err != nil {
		return "", err
	}
	var f apierr.Fields
	switch {
	case len(b) > max:
		f.Add(p.name, apierr.MaxLength, "must be at most %d bytes", max)
	case !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0:
		f.Add(p.name, apierr.Format, "must be UTF-8 text without NUL")
	}
	if err := f.Err(); err != nil {
		return "", err
	}
	return string(b), nil
}
