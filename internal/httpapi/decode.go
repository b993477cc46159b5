package httpapi

import (
	"errors"
	"net/http"

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
	err := jsonx.Decode(bodyOf(r), v)
	var partial *jsonx.FieldErrors
	if !errors.As(err, &partial) || validate == nil {
		return err
	}
	return apierr.MergeFields(partial.Unwrap(), validate(*v))
}
