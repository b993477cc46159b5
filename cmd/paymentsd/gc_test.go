package main

import "testing"

func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   map[string]string
		want  int
		apply bool
	}{
		{"unset", map[string]string{}, defaultGCPercent, true},
		{"empty", map[string]string{"GOGC": ""}, defaultGCPercent, true},
		{"operator's value", map[string]string{"GOGC": "150"}, 0, false},
		{"operator's off", map[string]string{"GOGC": "off"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, apply := gcPercent(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if got != tc.want || apply != tc.apply {
				t.Fatalf("gcPercent = %d, %v; want %d, %v", got, apply, tc.want, tc.apply)
			}
		})
	}
}
