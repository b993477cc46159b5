package httpapi

import (
	"errors"
	"net/http"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/jsonx"
)

// decode reads the JSON body into v. When the body is well-formed but has
// unknown or mistyped fields, validate runs over what did decode, so the 400
// lists every invalid field in one response (R-ERR-02). On success the
// service validates as usual.
func decode(r *http.Request, v any, validate func() error) error {
	err := jsonx.Decode(bodyOf(r), v)
	var partial *jsonx.FieldErrors
	if !errors.As(err, &partial) || validate == nil {
		return err
	}
	return apierr.MergeFields(partial.Unwrap(), validate())
}
