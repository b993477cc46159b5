package api

import (
	"html"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

func TestDocsRendersEveryPath(t *testing.T) {
	page := string(DocsHTML())
	if !strings.HasPrefix(page, "<!doctype html>") || !strings.Contains(page, "</html>") {
		t.Fatalf("not a full page (placeholder or render error?):\n%.500s", page)
	}
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, html.EscapeString(doc.Info.Title)) {
		t.Errorf("page lacks the title %q", doc.Info.Title)
	}
	for path, item := range doc.Paths.Map() {
		base := basePath(doc.Servers)
		if len(item.Servers) > 0 {
			base = basePath(item.Servers)
		}
		if !strings.Contains(page, ">"+base+path+"<") {
			t.Errorf("page does not show path %s", base+path)
		}
		for method, op := range item.Operations() {
			if !strings.Contains(page, html.EscapeString(op.Summary)) {
				t.Errorf("%s %s: summary %q missing", method, path, op.Summary)
			}
		}
	}
	// Nested properties are shown, not only top-level ones.
	for _, want := range []string{"pinTargetOrigin", "maxSpendPerDay", "clientSecret", "Retry-After", "Idempotency-Key"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "https://cdn") {
		t.Error("the page must be self-contained, with no scripts or external assets")
	}
}

func TestDocsEscapesHTML(t *testing.T) {
	const doc = `
openapi: 3.0.3
info:
  title: "T <b>bold</b>"
  version: "1"
  description: |
    Intro with <script>alert(1)</script> and ` + "`<code>`" + ` and **strong**.

    - item <i>one</i>
paths:
  /things/{id}:
    get:
      summary: "Get <img src=x onerror=alert(2)>"
      description: "Say \"hi\" & <em>bye</em>"
      parameters:
        - name: id
          in: path
          required: true
          description: "<u>the id</u>"
          schema: {type: string, pattern: "^<a>$"}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  "<evil>":
                    type: string
                    enum: ["<x>"]
`
	out, err := renderDocs([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, raw := range []string{"<script>", "<b>bold", "<img", "<em>bye", "<u>the", "<i>one", "<evil>", "<x>", "^<a>$"} {
		if strings.Contains(page, raw) {
			t.Errorf("page contains unescaped %q", raw)
		}
	}
	for _, escaped := range []string{"&lt;script&gt;", "&lt;img src=x", "&lt;evil&gt;", "&lt;x&gt;"} {
		if !strings.Contains(page, escaped) {
			t.Errorf("page lacks escaped %q", escaped)
		}
	}
	// The little Markdown the renderer supports still turns into markup.
	for _, want := range []string{"<code>&lt;code&gt;</code>", "<strong>strong</strong>", "<li>item &lt;i&gt;one&lt;/i&gt;</li>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// A broken document must not take the server down: renderDocs reports it.
func TestDocsRejectsBrokenDocument(t *testing.T) {
	if _, err := renderDocs([]byte("openapi: [")); err == nil {
		t.Fatal("want an error for a document that does not parse")
	}
}
