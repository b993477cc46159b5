package main

import "testing"

// paymentsd applies defaultGCPercent only where the operator left GOGC unset.
func TestGOGCSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		set  bool
	}{
		{"unset", map[string]string{}, false},
		{"empty", map[string]string{"GOGC": ""}, false},
		{"operator's value", map[string]string{"GOGC": "150"}, true},
		{"operator's off", map[string]string{"GOGC": "off"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := gogcSet(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }); got != tc.set {
				t.Fatalf("gogcSet = %v, want %v", got, tc.set)
			}
		})
	}
}
