package store

import (
	"reflect"
	"testing"
)

// The statements that read agreements carry no ORDER BY: sortAgreed (and
// LiveCustomerWithAgreements, through sortAgreedTerms) puts each owner's
// agreements in type order whatever order the rows came in.
func TestOwnedAccounts_SortAgreed(t *testing.T) {
	o := newOwnedAccounts()
	o.owners["Customer:a"] = AccountOwner{Agreed: []AgreedTerms{{"PRIVACY_POLICY", "v1"}, {"END_USER_TERMS", "v2"},
		{"DATA_SHARING", "v1"}}}
	o.owners["Customer:b"] = AccountOwner{Agreed: []AgreedTerms{}}
	o.sortAgreed()
	want := []AgreedTerms{{"DATA_SHARING", "v1"}, {"END_USER_TERMS", "v2"}, {"PRIVACY_POLICY", "v1"}}
	if got := o.owners["Customer:a"].Agreed; !reflect.DeepEqual(got, want) {
		t.Fatalf("%v; want %v", got, want)
	}
	if got := o.owners["Customer:b"].Agreed; got == nil || len(got) != 0 {
		t.Fatalf("none accepted: %#v; want an empty list", got)
	}
	one := []AgreedTerms{{"PRIVACY_POLICY", "v1"}, {"DATA_SHARING", "v1"}, {"END_USER_TERMS", "v2"}}
	if sortAgreedTerms(one); !reflect.DeepEqual(one, want) {
		t.Fatalf("one customer's: %v; want %v", one, want)
	}
}
