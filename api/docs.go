package api

import (
	"bytes"
	"cmp"
	"fmt"
	"html"
	"html/template"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

var (
	docsOnce sync.Once
	docsPage []byte
)

// docsHTML renders the embedded document on first use; it cannot change
// while the process runs, so once is enough.
func docsHTML() []byte {
	docsOnce.Do(func() {
		page, err := renderDocs(OpenAPI)
		if err != nil {
			// Tests render the document, so this should not happen. If it
			// does, a page naming the problem is better than a crash.
			page = []byte(`<!doctype html><meta charset="utf-8"><title>paymentsd API</title>` +
				`<p>The API description could not be rendered: ` + html.EscapeString(err.Error()) +
				`. The document itself is at <a href="/openapi.yaml">/openapi.yaml</a>.`)
		}
		docsPage = page
	})
	return docsPage
}

// The view model: everything the template shows, already flattened, so the
// template stays free of logic.
type (
	docPage struct {
		Title, Version string
		Intro          template.HTML
		Servers        []string
		Groups         []opGroup
		Schemas        []namedSchema
		Headers        []namedHeader
		Parameters     []paramView
	}
	opGroup struct {
		Name, ID string
		Intro    template.HTML
		Ops      []opView
	}
	opView struct {
		ID, Method, Path, Summary string
		Intro                     template.HTML
		Public                    bool
		Params                    []paramView
		Body                      *bodyView
		Responses                 []responseView
	}
	paramView struct {
		Name, In, Type string
		Required       bool
		Intro          template.HTML
		Notes          []string
	}
	bodyView struct {
		Media    string
		Required bool
		Schema   string // name of the referenced schema, if any
		Fields   []fieldView
	}
	responseView struct {
		Status  string
		Intro   template.HTML
		Headers []headerView
		Media   []string
		Schema  string
		Type    string      // for bodies that are not objects, such as text
		Fields  []fieldView // empty when the schema is only linked
	}
	headerView struct {
		Name, Ref string // Ref names the shared header it points to
		Intro     template.HTML
	}
	fieldView struct {
		Depth              int
		Name, Type, Schema string
		Required, Nullable bool
		Intro              template.HTML
		Notes              []string
	}
	namedSchema struct {
		Name   string
		Type   string
		Intro  template.HTML
		Notes  []string
		Fields []fieldView
	}
	namedHeader struct {
		Name, Type string
		Intro      template.HTML
	}
)

// renderDocs turns an OpenAPI document into a self-contained HTML page.
func renderDocs(data []byte) ([]byte, error) {
	loader := openapi3.NewLoader()
	// Origins carry line numbers, which give back the document's order of
	// operations and properties; the parsed model keeps them in maps.
	loader.IncludeOrigin = true
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("loading the OpenAPI document: %w", err)
	}
	p := docPage{Title: "API", Servers: serverURLs(doc.Servers)}
	if doc.Info != nil {
		p.Title, p.Version, p.Intro = doc.Info.Title, doc.Info.Version, richText(doc.Info.Description)
	}
	p.Groups = groups(doc)
	if doc.Components != nil {
		for _, name := range slices.Sorted(maps.Keys(doc.Components.Schemas)) {
			s := doc.Components.Schemas[name].Value
			p.Schemas = append(p.Schemas, namedSchema{Name: name, Type: typeName(&openapi3.SchemaRef{Value: s}),
				Intro: richText(s.Description), Notes: notes(s), Fields: fields(s, 0, false, nil)})
		}
		for _, name := range slices.Sorted(maps.Keys(doc.Components.Headers)) {
			h := doc.Components.Headers[name].Value
			p.Headers = append(p.Headers, namedHeader{Name: name, Type: typeName(h.Schema), Intro: richText(h.Description)})
		}
		for _, name := range slices.Sorted(maps.Keys(doc.Components.Parameters)) {
			p.Parameters = append(p.Parameters, paramOf(doc.Components.Parameters[name].Value))
		}
	}
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// groups sorts the operations under their first tag, tags in the order the
// document lists them, operations in document order.
func groups(doc *openapi3.T) []opGroup {
	var out []opGroup
	index := map[string]int{}
	add := func(name string, intro template.HTML) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(out)
		out = append(out, opGroup{Name: name, ID: "tag-" + anchor(name), Intro: intro})
		return len(out) - 1
	}
	for _, t := range doc.Tags {
		add(t.Name, richText(t.Description))
	}
	type placed struct {
		line int
		op   opView
	}
	byGroup := map[int][]placed{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			g := add(tag, "")
			byGroup[g] = append(byGroup[g], placed{line(op.Origin), operation(doc, path, item, method, op)})
		}
	}
	for i := range out {
		ops := byGroup[i]
		slices.SortFunc(ops, func(a, b placed) int {
			return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.op.Path, b.op.Path), cmp.Compare(a.op.Method, b.op.Method))
		})
		for _, o := range ops {
			out[i].Ops = append(out[i].Ops, o.op)
		}
	}
	return slices.DeleteFunc(out, func(g opGroup) bool { return len(g.Ops) == 0 })
}

