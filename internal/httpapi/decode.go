package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/jsonx"
)

// decode reads the JSON body into v. When the body is well-formed but has
// unknown or mistyped fields, validate runs over the value that did decode, so
// the 400 lists every invalid field in one response (R-ERR-02). On success the
// service validates as usual.
//
// validate receives the decoded value rather than closing over v: a method
// value such as req.Validate would copy req before decoding (value receiver)
// and validate an empty request; with this signature that mistake does not
// compile.
func decode[T any](r *http.Request, v *T, validate func(T) error) error {
	if err := jsonMediaType(r); err != nil {
		return err
	}
	err := jsonx.Decode(bodyOf(r), v)
	var partial *jsonx.FieldErrors
	if !errors.As(err, &partial) || validate == nil {
		return err
	}
	return apierr.MergeFields(partial.Unwrap(), validate(*v))
}

// jsonMediaType refuses a JSON body sent as anything but application/json
// (415 UNSUPPORTED_MEDIA_TYPE), including none at all: `curl -d` sends
// application/x-www-form-urlencoded, and a body must not be read as
// something its sender did not say it is (R-CONV-09). A request without a
// body needs no Content-Type.
func jsonMediaType(r *http.Request) error {
	if len(bytes.TrimSpace(bodyOf(r))) == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		if cs, ok := params["charset"]; !ok || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	reason := "The request body is JSON: send it with Content-Type: application/json"
	if ct == "" {
		reason += " (the request has no Content-Type)"
	} else {
		reason += fmt.Sprintf(" (not %q)", ct)
	}
	var f apierr.Fields
	f.Add("Content-Type", apierr.Enum, "must be application/json (optionally with charset=utf-8)")
	e, _ := apierr.From(f.Err())
	return apierr.New(apierr.CodeUnsupportedMedia, reason).WithDetails(e.Details)
}
