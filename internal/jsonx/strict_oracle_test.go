package jsonx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// frame is one open object or array while checkStrictTokens walks a document.
type frame struct {
	object    bool
	keys      map[string]bool
	key       string // the current key of an object
	index     int    // the current index of an array
	expectKey bool
}

// checkStrictTokens is checkStrict as it was before the scan, walking
// encoding/json's Decoder.Token; it is kept as the fuzz oracle of the scan.
func checkStrictTokens(f *apierr.Fields, body []byte) {
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

// The scan reports exactly what the token walk reported, in the same order,
// for every valid JSON document.
func FuzzCheckStrictAsTokens(f *testing.F) {
	for _, c := range strictCases {
		f.Add(c.body)
	}
	for _, seed := range []string{`{}`, `[]`, `"x"`, `1`, `{"a":[1,"x",{"b":"\u0000","b":[]}],"c":{"d":{"e":"\ud800"}}}`,
		` { "a" : [ ] , "b" : { } , "a\u0062" : "ab" , "ab" : 1 } `, `[[[["\udc00"]]],{"k":"v","k":"w"}]`,
		`{"x\"y":1,"x\"y":2,"\\":3}`, `{"n":-1.5e3,"t":true,"f":false,"z":null}`,
		`[}`, `{"`, `{"a":1]`, `"`, `[1 2]`} { // the last five are not JSON: the scan must still end
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		b := bytes.TrimSpace([]byte(body))
		if !json.Valid(b) {
			var f apierr.Fields
			checkStrict(&f, b) // Decode never calls it so, but it must end
			return
		}
		var got, want apierr.Fields
		checkStrict(&got, b)
		checkStrictTokens(&want, b)
		g, w := apierr.FieldList(got.Err()), apierr.FieldList(want.Err())
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%q:\n scan   %v\n tokens %v", body, g, w)
		}
	})
}