func operation(doc *openapi3.T, path string, item *openapi3.PathItem, method string, op *openapi3.Operation) opView {
	servers := doc.Servers
	if len(item.Servers) > 0 {
		servers = item.Servers
	}
	if op.Servers != nil && len(*op.Servers) > 0 {
		servers = *op.Servers
	}
	v := opView{
		Method:  method,
		Path:    basePath(servers) + path,
		Summary: op.Summary,
		Intro:   richText(op.Description),
		// An operation opts out of the document's security with "security: []".
		Public: len(doc.Security) == 0 || (op.Security != nil && len(*op.Security) == 0),
	}
	v.ID = "op-" + anchor(cmp.Or(op.OperationID, method+" "+path))
	for _, pr := range append(slices.Clone(item.Parameters), op.Parameters...) {
		if pr.Value != nil {
			v.Params = append(v.Params, paramOf(pr.Value))
		}
	}
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		for _, media := range slices.Sorted(maps.Keys(rb.Value.Content)) {
			mt := rb.Value.Content[media]
			b := &bodyView{Media: media, Required: rb.Value.Required}
			if mt.Schema != nil {
				b.Schema = refName(mt.Schema.Ref)
				b.Fields = fields(mt.Schema.Value, 0, true, nil)
			}
			v.Body = b
			break // every body here is JSON; a second media type would repeat the first
		}
	}
	statuses := slices.Collect(maps.Keys(op.Responses.Map()))
	slices.SortFunc(statuses, func(a, b string) int { return cmp.Compare(statusOrder(a), statusOrder(b)) })
	for _, status := range statuses {
		v.Responses = append(v.Responses, responseOf(status, op.Responses.Value(status).Value))
	}
	return v
}

func responseOf(status string, r *openapi3.Response) responseView {
	v := responseView{Status: status}
	if r == nil {
		return v
	}
	if r.Description != nil {
		v.Intro = richText(*r.Description)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		h := r.Headers[name]
		hv := headerView{Name: name, Ref: refName(h.Ref)}
		if hv.Ref == "" && h.Value != nil {
			hv.Intro = inlineText(h.Value.Description)
		}
		v.Headers = append(v.Headers, hv)
	}
	v.Media = slices.Sorted(maps.Keys(r.Content))
	for _, media := range v.Media {
		mt := r.Content[media]
		if mt.Schema == nil || mt.Schema.Value == nil {
			continue
		}
		v.Schema = refName(mt.Schema.Ref)
		// Error bodies share one schema; listing its fields under every error
		// status would bury the success shapes, so those only link to it.
		if v.Schema == "" || statusOrder(status) < 400 {
			v.Fields = fields(mt.Schema.Value, 0, true, nil)
		}
		if len(v.Fields) == 0 && v.Schema == "" {
			v.Type = typeName(mt.Schema)
		}
		break
	}
	return v
}

func paramOf(p *openapi3.Parameter) paramView {
	v := paramView{Name: p.Name, In: p.In, Required: p.Required, Intro: richText(p.Description)}
	if p.Schema != nil && p.Schema.Value != nil {
		v.Type = typeName(p.Schema)
		v.Notes = notes(p.Schema.Value)
	}
	return v
}

// maxDepth stops runaway nesting; the appendix still shows every schema.
const maxDepth = 6

