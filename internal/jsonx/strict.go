package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// frame is one open object or array while checkStrict walks a document.
type frame struct {
	object    bool
	keys      map[string]bool
	key       string // the current key of an object
	index     int    // the current index of an array
	expectKey bool
}

// checkStrict reports what encoding/json forgives in a syntactically valid
// document: a key repeated in one object (the last would win) and strings,
// keys included, that are not valid UTF-8 or hold a lone UTF-16 surrogate
// escape (both would become U+FFFD), or a NUL (\u0000, which PostgreSQL
// text cannot hold). Each is a format error at its path.
func checkStrict(f *apierr.Fields, body []byte) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*frame
	path := func() string {
		p := ""
		for _, fr := range stack {
			if fr.object {
				p = join(p, fr.key)
			} else {
				p = fmt.Sprintf("%s[%d]", p, fr.index)
			}
		}
		return p
	}
	valueDone := func() {
		if n := len(stack); n > 0 {
			if top := stack[n-1]; top.object {
				top.expectKey = true
			} else {
				top.index++
			}
		}
	}
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return // io.EOF; syntax errors were reported before
		}
		raw := body[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{object: true, keys: map[string]bool{}, expectKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			top := (*frame)(nil)
			if len(stack) > 0 {
				top = stack[len(stack)-1]
			}
			if top != nil && top.object && top.expectKey {
				top.key, top.expectKey = t, false
				checkString(f, path(), raw)
				if top.keys[t] {
					f.Add(path(), apierr.Format, "appears more than once in its object; send each field once")
				}
				top.keys[t] = true
				continue
			}
			checkString(f, path(), raw)
			valueDone()
		default:
			valueDone()
		}
	}
}

// checkString reports invalid UTF-8 and lone surrogate escapes in raw, the
// bytes of one string token (with any separator before it).
func checkString(f *apierr.Fields, path string, raw []byte) {
	if path == "" {
		path = "(body)"
	}
	if !utf8.Valid(raw) {
		f.Add(path, apierr.Format, "must be valid UTF-8")
		return
	}
	switch badEscape(raw) {
	case escLoneSurrogate:
		f.Add(path, apierr.Format, "must not hold a lone UTF-16 surrogate escape such as \\ud800 (not a character)")
	case escNUL:
		f.Add(path, apierr.Format, "must not contain the NUL character (\\u0000), which no text field can store")
	}
}

const (
	escOK = iota
	escLoneSurrogate
	escNUL
)

// badEscape reports a \u0000 escape, or a \uD800-\uDFFF escape that is not
// the high half followed by the low half of a pair.
func badEscape(raw []byte) int {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 >= len(raw) || raw[i+1] != 'u' {
			i++ // another escape: skip the escaped byte
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			continue
		}
		switch {
		case r == 0:
			return escNUL
		case r >= 0xDC00 && r <= 0xDFFF:
			return escLoneSurrogate
		case r >= 0xD800 && r <= 0xDBFF:
			lo, ok := rune(0), false
			if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				lo, ok = hex4(raw, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return escLoneSurrogate
			}
			i += 11
		default:
			i += 5
		}
	}
	return escOK
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(n), err == nil
}
