package carddata

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSigner_SignVerify(t *testing.T) {
	s := signer{key: []byte("0123456789abcdef0123456789abcdef")}
	now := time.Unix(1_800_000_000, 0)
	tok, c, err := s.sign(Claims{Kind: KindReveal, PlatformID: "P", Env: "sandbox", CardID: "Card:1",
		Expires: now.Add(time.Minute).Unix()})
	if err != nil || c.JTI == "" {
		t.Fatal(err)
	}
	got, err := s.verify(tok, KindReveal, now)
	if err != nil || got != c {
		t.Fatalf("verify = %+v, %v", got, err)
	}
	if _, err := s.verify(tok, KindPINPage, now); !errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("another kind accepted: %v", err)
	}
	if _, err := s.verify(tok, KindReveal, now.Add(time.Minute)); !errors.Is(err, ErrTokenExpired) {
		t.Fatalf("expired accepted: %v", err)
	}
	other := signer{key: []byte("another key, another installation")}
	if _, err := other.verify(tok, KindReveal, now); !errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("foreign key accepted: %v", err)
	}
	payload, sig, _ := strings.Cut(tok, ".")
	if _, err := s.verify(payload[:len(payload)-1]+"x."+sig, KindReveal, now); !errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("altered payload accepted: %v", err)
	}
}

func FuzzVerifyToken(f *testing.F) {
	s := signer{key: []byte("0123456789abcdef0123456789abcdef")}
	now := time.Unix(1_800_000_000, 0)
	tok, _, _ := s.sign(Claims{Kind: KindReveal, CardID: "Card:1", Expires: now.Add(time.Minute).Unix()})
	f.Add(tok)
	f.Add("a.b")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := s.verify(tok, KindReveal, now)
		if err == nil && (c.JTI == "" || c.Kind != KindReveal) {
			t.Fatalf("accepted %+v", c)
		}
	})
}

func TestCheckCSSURLAndOrigin(t *testing.T) {
	for _, ok := range []string{"", "https://cdn.example.com/card.css", "http://127.0.0.1:8080/x.css", "http://localhost/x.css"} {
		if err := CheckCSSURL(ok); err != nil {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"http://cdn.example.com/x.css", "javascript:alert(1)", "/relative.css",
		"https://u:p@example.com/x.css", "https://example.com/x.css\"><script>", "data:text/css,body{}"} {
		if err := CheckCSSURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, ok := range []string{"https://app.example.com", "https://app.example.com:8443", "http://127.0.0.1:5000/"} {
		if err := CheckOrigin(ok); err != nil {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "app.example.com", "https://app.example.com/path", "http://app.example.com",
		"https://a.example.com; script-src *", "https://*.example.com x"} {
		if err := CheckOrigin(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
