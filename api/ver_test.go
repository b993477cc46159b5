package api

import (
	"sort"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// R-VER-02: backwards-compatible additions (response fields among them) may
// appear without a new version, and clients must ignore unknown response
// fields. Our own document must not tell generated clients otherwise: no
// schema a response can hold forbids additional properties. (The server
// stays strict about requests whatever the document says of a schema shared
// by both: an unknown request field is 400, internal/httpapi decode.)
func TestResponsesAllowAdditions_R_VER_02(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*openapi3.Schema]bool{}
	var closed []string
	var walk func(where string, s *openapi3.SchemaRef)
	walk = func(where string, s *openapi3.SchemaRef) {
		if s == nil || s.Value == nil || seen[s.Value] {
			return
		}
		v := s.Value
		seen[v] = true
		if s.Ref != "" {
			where = s.Ref
		}
		if v.AdditionalProperties.Has != nil && !*v.AdditionalProperties.Has {
			closed = append(closed, where)
		}
		for name, p := range v.Properties {
			walk(where+"."+name, p)
		}
		walk(where+"[]", v.Items)
		for _, group := range [][]*openapi3.SchemaRef{v.AllOf, v.OneOf, v.AnyOf} {
			for _, p := range group {
				walk(where, p)
			}
		}
		walk(where+"{}", v.AdditionalProperties.Schema)
	}
	var responses int
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for _, mt := range r.Value.Content {
					responses++
					walk(method+" "+path+" "+status, mt.Schema)
				}
			}
		}
	}
	if responses < 100 {
		t.Fatalf("only %d response bodies found", responses)
	}
	sort.Strings(closed)
	for _, c := range closed {
		t.Errorf("a response schema forbids additional properties: %s", c)
	}
}
