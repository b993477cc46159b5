package signing_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/webhooks/signing"
)

// An independent vector made with OpenSSL 3.0:
//
//	openssl ecparam -name prime256v1 -genkey -noout -out k.pem
//	openssl ec -in k.pem -pubout -out pub.pem
//	printf '%s' "$opensslBody" > body.json
//	openssl dgst -sha256 -sign k.pem -out sig.der body.json
//	openssl base64 -A -in sig.der
//
// (the private key was then deleted).
const (
	opensslPublicPEM = `-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAERjQeCgder34jcmpYyV+52LU9qSFP
ZxuGK4Qz1zYsoGFZWBgN3I+QBWDfs0zzYH6rzD/MH1K+KfNHSIo5rg6Bug==
-----END PUBLIC KEY-----
`
	opensslBody = `{"type":"payment.succeeded","id":"Event:0190f5b2-7c1e-7d3a-9b8e-2f4c6a1d3e5f"}`
	opensslSig  = "MEUCIAkXKbPKSZsY4hf1DyVlMKSu3iwKMdxZIv30yJkjzGCbAiEAu20+uW0eS1cUh0RdyMoUI8Fq5BDQtLohxLSiEL9LkNc="
)

var headerShape = regexp.MustCompile(`^\{"v":"1","s":"([A-Za-z0-9+/]+={0,2})"\}$`)

func mustKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustSignBody(t testing.TB, k *ecdsa.PrivateKey, body []byte) string {
	t.Helper()
	h, err := signing.SignBody(k, body)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestECDSARoundTripThroughPEM(t *testing.T) {
	priv := mustKey(t)
	if priv.Curve != elliptic.P256() {
		t.Fatalf("curve %s", priv.Curve.Params().Name)
	}
	privPEM, err := signing.EncodePrivateKeyPEM(priv)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := signing.EncodePublicKeyPEM(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(privPEM, []byte("-----BEGIN PRIVATE KEY-----\n")) || !bytes.HasPrefix(pubPEM, []byte("-----BEGIN PUBLIC KEY-----\n")) {
		t.Fatalf("PEM types:\n%s\n%s", privPEM, pubPEM)
	}
	// The encodings are the standard ones (independent parse).
	b, _ := pem.Decode(privPEM)
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err != nil || !k.(*ecdsa.PrivateKey).Equal(priv) {
		t.Fatalf("private PEM is not PKCS #8 of the key: %v", err)
	}
	b, _ = pem.Decode(pubPEM)
	if k, err := x509.ParsePKIXPublicKey(b.Bytes); err != nil || !k.(*ecdsa.PublicKey).Equal(&priv.PublicKey) {
		t.Fatalf("public PEM is not PKIX of the key: %v", err)
	}

	priv2, err := signing.ParsePrivateKeyPEM(privPEM)
	if err != nil || !priv2.Equal(priv) {
		t.Fatalf("ParsePrivateKeyPEM: %v", err)
	}
	pub2, err := signing.ParsePublicKeyPEM(pubPEM)
	if err != nil || !pub2.Equal(&priv.PublicKey) {
		t.Fatalf("ParsePublicKeyPEM: %v", err)
	}
	for _, body := range [][]byte{body1, nil, bytes.Repeat([]byte("x"), 1<<16)} {
		h := mustSignBody(t, priv2, body)
		if err := signing.VerifyBody(pub2, h, body); err != nil {
			t.Fatalf("VerifyBody(len %d): %v", len(body), err)
		}
	}
}

func TestSignBodyEncoding(t *testing.T) {
	priv := mustKey(t)
	h := mustSignBody(t, priv, body1)
	m := headerShape.FindStringSubmatch(h)
	if m == nil {
		t.Fatalf("header %q does not have the exact form {\"v\":\"1\",\"s\":\"<base64>\"}", h)
	}
	der, err := base64.StdEncoding.Strict().DecodeString(m[1])
	if err != nil {
		t.Fatalf("s is not padded standard base64: %v", err)
	}
	// s is an ASN.1 DER SEQUENCE of two INTEGERs, checked with an
	// independent parser and verified with ecdsa.Verify.
	var rs struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &rs)
	if err != nil || len(rest) != 0 {
		t.Fatalf("signature is not a DER SEQUENCE{r,s}: %v (%d trailing bytes)", err, len(rest))
	}
	digest := sha256.Sum256(body1)
	if !ecdsa.Verify(&priv.PublicKey, digest[:], rs.R, rs.S) {
		t.Fatal("signature does not verify with ecdsa.Verify over SHA-256(body)")
	}
	if len(der) > 72 || len(der) < 8 {
		t.Fatalf("DER signature is %d bytes", len(der))
	}
}

// TestSignBodyDeterministic: signatures are RFC 6979's (a nil random
// source), so one key and body give one signature, another body another,
// and each verifies with ecdsa.Verify.
func TestSignBodyDeterministic(t *testing.T) {
	priv := mustKey(t)
	a, b := mustSignBody(t, priv, body1), mustSignBody(t, priv, body1)
	if a != b {
		t.Fatalf("two signatures of one body differ:\n%s\n%s", a, b)
	}
	other := mustSignBody(t, priv, append(bytes.Clone(body1), ' '))
	if other == a {
		t.Fatal("two bodies got one signature")
	}
	for body, h := range map[string]string{string(body1): a, string(body1) + " ": other} {
		if err := signing.VerifyBody(&priv.PublicKey, h, []byte(body)); err != nil {
			t.Fatalf("VerifyBody: %v", err)
		}
	}
}

// BenchmarkSignBody: one delivery's signature (go test -bench SignBody
// ./internal/webhooks/signing).
func BenchmarkSignBody(b *testing.B) {
	priv, err := signing.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	body := bytes.Repeat([]byte("x"), 1300) // about one transaction event
	for b.Loop() {
		if _, err := signing.SignBody(priv, body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestECDSAKnownAnswerOpenSSL checks interoperability with OpenSSL: its
// public key PEM and DER signature are accepted, and our PEM encoding of the
// same key is byte-identical to OpenSSL's.
func TestECDSAKnownAnswerOpenSSL(t *testing.T) {
	pub, err := signing.ParsePublicKeyPEM([]byte(opensslPublicPEM))
	if err != nil {
		t.Fatal(err)
	}
	again, err := signing.EncodePublicKeyPEM(pub)
	if err != nil || string(again) != opensslPublicPEM {
		t.Fatalf("EncodePublicKeyPEM = %s (%v), want OpenSSL's\n%s", again, err, opensslPublicPEM)
	}
	header := `{"v":"1","s":"` + opensslSig + `"}`
	if err := signing.VerifyBody(pub, header, []byte(opensslBody)); err != nil {
		t.Fatalf("VerifyBody(OpenSSL signature): %v", err)
	}
	if err := signing.VerifyBody(pub, header, []byte(opensslBody+"\n")); !errors.Is(err, signing.ErrInvalidSignature) {
		t.Fatalf("VerifyBody(OpenSSL signature, other body) = %v, want ErrInvalidSignature", err)
	}
	// Padding is required: "s" must be standard base64 with "=".
	unpadded := `{"v":"1","s":"` + strings.TrimRight(opensslSig, "=") + `"}`
	if err := signing.VerifyBody(pub, unpadded, []byte(opensslBody)); !errors.Is(err, signing.ErrMalformedServiceSignature) {
		t.Fatalf("VerifyBody(unpadded) = %v, want ErrMalformedServiceSignature", err)
	}
}

// TestVerifyBodyIndependentSignature: a header assembled by hand from
// ecdsa.SignASN1 verifies.
func TestVerifyBodyIndependentSignature(t *testing.T) {
	priv := mustKey(t)
	digest := sha256.Sum256(body1)
	der, err := ecdsa.SignASN1(rand.Reader, priv, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	h := `{"v":"1","s":"` + base64.StdEncoding.EncodeToString(der) + `"}`
	if err := signing.VerifyBody(&priv.PublicKey, h, body1); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyBodyToleratesJSONLayout(t *testing.T) {
	priv := mustKey(t)
	s := headerShape.FindStringSubmatch(mustSignBody(t, priv, body1))[1]
	for _, h := range []string{
		`{ "v" : "1" , "s" : "` + s + `" }`,
		"\t{\n  \"v\": \"1\",\n  \"s\": \"" + s + "\"\n}\n",
		`{"s":"` + s + `","v":"1"}`,
		`{"v":"1","kid":"2026-01","s":"` + s + `","x":{"nested":[1,2]}}`,
		`{"v":"\u0031","s":"` + strings.ReplaceAll(s, "/", `\/`) + `"}`,
	} {
		if err := signing.VerifyBody(&priv.PublicKey, h, body1); err != nil {
			t.Errorf("VerifyBody(%q): %v", h, err)
		}
	}
}

func TestVerifyBodyRejects(t *testing.T) {
	priv, other := mustKey(t), mustKey(t)
	good := mustSignBody(t, priv, body1)
	s := headerShape.FindStringSubmatch(good)[1]
	der, _ := base64.StdEncoding.DecodeString(s)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)

	for _, tc := range []struct {
		name        string
		pub         *ecdsa.PublicKey // nil: priv's public key, unless nilKey
		nilKey      bool
		header      string // "": good, unless emptyHeader
		emptyHeader bool
		body        []byte // nil: body1
		want        error
	}{
		{name: "tampered body", body: append(bytes.Clone(body1), ' '), want: signing.ErrInvalidSignature},
		{name: "empty body", body: []byte{}, want: signing.ErrInvalidSignature},
		{name: "wrong key", pub: &other.PublicKey, want: signing.ErrInvalidSignature},
		{name: "P-384 key", pub: &p384.PublicKey, want: signing.ErrInvalidKey},
		{name: "nil key", nilKey: true, want: signing.ErrInvalidKey},
		{name: "version 2", header: `{"v":"2","s":"` + s + `"}`, want: signing.ErrUnsupportedVersion},
		{name: "version 0", header: `{"v":"0","s":"` + s + `"}`, want: signing.ErrUnsupportedVersion},
		{name: "version v1", header: `{"v":"v1","s":"` + s + `"}`, want: signing.ErrUnsupportedVersion},
		{name: "version padded", header: `{"v":" 1","s":"` + s + `"}`, want: signing.ErrUnsupportedVersion},
		{name: "version number", header: `{"v":1,"s":"` + s + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "version null", header: `{"v":null,"s":"` + s + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "version upper-case key", header: `{"V":"1","s":"` + s + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "missing v", header: `{"s":"` + s + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "missing s", header: `{"v":"1"}`, want: signing.ErrMalformedServiceSignature},
		{name: "duplicate v", header: `{"v":"2","v":"1","s":"` + s + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "duplicate s", header: `{"v":"1","s":"AAAA","s":"` + s + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "s empty", header: `{"v":"1","s":""}`, want: signing.ErrMalformedServiceSignature},
		{name: "s not base64", header: `{"v":"1","s":"not base64!"}`, want: signing.ErrMalformedServiceSignature},
		{name: "s url alphabet", header: `{"v":"1","s":"` + base64.URLEncoding.EncodeToString(append([]byte{0xfb, 0xff}, der...)) + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "s raw r||s", header: `{"v":"1","s":"` + base64.StdEncoding.EncodeToString(make([]byte, 64)) + `"}`, want: signing.ErrInvalidSignature},
		{name: "s DER plus trailing byte", header: `{"v":"1","s":"` + base64.StdEncoding.EncodeToString(append(bytes.Clone(der), 0)) + `"}`, want: signing.ErrInvalidSignature},
		{name: "s number", header: `{"v":"1","s":12}`, want: signing.ErrMalformedServiceSignature},
		{name: "empty", emptyHeader: true, want: signing.ErrMalformedServiceSignature},
		{name: "blank", header: "  ", want: signing.ErrMalformedServiceSignature},
		{name: "bare base64", header: s, want: signing.ErrMalformedServiceSignature},
		{name: "array", header: `["1","` + s + `"]`, want: signing.ErrMalformedServiceSignature},
		{name: "null", header: `null`, want: signing.ErrMalformedServiceSignature},
		{name: "truncated", header: good[:len(good)-1], want: signing.ErrMalformedServiceSignature},
		{name: "trailing data", header: good + "x", want: signing.ErrMalformedServiceSignature},
		{name: "two objects", header: good + good, want: signing.ErrMalformedServiceSignature},
		{name: "too long", header: `{"v":"1","s":"` + s + `","pad":"` + strings.Repeat("x", 1024) + `"}`, want: signing.ErrMalformedServiceSignature},
		{name: "single quotes", header: `{'v':'1','s':'` + s + `'}`, want: signing.ErrMalformedServiceSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pub, header, body := &priv.PublicKey, good, body1
			if tc.pub != nil || tc.nilKey {
				pub = tc.pub
			}
			if tc.header != "" || tc.emptyHeader {
				header = tc.header
			}
			if tc.body != nil {
				body = tc.body
			}
			if err := signing.VerifyBody(pub, header, body); !errors.Is(err, tc.want) {
				t.Fatalf("VerifyBody = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestPEMRejects(t *testing.T) {
	priv := mustKey(t)
	privPEM, _ := signing.EncodePrivateKeyPEM(priv)
	pubPEM, _ := signing.EncodePublicKeyPEM(&priv.PublicKey)

	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384Priv, _ := x509.MarshalPKCS8PrivateKey(p384)
	p384Pub, _ := x509.MarshalPKIXPublicKey(&p384.PublicKey)
	edPub, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	edPrivDER, _ := x509.MarshalPKCS8PrivateKey(edPriv)
	edPubDER, _ := x509.MarshalPKIXPublicKey(edPub)
	enc := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	encrypted := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: []byte{1}})

	for name, in := range map[string][]byte{
		"empty":               nil,
		"garbage":             []byte("not a key"),
		"public as private":   pubPEM,
		"P-384":               enc("PRIVATE KEY", p384Priv),
		"Ed25519":             enc("PRIVATE KEY", edPrivDER),
		"bad DER":             enc("PRIVATE KEY", []byte{0x30, 0x00}),
		"encrypted":           encrypted,
		"two keys":            append(bytes.Clone(privPEM), privPEM...),
		"text before":         append([]byte("key:\n"), privPEM...),
		"certificate request": enc("CERTIFICATE REQUEST", []byte{0x30, 0x00}),
	} {
		if _, err := signing.ParsePrivateKeyPEM(in); !errors.Is(err, signing.ErrInvalidKey) {
			t.Errorf("ParsePrivateKeyPEM(%s) = %v, want ErrInvalidKey", name, err)
		}
	}
	for name, in := range map[string][]byte{
		"empty":             nil,
		"garbage":           []byte("not a key"),
		"private as public": privPEM,
		"P-384":             enc("PUBLIC KEY", p384Pub),
		"Ed25519":           enc("PUBLIC KEY", edPubDER),
		"bad DER":           enc("PUBLIC KEY", []byte{0x30, 0x00}),
		"two keys":          append(bytes.Clone(pubPEM), pubPEM...),
	} {
		if _, err := signing.ParsePublicKeyPEM(in); !errors.Is(err, signing.ErrInvalidKey) {
			t.Errorf("ParsePublicKeyPEM(%s) = %v, want ErrInvalidKey", name, err)
		}
	}
	if _, err := signing.EncodePrivateKeyPEM(p384); !errors.Is(err, signing.ErrInvalidKey) {
		t.Errorf("EncodePrivateKeyPEM(P-384) = %v", err)
	}
	if _, err := signing.EncodePublicKeyPEM(nil); !errors.Is(err, signing.ErrInvalidKey) {
		t.Errorf("EncodePublicKeyPEM(nil) = %v", err)
	}
	if _, err := signing.SignBody(p384, body1); !errors.Is(err, signing.ErrInvalidKey) {
		t.Errorf("SignBody(P-384) = %v", err)
	}
	if _, err := signing.SignBody(nil, body1); !errors.Is(err, signing.ErrInvalidKey) {
		t.Errorf("SignBody(nil) = %v", err)
	}
}

// openssl ecparam -genkey writes SEC 1 "EC PRIVATE KEY"; accept it too.
func TestParsePrivateKeyPEMAcceptsSEC1(t *testing.T) {
	priv := mustKey(t)
	der, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	in := "\n" + string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})) + "\n\n"
	got, err := signing.ParsePrivateKeyPEM([]byte(in))
	if err != nil || !got.Equal(priv) {
		t.Fatalf("ParsePrivateKeyPEM(SEC 1): %v", err)
	}
}

func TestVerifierChecksBothHeaders(t *testing.T) {
	secret, priv := signing.GenerateSecret(), mustKey(t)
	now := t0.Add(42 * time.Second)
	deliver := func(body []byte) http.Header {
		h := mustSign(t, evID, t0, body, secret).Header()
		h.Set(signing.ServiceSignatureHeader, mustSignBody(t, priv, body))
		return h
	}
	v := signing.Verifier{Secrets: []signing.Secret{secret}, PublicKey: &priv.PublicKey, Now: func() time.Time { return now }}
	if err := v.Verify(deliver(body1), body1); err != nil {
		t.Fatalf("Verify: %v", err)
	}

	// A good Standard Webhooks signature does not excuse a bad ECDSA one
	// and vice versa.
	h := deliver(body1)
	h.Set(signing.ServiceSignatureHeader, mustSignBody(t, mustKey(t), body1))
	if err := v.Verify(h, body1); !errors.Is(err, signing.ErrInvalidSignature) {
		t.Errorf("foreign ECDSA key: %v", err)
	}
	h = deliver(body1)
	h.Set("webhook-signature", mustSign(t, evID, t0, body1, signing.GenerateSecret()).Signature)
	if err := v.Verify(h, body1); !errors.Is(err, signing.ErrNoMatchingSignature) {
		t.Errorf("foreign secret: %v", err)
	}
	h = deliver(body1)
	h.Del(signing.ServiceSignatureHeader)
	var he *signing.HeaderError
	if err := v.Verify(h, body1); !errors.Is(err, signing.ErrMissingHeader) || !errors.As(err, &he) || he.Header != signing.ServiceSignatureHeader {
		t.Errorf("missing X-Service-Signature: %v", err)
	}
	h = deliver(body1)
	h.Add(signing.ServiceSignatureHeader, h.Get(signing.ServiceSignatureHeader))
	if err := v.Verify(h, body1); !errors.Is(err, signing.ErrMalformedServiceSignature) {
		t.Errorf("two X-Service-Signature lines: %v", err)
	}
	if err := v.Verify(deliver(body1), []byte(`{}`)); err == nil {
		t.Error("tampered body accepted")
	}
	now = t0.Add(time.Hour)
	if err := v.Verify(deliver(body1), body1); !errors.Is(err, signing.ErrTimestampTooOld) {
		t.Errorf("stale delivery: %v", err)
	}
	// Without a public key only the Standard Webhooks headers are checked.
	now = t0
	v.PublicKey = nil
	h = deliver(body1)
	h.Del(signing.ServiceSignatureHeader)
	if err := v.Verify(h, body1); err != nil {
		t.Errorf("no public key configured: %v", err)
	}
}