// fields lists the properties of an object schema, each followed by its own
// properties one level deeper. With expand false, properties that refer to a
// named schema are not opened (the appendix lists that schema on its own).
// seen holds the schemas being expanded, so a recursive schema stops.
func fields(s *openapi3.Schema, depth int, expand bool, seen []*openapi3.Schema) []fieldView {
	if s == nil || depth > maxDepth || slices.Contains(seen, s) {
		return nil
	}
	seen = append(seen, s)
	names := slices.Collect(maps.Keys(s.Properties))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(refLine(s.Properties[a]), refLine(s.Properties[b])), cmp.Compare(a, b))
	})
	var out []fieldView
	for _, name := range names {
		p := s.Properties[name]
		if p.Value == nil {
			continue
		}
		f := fieldView{Depth: depth, Name: name, Type: typeName(p), Schema: refName(p.Ref),
			Required: slices.Contains(s.Required, name), Nullable: p.Value.Nullable,
			Intro: richText(p.Value.Description), Notes: notes(p.Value)}
		child := p
		if p.Value.Type.Is("array") && p.Value.Items != nil {
			child = p.Value.Items
			f.Schema = cmp.Or(f.Schema, refName(child.Ref))
			if n := notes(child.Value); len(n) > 0 {
				f.Notes = append(f.Notes, "each item: "+strings.Join(n, "; "))
			}
		}
		out = append(out, f)
		if child.Value != nil && (expand || child.Ref == "") {
			out = append(out, fields(child.Value, depth+1, expand, seen)...)
		}
	}
	return out
}

// typeName is a short type such as "string (date-time)" or "array of object".
func typeName(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "any"
	}
	s := ref.Value
	t := strings.Join(s.Type.Slice(), " or ")
	switch {
	case t == "":
		t = "any"
	case s.Type.Is("array"):
		t = "array of " + typeName(s.Items)
	case s.Format != "":
		t += " (" + s.Format + ")"
	}
	return t
}

// notes lists a schema's constraints in words.
func notes(s *openapi3.Schema) []string {
	if s == nil {
		return nil
	}
	var out []string
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = fmt.Sprint(e)
		}
		out = append(out, "one of: "+strings.Join(vals, ", "))
	}
	num := func(f *float64) string { return strconv.FormatFloat(*f, 'f', -1, 64) }
	switch {
	case s.Min != nil && s.Max != nil:
		out = append(out, "from "+num(s.Min)+" to "+num(s.Max))
	case s.Min != nil:
		out = append(out, "at least "+num(s.Min))
	case s.Max != nil:
		out = append(out, "at most "+num(s.Max))
	}
	if s.MinLength > 0 {
		out = append(out, "at least "+count(s.MinLength, "character"))
	}
	if s.MaxLength != nil {
		out = append(out, "at most "+count(*s.MaxLength, "character"))
	}
	if s.MinItems > 0 {
		out = append(out, "at least "+count(s.MinItems, "item"))
	}
	if s.MaxItems != nil {
		out = append(out, "at most "+count(*s.MaxItems, "item"))
	}
	if s.UniqueItems {
		out = append(out, "no duplicates")
	}
	if s.Pattern != "" {
		out = append(out, "pattern "+s.Pattern)
	}
	if s.Default != nil {
		out = append(out, fmt.Sprintf("default %v", s.Default))
	}
	if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
		out = append(out, "no other fields allowed")
	}
	return out
}

func count(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatUint(n, 10) + " " + noun + "s"
}

func refName(ref string) string {
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		return ref[i+1:]
	}
	return ref
}

func refLine(ref *openapi3.SchemaRef) int {
	if ref.Origin != nil {
		return line(ref.Origin)
	}
	if ref.Value != nil {
		return line(ref.Value.Origin)
	}
	return 0
}

func line(o *openapi3.Origin) int {
	if o == nil || o.Key == nil {
		return 0
	}
	return o.Key.Line
}

func basePath(servers openapi3.Servers) string {
	if len(servers) == 0 {
		return ""
	}
	u, err := url.Parse(servers[0].URL)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

func serverURLs(servers openapi3.Servers) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.URL
	}
	return out
}

// statusOrder sorts "default" after every numbered status.
func statusOrder(status string) int {
	n, err := strconv.Atoi(status)
	if err != nil {
		return 1000
	}
	return n
}

var nonAnchor = regexp.MustCompile(`[^a-zA-Z0-9]+`)

func anchor(s string) string { return strings.Trim(nonAnchor.ReplaceAllString(s, "-"), "-") }

