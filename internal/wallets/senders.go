package wallets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// ErrNoSender: no adapter delivers this channel.
var ErrNoSender = errors.New("wallets: no sender configured for this channel")

// Senders routes codes to the adapter of their channel; a channel without
// one is ErrNoSender.
type Senders struct {
	Email OTPSender
	SMS   OTPSender
}

// For is the adapter of a channel, or nil.
func (s Senders) For(channel string) OTPSender {
	if channel == TypeSMSOTP {
		return s.SMS
	}
	return s.Email
}

// SendOTP delivers m through its channel's adapter.
func (s Senders) SendOTP(ctx context.Context, m OTPMessage) error {
	a := s.For(m.Channel)
	if a == nil {
		return ErrNoSender
	}
	return a.SendOTP(ctx, m)
}

// otpText is the message of a code.
func otpText(m OTPMessage) (subject, body string) {
	app := "Your wallet"
	if m.Config.AppName != nil && *m.Config.AppName != "" {
		app = *m.Config.AppName
	}
	mins := int(time.Until(m.ExpiresAt).Round(time.Minute) / time.Minute)
	if mins < 1 {
		mins = 1
	}
	return app + " verification code", fmt.Sprintf("%s code: %s. It expires in %d minutes. Do not share it.", app, m.Code, mins)
}

// SMTPSender delivers EMAIL_OTP codes through an SMTP relay (STARTTLS when
// the server offers it, as net/smtp does).
type SMTPSender struct {
	Addr string // host:port
	Auth smtp.Auth
	// From is the envelope and default header sender; the platform's
	// sendFromEmailAddress replaces the header one.
	From string
}

// SendOTP sends the code by email.
func (s SMTPSender) SendOTP(ctx context.Context, m OTPMessage) error {
	if m.Channel != TypeEmailOTP {
		return ErrNoSender
	}
	from := s.From
	if m.Config.SendFromEmailAddress != nil {
		from = *m.Config.SendFromEmailAddress
	}
	subject, body := otpText(m)
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", (&mail.Address{Name: m.Config.SenderName(), Address: from}).String())
	fmt.Fprintf(&b, "To: %s\r\n", (&mail.Address{Address: m.To}).String())
	if m.Config.ReplyToEmailAddress != nil {
		fmt.Fprintf(&b, "Reply-To: %s\r\n", *m.Config.ReplyToEmailAddress)
	}
	fmt.Fprintf(&b, "Subject: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n", subject, body)
	if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(from, "\r\n") {
		return errors.New("wallets: address with a line break")
	}
	return smtp.SendMail(s.Addr, s.Auth, s.From, []string{m.To}, []byte(b.String()))
}

// TwilioSender delivers SMS_OTP codes through Twilio's Messages API.
type TwilioSender struct {
	AccountSID string
	AuthToken  string
	From       string // sender number (E.164) or messaging service
	// BaseURL is https://api.twilio.com unless set (tests).
	BaseURL string
	Client  *http.Client
}

// SendOTP sends the code by SMS.
func (s TwilioSender) SendOTP(ctx context.Context, m OTPMessage) error {
	if m.Channel != TypeSMSOTP {
		return ErrNoSender
	}
	base, client := s.BaseURL, s.Client
	if base == "" {
		base = "https://api.twilio.com"
	}
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	_, body := otpText(m)
	form := url.Values{"To": {m.To}, "From": {s.From}, "Body": {body}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		base+"/2010-04-01/Accounts/"+url.PathEscape(s.AccountSID)+"/Messages.json", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.SetBasicAuth(s.AccountSID, s.AuthToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("wallets: SMS provider answered %s", res.Status)
	}
	return nil
}

// SandboxSender is the sandbox's adapter: nothing leaves the service; each
// message is recorded durably (sandbox_messages), where a sandbox client
// or a test reads what would have been sent. Sandbox codes are zeros.
type SandboxSender struct{ DB *store.DB }

// SendOTP records the message.
func (s SandboxSender) SendOTP(ctx context.Context, m OTPMessage) error {
	subject, body := otpText(m)
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		return tx.InsertSandboxMessage(ctx, store.SandboxMessage{ID: id.New(id.SandboxMessage), Tenant: m.Tenant,
			Channel: m.Channel, Recipient: m.To, Subject: subject, Body: body,
			CreatedAt: tx.Now().UTC().Truncate(time.Microsecond)})
	})
}
