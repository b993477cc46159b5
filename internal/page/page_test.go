package page

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

func codec() *Codec { return NewCodec([]byte("0123456789abcdef0123456789abcdef")) }

// R-CONV-13, R-CONV-14: default 20, bounds 1..100 named in the error.
func TestParse_Limit_R_CONV_13_14(t *testing.T) {
	c := codec()
	r, err := c.Parse(url.Values{}, "s")
	if err != nil || r.Limit != 20 {
		t.Fatalf("default: %+v %v", r, err)
	}
	for raw, constraint := range map[string]string{"0": apierr.Minimum, "101": apierr.Maximum, "1000": apierr.Maximum, "-1": apierr.Minimum, "x": apierr.Type} {
		_, err := c.Parse(url.Values{"limit": {raw}}, "s")
		l := apierr.FieldList(err)
		if len(l) != 1 || l[0].Field != "limit" || l[0].Constraint != constraint {
			t.Errorf("limit=%s: %v", raw, err)
		}
	}
	if !strings.Contains(apierr.FieldList(mustErr(c.Parse(url.Values{"limit": {"1000"}}, "s")))[0].Message, "100") {
		t.Error("the message must name the bound")
	}
	for _, raw := range []string{"1", "100"} {
		if _, err := c.Parse(url.Values{"limit": {raw}}, "s"); err != nil {
			t.Errorf("limit=%s refused", raw)
		}
	}
}

func mustErr(_ Request, err error) error { return err }

func TestCursor_RoundTripAndTamper(t *testing.T) {
	c := codec()
	rows := []string{"a", "b", "c"}
	r, _ := c.Parse(url.Values{"limit": {"2"}}, "tokens?")
	l := Build(c, r, rows, 3, func(s string) string { return s })
	if !l.HasMore || l.NextCursor == "" || len(l.Data) != 2 || l.TotalCount != 3 {
		t.Fatalf("%+v", l)
	}
	next, err := c.Parse(url.Values{"cursor": {l.NextCursor}}, "tokens?")
	if err != nil || next.After != "b" {
		t.Fatalf("%+v %v", next, err)
	}
	// A cursor is bound to its list and filters.
	if _, err := c.Parse(url.Values{"cursor": {l.NextCursor}}, "tokens?name=x"); err == nil {
		t.Fatal("cursor accepted under other filters")
	}
	// Forged and edited cursors are refused.
	forged := []string{"abc", l.NextCursor + "x", "eyJhIjoieiIsInMiOiJ0b2tlbnM_In0.AAAA", strings.Replace(l.NextCursor, "Y", "Z", 1)}
	for _, f := range forged {
		if f == l.NextCursor {
			continue
		}
		_, err := c.Parse(url.Values{"cursor": {f}}, "tokens?")
		if l := apierr.FieldList(err); len(l) != 1 || l[0].Field != "cursor" {
			t.Errorf("forged cursor %q: %v", f, err)
		}
	}
	// Another server secret does not accept it.
	if _, err := NewCodec([]byte("another secret of thirty-two b!!")).Parse(url.Values{"cursor": {l.NextCursor}}, "tokens?"); err == nil {
		t.Fatal("cursor accepted under another key")
	}
}

// R-CONV-11: nextCursor only when hasMore.
func TestBuild_LastPage_R_CONV_11(t *testing.T) {
	c := codec()
	r, _ := c.Parse(url.Values{}, "s")
	l := Build(c, r, []int{1, 2}, 2, func(i int) string { return "k" })
	if l.HasMore || l.NextCursor != "" || len(l.Data) != 2 {
		t.Fatalf("%+v", l)
	}
	empty := Build[int](c, r, nil, 0, func(i int) string { return "" })
	if empty.Data == nil {
		t.Fatal("data must be [] not null")
	}
}

func TestScope_IgnoresPagingAndOrder(t *testing.T) {
	a := Scope("t", url.Values{"b": {"1"}, "a": {"2"}, "limit": {"5"}})
	b := Scope("t", url.Values{"a": {"2"}, "b": {"1"}, "cursor": {"x"}})
	if a != b {
		t.Fatalf("%q != %q", a, b)
	}
}

// Render keeps the rows' order and fails the page on the first bad row.
func TestRender(t *testing.T) {
	got, err := Render([]int{3, 1, 2}, func(n int) (string, error) { return strconv.Itoa(n), nil })
	if err != nil || strings.Join(got, ",") != "3,1,2" {
		t.Fatalf("%v, %v", got, err)
	}
	bad := errors.New("bad row")
	if got, err := Render([]int{1, 2}, func(n int) (int, error) {
		if n == 2 {
			return 0, bad
		}
		return n, nil
	}); !errors.Is(err, bad) || got != nil {
		t.Fatalf("%v, %v", got, err)
	}
}
