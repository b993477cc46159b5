package apierr

import (
	"fmt"
	"sort"
)

// Constraint names used in details.errors[].constraint. The first five are the
// spec's (R-ERR-03); the rest are JSON-Schema keywords for the failures the spec
// does not name.
const (
	Format               = "format"
	Pattern              = "pattern"
	Enum                 = "enum"
	MinLength            = "minLength"
	MaxLength            = "maxLength"
	Required             = "required"
	Minimum              = "minimum"
	Maximum              = "maximum"
	Type                 = "type"
	AdditionalProperties = "additionalProperties"
	UniqueItems          = "uniqueItems"
	MaxItems             = "maxItems"
)

// FieldError is one entry of details.errors[].
type FieldError struct {
	Field      string `json:"field"`
	Constraint string `json:"constraint"`
	Message    string `json:"message"`
}

// Fields collects every invalid field of a request so that one response can
// list them all (R-ERR-02). The zero value is ready to use.
type Fields struct {
	list []FieldError
}

// Add records a failure on field.
func (f *Fields) Add(field, constraint, format string, args ...any) {
	f.list = append(f.list, FieldError{Field: field, Constraint: constraint, Message: fmt.Sprintf(format, args...)})
}

// Merge appends another collector's failures.
func (f *Fields) Merge(o *Fields) { f.list = append(f.list, o.list...) }

// Len reports how many failures were recorded.
func (f *Fields) Len() int { return len(f.list) }

// Err is nil when nothing failed, otherwise a 400 INVALID_INPUT listing each
// failure once, ordered by field for stable responses.
func (f *Fields) Err() error {
	if len(f.list) == 0 {
		return nil
	}
	list := append([]FieldError(nil), f.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Field < list[j].Field })
	reason := fmt.Sprintf("%d invalid field", len(list))
	if len(list) > 1 {
		reason += "s"
	}
	reason += ": " + list[0].Field + " " + list[0].Message
	if len(list) > 1 {
		reason += fmt.Sprintf(" (and %d more)", len(list)-1)
	}
	return New(CodeInvalidInput, reason).WithDetails(map[string]any{"errors": list})
}

// MergeFields combines two validation errors into one INVALID_INPUT listing
// both sets of fields; a field already reported by first is not repeated from
// second. Either may be nil; a non-validation error wins as is.
func MergeFields(first, second error) error {
	if first == nil {
		return second
	}
	if second == nil {
		return first
	}
	e1, ok1 := From(first)
	e2, ok2 := From(second)
	l1, f1 := fieldList(e1, ok1)
	l2, f2 := fieldList(e2, ok2)
	if !f1 {
		return first
	}
	if !f2 {
		return second
	}
	var f Fields
	seen := map[string]bool{}
	for _, fe := range l1 {
		f.list = append(f.list, fe)
		seen[fe.Field] = true
	}
	for _, fe := range l2 {
		if !seen[fe.Field] {
			f.list = append(f.list, fe)
		}
	}
	return f.Err()
}

// FieldList returns the field failures carried by a validation error.
func FieldList(err error) []FieldError {
	e, ok := From(err)
	l, _ := fieldList(e, ok)
	return l
}

func fieldList(e *Error, ok bool) ([]FieldError, bool) {
	if !ok || e.Code != CodeInvalidInput {
		return nil, false
	}
	l, ok := e.Details["errors"].([]FieldError)
	return l, ok
}
