package signing_test

import (
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// FuzzVerify feeds arbitrary header values to the parsers of both
// signatures. Neither may panic, and neither may accept anything that an
// independent check does not also accept.
func FuzzVerify(f *testing.F) {
	const (
		specSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		specID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		specTS     = "1614265330"
		specSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
		specBody   = `{"test": 2432232314}`
	)
	secret, err := signing.ParseSecret(specSecret)
	if err != nil {
		f.Fatal(err)
	}
	pub, err := signing.ParsePublicKeyPEM([]byte(opensslPublicPEM))
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1614265330, 0)
	goodService := `{"v":"1","s":"` + opensslSig + `"}`

	f.Add(specID, specTS, specSig, []byte(specBody), goodService)
	f.Add(specID, specTS, "v1a,abc "+specSig+" v1,AAAA", []byte(opensslBody), goodService)
	f.Add(specID, "1614265030", "v1,", []byte(opensslBody), ` { "s" : "`+opensslSig+`" , "v" : "1" } `)
	f.Add("a.b", "-1", "v1,!!", []byte{}, `{"v":"2","s":""}`)
	f.Add("", "01614265330", ",,, v1 ,", []byte("x"), `{"v":1}`)
	f.Add(specID, "99999999999999999999", specSig+specSig, []byte(specBody), `[`)
	f.Add(specID, specTS, specSig, []byte(specBody), `{"v":"1","v":"1","s":"`+opensslSig+`"}`)
	f.Add(specID, specTS, specSig, []byte(specBody), `{"v":"1","s":"`+opensslSig+`"}{}`)

	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte, service string) {
		// Standard Webhooks.
		err := signing.VerifyValues([]signing.Secret{secret}, id, ts, sig, body, now, 0)
		if err == nil {
			id, ts = strings.Trim(id, " \t"), strings.Trim(ts, " \t")
			n, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || strconv.FormatInt(n, 10) != ts || n < now.Unix()-300 || n > now.Unix()+300 {
				t.Fatalf("accepted timestamp %q", ts)
			}
			if id == "" || strings.ContainsAny(id, ". \t\r\n") {
				t.Fatalf("accepted id %q", id)
			}
			m := hmac.New(sha256.New, secret.Bytes())
			m.Write([]byte(id + "." + ts + "." + string(body)))
			want := m.Sum(nil)
			found := false
			for _, e := range strings.Fields(sig) {
				if b64, ok := strings.CutPrefix(e, "v1,"); ok {
					if got, derr := base64.StdEncoding.DecodeString(b64); derr == nil && hmac.Equal(got, want) {
						found = true
					}
				}
			}
			if !found {
				t.Fatalf("accepted id=%q ts=%q sig=%q without a matching v1 entry", id, ts, sig)
			}
		}
		_ = signing.VerifyValues([]signing.Secret{secret}, id, ts, sig, body, now, time.Duration(len(body))*time.Hour)

		// X-Service-Signature.
		if err := signing.VerifyBody(pub, service, body); err == nil {
			var m map[string]any // exact member names, unlike a struct
			if json.Unmarshal([]byte(service), &m) != nil || m["v"] != "1" {
				t.Fatalf("accepted header %q", service)
			}
			s, _ := m["s"].(string)
			der, derr := base64.StdEncoding.DecodeString(s)
			digest := sha256.Sum256(body)
			if derr != nil || !ecdsa.VerifyASN1(pub, digest[:], der) {
				t.Fatalf("accepted header %q for body %q", service, body)
			}
		}

		// Secret parsing.
		if s, err := signing.ParseSecret(sig); err == nil {
			again, err := signing.ParseSecret(s.Encode())
			if err != nil || !again.Equal(s) {
				t.Fatalf("secret %q does not round-trip: %v", sig, err)
			}
			if n := len(s.Bytes()); n < signing.MinSecretSize || n > signing.MaxSecretSize {
				t.Fatalf("accepted a %d-byte secret", n)
			}
		}
	})
}
