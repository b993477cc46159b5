package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// checkStrict reports what encoding/json forgives in a syntactically valid
// document: a key repeated in one object (the last would win) and strings,
// keys included, that are not valid UTF-8 or hold a lone UTF-16 surrogate
// escape (both would become U+FFFD), or a NUL (\u0000, which PostgreSQL
// text cannot hold). Each is a format error at its path.
//
// body must be valid JSON (Decode checks that first): the scan finds the
// ends of strings and scalars and does not validate them. A path is built
// only when there is something to report.
func checkStrict(f *apierr.Fields, body []byte) {
	s := strictScan{f: f, b: body}
	s.value(s.space(0))
}

// strictScan walks a valid JSON document for checkStrict.
type strictScan struct {
	f    *apierr.Fields
	b    []byte
	path []pathStep // where the value being scanned is
}

// pathStep is an object's key or an array's index.
type pathStep struct {
	key   string
	index int
	inArr bool
}

func (s *strictScan) pathString() string {
	p := ""
	for _, st := range s.path {
		if st.inArr {
			p = fmt.Sprintf("%s[%d]", p, st.index)
		} else {
			p = join(p, st.key)
		}
	}
	return p
}

func (s *strictScan) space(i int) int {
	for i < len(s.b) && (s.b[i] == ' ' || s.b[i] == '\t' || s.b[i] == '\n' || s.b[i] == '\r') {
		i++
	}
	return i
}

// value scans the value at i and answers the index just past it.
func (s *strictScan) value(i int) int {
	if i >= len(s.b) {
		return i
	}
	switch s.b[i] {
	case '{':
		return s.object(i)
	case '[':
		return s.array(i)
	case '"':
		end := s.stringEnd(i)
		s.check(s.b[i:end])
		return end
	}
	for i < len(s.b) && !strings.ContainsRune(",]} \t\n\r", rune(s.b[i])) {
		i++ // a number, true, false or null
	}
	return i
}

// stringEnd answers the index just past the string starting at i.
func (s *strictScan) stringEnd(i int) int {
	for i++; i < len(s.b); i++ {
		switch s.b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(s.b)
}

func (s *strictScan) object(i int) int {
	var keys map[string]bool
	s.path = append(s.path, pathStep{})
	defer func() { s.path = s.path[:len(s.path)-1] }()
	i = s.space(i + 1)
	for i < len(s.b) && s.b[i] != '}' {
		end := s.stringEnd(i)
		raw := s.b[i:end]
		key := decodeKey(raw)
		s.path[len(s.path)-1].key = key
		s.check(raw)
		if keys == nil {
			keys = map[string]bool{}
		}
		if keys[key] {
			s.f.Add(s.pathString(), apierr.Format, "appears more than once in its object; send each field once")
		}
		keys[key] = true
		i = s.space(s.space(end) + 1) // past the colon
		i = s.space(s.value(i))
		if i < len(s.b) && s.b[i] == ',' {
			i = s.space(i + 1)
		}
	}
	return i + 1
}

func (s *strictScan) array(i int) int {
	s.path = append(s.path, pathStep{inArr: true})
	defer func() { s.path = s.path[:len(s.path)-1] }()
	i = s.space(i + 1)
	for n := 0; i < len(s.b) && s.b[i] != ']'; n++ {
		s.path[len(s.path)-1].index = n
		next := s.space(s.value(i))
		if next == i { // not JSON (Decode never calls with that): stop
			return len(s.b)
		}
		i = next
		if i < len(s.b) && s.b[i] == ',' {
			i = s.space(i + 1)
		}
	}
	return i + 1
}

// decodeKey is a key's string as encoding/json decodes it (a key that is
// not valid UTF-8 gets U+FFFD, as in its path).
func decodeKey(raw []byte) string {
	if len(raw) < 2 {
		return "" // not JSON
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var k string
	_ = json.Unmarshal(raw, &k) // valid JSON: a string always decodes
	return k
}

// check reports what checkString finds in one string token.
func (s *strictScan) check(raw []byte) {
	if utf8.Valid(raw) && badEscape(raw) == escOK {
		return
	}
	checkString(s.f, s.pathString(), raw)
}

// checkString reports invalid UTF-8 and lone surrogate escapes in raw, the
// bytes of one string token.
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
