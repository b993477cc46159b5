package auth

import "testing"

// The permission model: VIEW < MANAGE < TRANSACT, each meeting the needs of
// the ones below it; a token grants only what it holds.
func TestPermissionModel(t *testing.T) {
	p := func(perms ...string) Principal { return Principal{Permissions: perms} }
	for _, c := range []struct {
		who               Principal
		view, write, move bool
		grants            []string
		refuses           []string
	}{
		{p(View), true, false, false, []string{View}, []string{Manage, Transact}},
		{p(Manage), true, true, false, []string{View, Manage}, []string{Transact}},
		{p(Transact), true, true, true, []string{View, Manage, Transact}, nil},
		{p(View, Manage), true, true, false, []string{View, Manage}, []string{Transact}},
		{p("ROOT"), false, false, false, nil, []string{View, "ROOT"}},
		{p(), false, false, false, nil, []string{View}},
	} {
		if c.who.Allows(NeedView) != c.view || c.who.Allows(NeedWrite) != c.write || c.who.Allows(NeedMoney) != c.move {
			t.Errorf("%v: allows view/write/money = %v/%v/%v", c.who.Permissions,
				c.who.Allows(NeedView), c.who.Allows(NeedWrite), c.who.Allows(NeedMoney))
		}
		if _, ok := c.who.MayGrant(c.grants); !ok {
			t.Errorf("%v may not grant %v", c.who.Permissions, c.grants)
		}
		for _, perm := range c.refuses {
			if missing, ok := c.who.MayGrant([]string{perm}); ok || missing != perm {
				t.Errorf("%v may grant %s (missing %q)", c.who.Permissions, perm, missing)
			}
		}
	}
}