var (
	codeSpan   = regexp.MustCompile("`([^`]+)`")
	strongSpan = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// richText renders the little Markdown the document uses: paragraphs, "- "
// lists, `code` and **bold**. The text is escaped first and only then marked
// up, so nothing in a description can inject HTML.
func richText(s string) template.HTML {
	var b strings.Builder
	for _, block := range strings.Split(strings.TrimSpace(s), "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if lines[0] == "" {
			continue
		}
		if allListItems(lines) {
			b.WriteString("<ul>")
			for _, l := range lines {
				b.WriteString("<li>" + inline(strings.TrimPrefix(strings.TrimSpace(l), "- ")) + "</li>")
			}
			b.WriteString("</ul>")
			continue
		}
		b.WriteString("<p>" + inline(strings.Join(lines, " ")) + "</p>")
	}
	return template.HTML(b.String()) // safe: every piece of text went through inline
}

// inlineText is richText for a phrase inside a sentence: no paragraphs.
func inlineText(s string) template.HTML {
	return template.HTML(inline(strings.Join(strings.Fields(s), " "))) // safe: see inline
}

func allListItems(lines []string) bool {
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "- ") {
			return false
		}
	}
	return true
}

func inline(s string) string {
	s = template.HTMLEscapeString(s)
	s = codeSpan.ReplaceAllString(s, "<code>$1</code>")
	return strongSpan.ReplaceAllString(s, "<strong>$1</strong>")
}

