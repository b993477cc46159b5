package api

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestMergedDocumentIsValid(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(openapi3.NewLoader().Context); err != nil {
		t.Fatal(err)
	}
}

func TestMerge_FragmentsAddAndCollide(t *testing.T) {
	base := "openapi: 3.0.3\ninfo: {title: t, version: v}\ntags:\n  - name: A\npaths:\n  /a: {}\ncomponents:\n  schemas:\n    A: {type: string}\n"
	fsys := fstest.MapFS{
		"openapi.yaml": {Data: []byte(base)},
		"paths/b.yaml": {Data: []byte("tags:\n  - name: B\npaths:\n  /b: {}\ncomponents:\n  schemas:\n    B: {type: string}\n  parameters:\n    P: {name: p, in: query, schema: {type: string}}\n")},
	}
	out, err := merge(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/a:", "/b:", "A:", "B:", "name: B", "P:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("merged document lacks %q:\n%s", want, out)
		}
	}
	fsys["paths/c.yaml"] = &fstest.MapFile{Data: []byte("paths:\n  /a: {}\n")}
	if _, err := merge(fsys); err == nil || !strings.Contains(err.Error(), "paths./a") {
		t.Fatalf("a path defined twice must fail: %v", err)
	}
	fsys["paths/c.yaml"] = &fstest.MapFile{Data: []byte("info: {title: x}\n")}
	if _, err := merge(fsys); err == nil {
		t.Fatal("a fragment may not redefine info")
	}
}

// Two fragments that use the same anchor names (as a YAML writer numbers
// them: id001, id002…) still mean what each says, wherever the merge puts
// their parts: here a's alias lands after b's anchor.
func TestMerge_AnchorsStayInTheirFile(t *testing.T) {
	base := "openapi: 3.0.3\ninfo: {title: t, version: v}\npaths: {}\ncomponents:\n  schemas: {}\n"
	frag := func(typ string) string {
		return "paths:\n  /" + typ + ":\n    get:\n      parameters:\n        - {name: a, in: query, schema: &id001 {type: " + typ +
			"}}\n      responses: {'200': {description: ok}}\ncomponents:\n  schemas:\n    Of" + typ + ": *id001\n"
	}
	fsys := fstest.MapFS{
		"openapi.yaml": {Data: []byte(base)},
		"paths/a.yaml": {Data: []byte(frag("string"))},
		"paths/b.yaml": {Data: []byte(frag("integer"))},
	}
	out, err := merge(fsys)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(out)
	if err != nil {
		t.Fatalf("merged document does not load: %v\n%s", err, out)
	}
	for name, want := range map[string]string{"Ofstring": "string", "Ofinteger": "integer"} {
		if got := doc.Components.Schemas[name].Value.Type.Slice()[0]; got != want {
			t.Errorf("schema %s: type %s, want %s", name, got, want)
		}
	}
}
