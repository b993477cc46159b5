package main

import "testing"

// Each channel's adapter exists only when its settings are complete.
func TestOTPSenders(t *testing.T) {
	env := map[string]string{"PAYMENTS_SMTP_ADDR": "smtp.example.com:587", "PAYMENTS_SMTP_FROM": "codes@example.com",
		"PAYMENTS_TWILIO_ACCOUNT_SID": "AC1", "PAYMENTS_TWILIO_AUTH_TOKEN": ""}
	s := otpSenders(func(k string) string { return env[k] })
	if s.Email == nil || s.SMS != nil {
		t.Fatalf("senders %+v", s)
	}
	if s := otpSenders(func(string) string { return "" }); s.Email != nil || s.SMS != nil {
		t.Fatalf("unconfigured senders %+v", s)
	}
}
