// Package api carries the project's own OpenAPI description of the HTTP API,
// served at /openapi.yaml and rendered as a readable page at /docs.
package api

import _ "embed"

// OpenAPI is the document, embedded at build time.
//
//go:embed openapi.yaml
var OpenAPI []byte

// DocsHTML renders the document as a page (see docs.go).
func DocsHTML() []byte { return docsHTML() }
