// Package docformat recognises the document formats the API accepts (PDF,
// JPEG, PNG) from their content, never from a name or a declared type, and
// tidies client file names, which are kept as metadata only.
package docformat

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Content types of the accepted formats.
const (
	PDF  = "application/pdf"
	JPEG = "image/jpeg"
	PNG  = "image/png"
)

// PNGSignature opens every PNG file.
var PNGSignature = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// HeadLen is how many leading bytes Detect needs to tell every format (the
// PNG signature's length).
const HeadLen = 8

// Detect names the format of a file from its first bytes: PDF ("%PDF-"),
// JPEG (FF D8 FF) or PNG (its 8-byte signature); "" for anything else.
func Detect(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("%PDF-")):
		return PDF
	case bytes.HasPrefix(head, []byte{0xff, 0xd8, 0xff}):
		return JPEG
	case bytes.HasPrefix(head, PNGSignature):
		return PNG
	}
	return ""
}

// CleanFileName keeps the last path element of a client's file name, without
// control characters, at most maxLen characters; a name-less file is named
// after its format.
func CleanFileName(name, contentType string, maxLen int) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, name))
	if utf8.RuneCountInString(name) > maxLen {
		name = string([]rune(name)[:maxLen])
	}
	if name == "" || name == "." || name == ".." {
		switch contentType {
		case PDF:
			return "document.pdf"
		case JPEG:
			return "document.jpg"
		}
		return "document.png"
	}
	return name
}
