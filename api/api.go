// Package api carries the project's own OpenAPI description of the HTTP API,
// served at /openapi.yaml and rendered as a readable page at /docs.
//
// The document is written in pieces so that each capability describes its own
// endpoints: openapi.yaml holds the header, shared components and the
// foundation's paths; every file in paths/ is a fragment with its own `tags`,
// `paths` and `components`, merged in file-name order when the package loads.
// A key defined twice is an error (the package's tests load the document).
package api

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"sort"

	"go.yaml.in/yaml/v3"
)

//go:embed openapi.yaml paths
var files embed.FS

// OpenAPI is the merged document.
var OpenAPI = mustMerge()

// DocsHTML renders the document as a page (see docs.go).
func DocsHTML() []byte { return docsHTML() }

func mustMerge() []byte {
	b, err := merge(files)
	if err != nil {
		panic("api: " + err.Error())
	}
	return b
}

func merge(fsys fs.FS) ([]byte, error) {
	base, err := readNode(fsys, "openapi.yaml")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "paths/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, name := range names {
		frag, err := readNode(fsys, name)
		if err != nil {
			return nil, err
		}
		for _, section := range []string{"tags", "paths"} {
			if err := mergeInto(base, frag, name, section); err != nil {
				return nil, err
			}
		}
		if fc := child(frag, "components"); fc != nil {
			bc := child(base, "components")
			if bc == nil {
				return nil, fmt.Errorf("%s: the base document has no components", name)
			}
			for i := 0; i < len(fc.Content); i += 2 {
				sec := fc.Content[i].Value
				if err := mergeInto(bc, fc, name, sec); err != nil {
					return nil, err
				}
			}
		}
		for i := 0; i < len(frag.Content); i += 2 {
			switch k := frag.Content[i].Value; k {
			case "tags", "paths", "components":
			default:
				return nil, fmt.Errorf("%s: a fragment may only hold tags, paths and components, not %q", name, k)
			}
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(base); err != nil {
		return nil, err
	}
	return out.Bytes(), enc.Close()
}

func readNode(fsys fs.FS, name string) (*yaml.Node, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not a YAML mapping", name)
	}
	return expandAliases(doc.Content[0]), nil
}

// expandAliases replaces every alias (*a) by a copy of its anchored node and
// drops the anchors (&a): anchors are names local to one file, and two
// fragments that both name an anchor id001 would otherwise collide in the
// merged document, each alias then meaning whichever came last.
func expandAliases(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return expandAliases(n.Alias)
	}
	c := *n
	c.Anchor = ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = expandAliases(k)
	}
	return &c
}

// child returns the value node of key in a mapping node.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// mergeInto appends the entries of src[key] to dst[key] (a mapping or a
// sequence), creating dst[key] when missing. Mapping keys must be new.
func mergeInto(dst, src *yaml.Node, file, key string) error {
	s := child(src, key)
	if s == nil {
		return nil
	}
	d := child(dst, key)
	if d == nil {
		dst.Content = append(dst.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, s)
		return nil
	}
	if d.Kind != s.Kind {
		return fmt.Errorf("%s: %s has another shape than in the base document", file, key)
	}
	if s.Kind == yaml.SequenceNode {
		d.Content = append(d.Content, s.Content...)
		return nil
	}
	for i := 0; i+1 < len(s.Content); i += 2 {
		if child(d, s.Content[i].Value) != nil {
			return fmt.Errorf("%s: %s.%s is already defined", file, key, s.Content[i].Value)
		}
		d.Content = append(d.Content, s.Content[i], s.Content[i+1])
	}
	return nil
}
