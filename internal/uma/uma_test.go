package uma

import (
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/utils"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

func TestParseAddress(t *testing.T) {
	for in, want := range map[string]string{
		"$alice@uma.example.com":   "$alice@uma.example.com",
		"$Alice.B+1@Example.COM":   "$alice.b+1@example.com",
		" $bob@127.0.0.1:8081 ":    "$bob@127.0.0.1:8081",
		"$a_b-c@localhost:9":       "$a_b-c@localhost:9",
		"$019a0000-1111@pay.co.uk": "$019a0000-1111@pay.co.uk",
	} {
		a, err := ParseAddress(in)
		if err != nil || a.String() != want {
			t.Errorf("%q: %v %v", in, a, err)
		}
	}
	for _, in := range []string{"", "alice@example.com", "$@example.com", "$alice", "$alice@", "$al ice@example.com",
		"$alice@exa mple.com", "$.alice@example.com", "$alice@example.com@x", "$" + strings.Repeat("a", 65) + "@example.com",
		"$alice@-example.com", "$alice@example.com:"} {
		_, err := ParseAddress(in)
		if e, ok := apierr.From(err); !ok || e.Code != "INVALID_UMA_ADDRESS" || e.Status != 400 {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func FuzzParseAddress(f *testing.F) {
	f.Add("$alice@uma.example.com")
	f.Add("$a@127.0.0.1:1")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			return
		}
		b, err := ParseAddress(a.String())
		if err != nil || b != a {
			t.Fatalf("%q → %v → %v %v", s, a, b, err)
		}
	})
}

// The chains we issue carry the key the SDK extracts, verify, and fail as
// expired outside their validity or as invalid when tampered or unsigned.
func TestCertificateChains(t *testing.T) {
	now := time.Now()
	caKey, ca, err := newCA("test", now)
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := secp256k1.GeneratePrivateKey()
	chain, err := issueLeaf(caKey, ca, priv.PubKey(), "leaf", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := utils.ExtractPubkeyFromPemCertificateChain(&chain)
	if err != nil || !pub.IsEqual(priv.PubKey()) {
		t.Fatalf("SDK reads another key: %v", err)
	}
	if _, err := umasdk.GetPubKeyResponse(chain, chain, nil); err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(chain, now); err != nil {
		t.Fatal(err)
	}
	if err := VerifyChain(chain, now.Add(2*time.Hour)); !errorsIs(err, ErrChainExpired) {
		t.Fatalf("expired: %v", err)
	}
	otherKey, other, _ := newCA("other", now)
	_ = otherKey
	blocks, _ := pemBlocks(chain)
	swapped := pemOf(blocks[0]) + pemOf(other.Raw)
	if err := VerifyChain(swapped, now); !errorsIs(err, ErrChainInvalid) {
		t.Fatalf("foreign issuer: %v", err)
	}
	leaf := append([]byte(nil), blocks[0]...)
	leaf[len(leaf)/2] ^= 0xff
	if err := VerifyChain(pemOf(leaf)+pemOf(blocks[1]), now); !errorsIs(err, ErrChainInvalid) {
		t.Fatalf("tampered leaf: %v", err)
	}
	if err := VerifyChain(pemOf(blocks[0]), now); !errorsIs(err, ErrChainInvalid) {
		t.Fatalf("no issuer: %v", err)
	}
	if err := VerifyChain("garbage", now); !errorsIs(err, ErrChainInvalid) {
		t.Fatalf("garbage: %v", err)
	}
}

func FuzzVerifyChain(f *testing.F) {
	now := time.Now()
	caKey, ca, _ := newCA("fuzz", now)
	priv, _ := secp256k1.GeneratePrivateKey()
	chain, _ := issueLeaf(caKey, ca, priv.PubKey(), "leaf", now.Add(-time.Hour), now.Add(time.Hour))
	f.Add(chain)
	f.Add("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		err := VerifyChain(s, now)
		if err != nil && !errorsIs(err, ErrChainInvalid) && !errorsIs(err, ErrChainExpired) {
			t.Fatalf("unclassified: %v", err)
		}
	})
}

func TestInvoiceRoundTrip(t *testing.T) {
	in := Invoice{Node: "127.0.0.1:8081", PaymentHash: strings.Repeat("ab", 32), AmountMsat: 1500, ExpiresAt: 1900000000}
	out, err := ParseInvoice(in.Encode())
	if err != nil || out != in {
		t.Fatalf("%v %v", out, err)
	}
	for _, bad := range []string{"", "lnbc1xyz", InvoicePrefix + "!!", InvoicePrefix + "e30", Invoice{Node: "x y", PaymentHash: in.PaymentHash, AmountMsat: 1, ExpiresAt: 1}.Encode(),
		Invoice{Node: "a.b", PaymentHash: "ab", AmountMsat: 1, ExpiresAt: 1}.Encode(), Invoice{Node: "a.b", PaymentHash: in.PaymentHash, ExpiresAt: 1}.Encode()} {
		if _, err := ParseInvoice(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseInvoice(f *testing.F) {
	f.Add(Invoice{Node: "pay.example.com", PaymentHash: strings.Repeat("0f", 32), AmountMsat: 1, ExpiresAt: 1}.Encode())
	f.Add("lnsim1")
	f.Fuzz(func(t *testing.T, s string) {
		i, err := ParseInvoice(s)
		if err != nil {
			return
		}
		j, err := ParseInvoice(i.Encode())
		if err != nil || j != i {
			t.Fatalf("%q: %v %v", s, j, err)
		}
	})
}