var pageTemplate = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} {{.Version}}</title>
<style>
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; margin: 0; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.5rem 4rem; }
h1 { margin-bottom: 0; } h1 small { font-size: 55%; color: #5a6270; font-weight: normal; }
h2 { border-bottom: 2px solid #dfe3ea; padding-bottom: .2rem; margin-top: 2.5rem; }
h3 { margin: 0; font-size: 1.05rem; }
h4 { margin: 1rem 0 .3rem; font-size: .95rem; }
code, .path { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
p code, li code, td code { background: #f1f3f7; padding: 0 .25em; border-radius: 3px; }
nav ul { list-style: none; padding-left: 1rem; } nav > ul { padding-left: 0; }
a { color: #1f5fbf; text-decoration: none; } a:hover { text-decoration: underline; }
.op { border: 1px solid #dfe3ea; border-radius: 6px; padding: .8rem 1rem; margin: 1.2rem 0; }
.method { display: inline-block; min-width: 4.2em; text-align: center; font: bold 12px/1.8 ui-monospace, monospace;
  color: #fff; border-radius: 4px; margin-right: .4rem; background: #5a6270; }
.GET { background: #2f7d32; } .POST { background: #1f5fbf; } .PATCH { background: #a3620a; }
.PUT { background: #7a4fb5; } .DELETE { background: #b3261e; }
.path { font-size: 15px; font-weight: 600; }
.tag { display: inline-block; font-size: 11px; border-radius: 3px; padding: 0 .35em; margin-left: .3em;
  border: 1px solid #c7ccd6; color: #5a6270; vertical-align: middle; }
.tag.req { border-color: #b3261e; color: #b3261e; }
table { border-collapse: collapse; width: 100%; margin: .3rem 0 .6rem; font-size: 14px; }
th, td { text-align: left; vertical-align: top; padding: .3rem .5rem; border-bottom: 1px solid #eceef2; }
th { font-weight: 600; color: #5a6270; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td p { margin: 0 0 .3rem; } td p:last-child { margin: 0; }
.notes { color: #5a6270; font-size: 13px; }
.status { font-weight: 700; }
.d1 { padding-left: 1.5rem; } .d2 { padding-left: 3rem; } .d3 { padding-left: 4.5rem; }
.d4 { padding-left: 6rem; } .d5 { padding-left: 7.5rem; } .d6 { padding-left: 9rem; }
.d1::before, .d2::before, .d3::before, .d4::before, .d5::before, .d6::before { content: "└ "; color: #a0a6b0; }
</style>
</head>
<body><main>
<h1>{{.Title}} <small>version {{.Version}}</small></h1>
<p>{{range .Servers}}Base URL <code>{{.}}</code>. {{end}}The machine-readable description is at <a href="/openapi.yaml">/openapi.yaml</a>.</p>
{{.Intro}}

<nav><h2>Contents</h2><ul>
{{- range .Groups}}
<li><a href="#{{.ID}}">{{.Name}}</a><ul>
{{- range .Ops}}<li><a href="#{{.ID}}"><span class="method {{.Method}}">{{.Method}}</span><code>{{.Path}}</code></a> {{.Summary}}</li>{{end}}
</ul></li>
{{- end}}
<li><a href="#schemas">Schemas</a></li>
<li><a href="#shared">Shared headers and parameters</a></li>
</ul></nav>

{{range .Groups}}
<section id="{{.ID}}"><h2>{{.Name}}</h2>{{.Intro}}
{{range .Ops}}
<div class="op" id="{{.ID}}">
<h3><span class="method {{.Method}}">{{.Method}}</span><span class="path">{{.Path}}</span>
{{if .Public}}<span class="tag">no credentials</span>{{else}}<span class="tag">HTTP Basic</span>{{end}}</h3>
{{if .Summary}}<p><strong>{{.Summary}}</strong></p>{{end}}
{{.Intro}}
{{if .Params}}<h4>Parameters</h4>
<table><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code>{{if .Required}}<span class="tag req">required</span>{{end}}</td><td>{{.In}}</td><td>{{.Type}}</td>
<td>{{.Intro}}{{if .Notes}}<div class="notes">{{range $i, $n := .Notes}}{{if $i}}; {{end}}{{$n}}{{end}}</div>{{end}}</td></tr>
{{end}}</table>{{end}}
{{with .Body}}<h4>Request body <span class="notes">{{.Media}}{{with .Schema}} · <a href="#schema-{{.}}">{{.}}</a>{{end}}{{if .Required}} · required{{end}}</span></h4>
{{template "fields" .Fields}}{{end}}
<h4>Responses</h4>
{{range .Responses}}<div><span class="status">{{.Status}}</span>
{{range .Media}} <span class="tag">{{.}}</span>{{end}}
{{with .Schema}} <a href="#schema-{{.}}">{{.}}</a>{{end}}{{with .Type}} <span class="notes">{{.}}</span>{{end}}
{{.Intro}}
{{if .Headers}}<div class="notes">Headers: {{range $i, $h := .Headers}}{{if $i}}, {{end}}{{if $h.Ref}}<a href="#header-{{$h.Ref}}"><code>{{$h.Name}}</code></a>{{else}}<code>{{$h.Name}}</code>{{with $h.Intro}} ({{.}}){{end}}{{end}}{{end}}</div>{{end}}
{{if .Fields}}{{template "fields" .Fields}}{{end}}
</div>
{{end}}
</div>
{{end}}
</section>
{{end}}

<section id="schemas"><h2>Schemas</h2>
{{range .Schemas}}<div class="op" id="schema-{{.Name}}"><h3>{{.Name}} <span class="notes">{{.Type}}</span></h3>
{{.Intro}}{{if .Notes}}<p class="notes">{{range $i, $n := .Notes}}{{if $i}}; {{end}}{{$n}}{{end}}</p>{{end}}
{{if .Fields}}{{template "fields" .Fields}}{{end}}</div>
{{end}}
</section>

<section id="shared"><h2>Shared headers and parameters</h2>
<h4>Response headers</h4>
<table><tr><th>Name</th><th>Type</th><th>Description</th></tr>
{{range .Headers}}<tr id="header-{{.Name}}"><td><code>{{.Name}}</code></td><td>{{.Type}}</td><td>{{.Intro}}</td></tr>
{{end}}</table>
<h4>Parameters</h4>
<table><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr>
{{range .Parameters}}<tr><td><code>{{.Name}}</code></td><td>{{.In}}</td><td>{{.Type}}</td>
<td>{{.Intro}}{{if .Notes}}<div class="notes">{{range $i, $n := .Notes}}{{if $i}}; {{end}}{{$n}}{{end}}</div>{{end}}</td></tr>
{{end}}</table>
</section>
</main></body></html>
{{define "fields"}}<table><tr><th>Field</th><th>Type</th><th>Description</th></tr>
{{range .}}<tr><td class="d{{.Depth}}"><code>{{.Name}}</code>{{if .Required}}<span class="tag req">required</span>{{end}}{{if .Nullable}}<span class="tag">nullable</span>{{end}}</td>
<td>{{.Type}}{{with .Schema}}<br><a href="#schema-{{.}}">{{.}}</a>{{end}}</td>
<td>{{.Intro}}{{if .Notes}}<div class="notes">{{range $i, $n := .Notes}}{{if $i}}; {{end}}{{$n}}{{end}}</div>{{end}}</td></tr>
{{end}}</table>{{end}}
`))
