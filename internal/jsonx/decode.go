package jsonx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Decode parses body into v (a pointer to a struct). An empty body decodes to
// the zero value, so endpoints without a body (execute, approve…) accept an
// empty POST; endpoints that need fields report them missing in validation.
// It never partially fills v on error.
func Decode(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return apierr.InvalidInput("Malformed JSON: " + syntaxMessage(err))
	}
	if dec.More() {
		return apierr.InvalidInput("Malformed JSON: unexpected data after the top-level value")
	}
	if _, ok := generic.(map[string]any); !ok {
		return apierr.InvalidInput("The request body must be a JSON object")
	}
	var f apierr.Fields
	checkStrict(&f, trimmed)
	clean := walk(&f, "", generic, reflect.TypeOf(v).Elem())
	if f.Len() > 0 {
		// Decode what was valid so the caller can validate it too and answer
		// with every invalid field at once (R-ERR-02).
		if b, err := json.Marshal(clean); err == nil {
			target := reflect.New(reflect.TypeOf(v).Elem())
			if json.Unmarshal(b, target.Interface()) == nil {
				reflect.ValueOf(v).Elem().Set(target.Elem())
			}
		}
		return &FieldErrors{err: f.Err()}
	}
	target := reflect.New(reflect.TypeOf(v).Elem())
	if err := json.Unmarshal(trimmed, target.Interface()); err != nil {
		return apierr.InvalidInput("Invalid request body: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	reflect.ValueOf(v).Elem().Set(target.Elem())
	return nil
}

// FieldErrors is returned when the body is well-formed JSON but some fields
// are unknown or of the wrong type. The target then holds the valid rest.
type FieldErrors struct{ err error }

func (e *FieldErrors) Error() string { return e.err.Error() }

// Unwrap exposes the *apierr.Error listing the fields.
func (e *FieldErrors) Unwrap() error { return e.err }

func syntaxMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk checks a decoded JSON value against the Go type it will land in,
// records every unknown field and type mismatch, and returns the value with
// those removed.
func walk(f *apierr.Fields, path string, val any, t reflect.Type) any {
	ti := infoOf(t)
	if ti.optional != nil {
		if val == nil {
			return nil
		}
		return walk(f, path, val, ti.optional)
	}
	if t.Kind() == reflect.Pointer {
		if val == nil {
			return nil
		}
		return walk(f, path, val, t.Elem())
	}
	if val == nil {
		return nil // null leaves a non-pointer field at its zero value; validation decides
	}
	switch {
	case t == timeType:
		s, ok := val.(string)
		if !ok {
			f.Add(path, apierr.Type, "must be an RFC 3339 date-time string")
			return nil
		} else if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			f.Add(path, apierr.Format, "must be an RFC 3339 date-time such as 2025-10-13T09:30:00Z")
			return nil
		}
		return val
	case t == rawMessageType, t.Kind() == reflect.Interface:
		return val
	case ti.unmarshaler:
		return val // the type validates itself when unmarshalled
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			f.Add(path, apierr.Type, "must be an object")
			return nil
		}
		fields := ti.fields
		out := map[string]any{}
		for key, v := range obj {
			ft, ok := fields[key]
			if !ok {
				f.Add(join(path, key), apierr.AdditionalProperties, "is not a known field")
				continue
			}
			if c := walk(f, join(path, key), v, ft); c != nil || v == nil {
				out[key] = c
			}
		}
		return out
	case reflect.Map:
		obj, ok := val.(map[string]any)
		if !ok {
			f.Add(path, apierr.Type, "must be an object")
			return nil
		}
		out := map[string]any{}
		for key, v := range obj {
			if c := walk(f, join(path, key), v, t.Elem()); c != nil {
				out[key] = c
			}
		}
		return out
	case reflect.Slice, reflect.Array:
		arr, ok := val.([]any)
		if !ok {
			f.Add(path, apierr.Type, "must be an array")
			return nil
		}
		out := make([]any, 0, len(arr))
		for i, v := range arr {
			if c := walk(f, fmt.Sprintf("%s[%d]", path, i), v, t.Elem()); c != nil {
				out = append(out, c)
			}
		}
		return out
	case reflect.String:
		if _, ok := val.(string); !ok {
			f.Add(path, apierr.Type, "must be a string")
			return nil
		}
	case reflect.Bool:
		if _, ok := val.(bool); !ok {
			f.Add(path, apierr.Type, "must be a boolean")
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !checkInt(f, path, val, t.Bits(), true) {
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if !checkInt(f, path, val, t.Bits(), false) {
			return nil
		}
	case reflect.Float32, reflect.Float64:
		n, ok := val.(json.Number)
		if !ok {
			f.Add(path, apierr.Type, "must be a number")
			return nil
		} else if x, err := n.Float64(); err != nil || math.IsInf(x, 0) {
			f.Add(path, apierr.Type, "must be a finite number")
			return nil
		}
	}
	return val
}

func checkInt(f *apierr.Fields, path string, val any, bits int, signed bool) bool {
	n, ok := val.(json.Number)
	if !ok {
		f.Add(path, apierr.Type, "must be an integer")
		return false
	}
	var err error
	if signed {
		_, err = strconv.ParseInt(n.String(), 10, bits)
	} else {
		_, err = strconv.ParseUint(n.String(), 10, bits)
	}
	if err == nil {
		return true
	}
	if errors.Is(err, strconv.ErrRange) {
		f.Add(path, apierr.Maximum, "is out of range for a %d-bit integer", bits)
		return false
	}
	f.Add(path, apierr.Type, "must be an integer (amounts are in the currency's smallest unit)")
	return false
}

// typeInfo is what walk asks of a type, worked out once per type (request
// types are few; reflect's Implements and a struct's tags cost more than
// the walk itself).
type typeInfo struct {
	optional    reflect.Type // the element type of an Optional, else nil
	unmarshaler bool         // *T implements json.Unmarshaler
	fields      map[string]reflect.Type
}

var typeInfos sync.Map // reflect.Type → *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti := &typeInfo{unmarshaler: reflect.PointerTo(t).Implements(unmarshalerType)}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[optionalType]()) {
		ti.optional = reflect.New(t).Interface().(optionalType).elemType()
	}
	if t.Kind() == reflect.Struct {
		ti.fields = structFields(t) // read only from here on
	}
	actual, _ := typeInfos.LoadOrStore(t, ti)
	return actual.(*typeInfo)
}

// structFields maps JSON names to field types, flattening embedded structs the
// way encoding/json does.
func structFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range structFields(et) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	return out
}
