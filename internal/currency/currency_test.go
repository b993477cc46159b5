package currency

import "testing"

// R-CONV-05: cents for USD and EUR (2 decimals), satoshis for BTC (8).
func TestDecimals_R_CONV_05(t *testing.T) {
	for code, want := range map[string]int{"USD": 2, "EUR": 2, "BTC": 8} {
		c, ok := Lookup(code)
		if !ok || c.Decimals != want {
			t.Errorf("%s: got %+v, want decimals %d", code, c, want)
		}
	}
	if _, ok := Lookup("XXX"); ok {
		t.Error("unknown code must not resolve")
	}
}

// R-CONV-06: every currency has code, name and symbol.
func TestFields_R_CONV_06(t *testing.T) {
	for _, code := range Codes() {
		c, _ := Lookup(code)
		if c.Code != code || c.Name == "" || c.Symbol == "" || c.Decimals < 0 || c.Decimals > 9 {
			t.Errorf("incomplete currency %+v", c)
		}
	}
}
