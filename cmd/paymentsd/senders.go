package main

import (
	"net"
	"net/smtp"

	"github.com/paymentsd/paymentsd/internal/wallets"
)

// otpSenders builds the production adapters of wallet one-time codes from
// the environment: email through an SMTP relay ($PAYMENTS_SMTP_ADDR
// host:port, $PAYMENTS_SMTP_FROM, optional $PAYMENTS_SMTP_USERNAME and
// $PAYMENTS_SMTP_PASSWORD, PLAIN auth, which net/smtp sends only over TLS
// or to localhost), SMS through Twilio ($PAYMENTS_TWILIO_ACCOUNT_SID,
// $PAYMENTS_TWILIO_AUTH_TOKEN, $PAYMENTS_TWILIO_FROM). A channel left
// unconfigured is refused for production credentials.
func otpSenders(getenv func(string) string) wallets.Senders {
	var out wallets.Senders
	if addr, from := getenv("PAYMENTS_SMTP_ADDR"), getenv("PAYMENTS_SMTP_FROM"); addr != "" && from != "" {
		s := wallets.SMTPSender{Addr: addr, From: from}
		if user := getenv("PAYMENTS_SMTP_USERNAME"); user != "" {
			host, _, _ := net.SplitHostPort(addr)
			s.Auth = smtp.PlainAuth("", user, getenv("PAYMENTS_SMTP_PASSWORD"), host)
		}
		out.Email = s
	}
	if sid, token, from := getenv("PAYMENTS_TWILIO_ACCOUNT_SID"), getenv("PAYMENTS_TWILIO_AUTH_TOKEN"), getenv("PAYMENTS_TWILIO_FROM"); sid != "" && token != "" && from != "" {
		out.SMS = wallets.TwilioSender{AccountSID: sid, AuthToken: token, From: from}
	}
	return out
}
