package store

import (
	"database/sql"
	"reflect"
	"testing"
)

// The statements that read agreements carry no ORDER BY: addAgreed, through
// which every reader collects them, keeps a customer's agreements in type
// order whatever order the rows came in, once each however many rows repeat
// one (an owner of two accounts), and a row without one (an outer join's
// NULLs) adds none.
func TestAddAgreed_TypeOrderOnceEach(t *testing.T) {
	null := func(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }
	rows := [][2]string{{"PRIVACY_POLICY", "v1"}, {"END_USER_TERMS", "v2"}, {"", ""}, {"DATA_SHARING", "v1"},
		{"END_USER_TERMS", "v2"}, {"PRIVACY_POLICY", "v1"}}
	got := []AgreedTerms{}
	for _, r := range rows {
		got = addAgreed(got, null(r[0]), null(r[1]))
	}
	want := []AgreedTerms{{"DATA_SHARING", "v1"}, {"END_USER_TERMS", "v2"}, {"PRIVACY_POLICY", "v1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v; want %v", got, want)
	}
	if none := addAgreed([]AgreedTerms{}, null(""), null("")); none == nil || len(none) != 0 {
		t.Fatalf("none accepted: %#v; want an empty list", none)
	}
}
