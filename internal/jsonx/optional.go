// Package jsonx decodes request bodies strictly: malformed JSON, unknown
// fields, wrongly typed values, keys repeated in one object, invalid UTF-8
// and lone surrogate escapes are reported together, each with its path,
// before anything reaches a service.
package jsonx

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Optional distinguishes an omitted field (Set false) from an explicit null
// (Set and Null) and a value, for PATCH semantics such as "null clears,
// omitted preserves".
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records that the field was present.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		o.Null = true
		var zero T
		o.Value = zero
		return nil
	}
	o.Null = false
	return json.Unmarshal(b, &o.Value)
}

// Ptr returns nil for null or omitted, else a pointer to the value.
func (o Optional[T]) Ptr() *T {
	if !o.Set || o.Null {
		return nil
	}
	v := o.Value
	return &v
}

// elemType lets the strict walker check the wrapped type.
func (Optional[T]) elemType() reflect.Type { return reflect.TypeFor[T]() }

type optionalType interface{ elemType() reflect.Type }
