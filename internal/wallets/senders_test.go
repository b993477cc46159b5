package wallets

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/platformconfig"
)

func testMessage(channel, to string) OTPMessage {
	app := "Acme Wallet"
	return OTPMessage{Channel: channel, To: to, Code: "482913", ExpiresAt: time.Now().Add(5 * time.Minute),
		Config: platformconfig.EmbeddedWalletConfig{AppName: &app}}
}

// The Twilio adapter posts the Messages API form with the account's basic
// auth; a provider error is an error.
func TestTwilioSender(t *testing.T) {
	var got *http.Request
	status := http.StatusCreated
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = r
		w.WriteHeader(status)
	}))
	defer ts.Close()
	s := TwilioSender{AccountSID: "AC123", AuthToken: "tok", From: "+15005550006", BaseURL: ts.URL}
	if err := s.SendOTP(context.Background(), testMessage(TypeSMSOTP, "+14155550123")); err != nil {
		t.Fatal(err)
	}
	user, pass, _ := got.BasicAuth()
	if got.URL.Path != "/2010-04-01/Accounts/AC123/Messages.json" || user != "AC123" || pass != "tok" ||
		got.PostForm.Get("To") != "+14155550123" || got.PostForm.Get("From") != "+15005550006" ||
		!strings.Contains(got.PostForm.Get("Body"), "482913") {
		t.Fatalf("request %s %v", got.URL, got.PostForm)
	}
	status = http.StatusBadRequest
	if err := s.SendOTP(context.Background(), testMessage(TypeSMSOTP, "+14155550123")); err == nil {
		t.Fatal("provider error not reported")
	}
	if err := s.SendOTP(context.Background(), testMessage(TypeEmailOTP, "a@example.com")); !errors.Is(err, ErrNoSender) {
		t.Fatalf("email through SMS: %v", err)
	}
}

// fakeSMTP accepts one message and returns its DATA.
func fakeSMTP(t *testing.T) (string, <-chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	data := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		say := func(s string) { _, _ = c.Write([]byte(s + "\r\n")) }
		say("220 fake")
		var body strings.Builder
		for inData := false; ; {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			switch {
			case inData && line == ".\r\n":
				inData = false
				data <- body.String()
				say("250 ok")
			case inData:
				body.WriteString(line)
			case strings.HasPrefix(line, "DATA"):
				inData = true
				say("354 go")
			case strings.HasPrefix(line, "QUIT"):
				say("221 bye")
				return
			default:
				say("250 ok")
			}
		}
	}()
	return ln.Addr().String(), data
}

// The SMTP adapter sends a plain-text message with the platform's sender.
func TestSMTPSender(t *testing.T) {
	addr, data := fakeSMTP(t)
	s := SMTPSender{Addr: addr, From: "codes@paymentsd.example"}
	if err := s.SendOTP(context.Background(), testMessage(TypeEmailOTP, "jane@example.com")); err != nil {
		t.Fatal(err)
	}
	msg := <-data
	for _, want := range []string{"To: <jane@example.com>", "Subject: Acme Wallet verification code", "482913", "codes@paymentsd.example"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if err := s.SendOTP(context.Background(), testMessage(TypeEmailOTP, "x@example.com\r\nBcc: y@example.com")); err == nil {
		t.Error("header injection accepted")
	}
}

// Senders routes by channel; a missing channel is ErrNoSender.
func TestSenders(t *testing.T) {
	mux := Senders{SMS: TwilioSender{}}
	if mux.For(TypeEmailOTP) != nil || mux.For(TypeSMSOTP) == nil {
		t.Fatal("routing")
	}
	if err := mux.SendOTP(context.Background(), testMessage(TypeEmailOTP, "a@example.com")); !errors.Is(err, ErrNoSender) {
		t.Fatal(err)
	}
}
