package uma

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
)

// UMA keys are secp256k1, which crypto/x509 neither issues nor parses. The
// chain a tenant publishes is: a leaf certificate for the secp256k1 key
// (built here with encoding/asn1), issued by the tenant's own P-256 CA
// (crypto/x509). Verifying a counterparty's chain checks that every
// certificate is within its validity period and that each is signed by the
// next one's key.

var (
	oidECPublicKey   = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidSecp256k1     = asn1.ObjectIdentifier{1, 3, 132, 0, 10}
	oidECDSAWithSHA2 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
)

type certificate struct {
	TBS       asn1.RawValue
	Algorithm pkix.AlgorithmIdentifier
	Signature asn1.BitString
}

type tbsCertificate struct {
	Raw       asn1.RawContent
	Version   int `asn1:"optional,explicit,default:0,tag:0"`
	Serial    *big.Int
	Algorithm pkix.AlgorithmIdentifier
	Issuer    asn1.RawValue
	Validity  validity
	Subject   asn1.RawValue
	PublicKey publicKeyInfo
}

type validity struct{ NotBefore, NotAfter time.Time }

type publicKeyInfo struct {
	Algorithm pkix.AlgorithmIdentifier
	PublicKey asn1.BitString
}

// certLifetime is how long issued certificates stay valid.
const certLifetime = 2 * 365 * 24 * time.Hour

// newCA makes a tenant's self-signed P-256 CA.
func newCA(name string, now time.Time) (*ecdsa.PrivateKey, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: name + " UMA CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(certLifetime), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, err
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

// issueLeaf certifies a secp256k1 public key under the CA; the chain is PEM,
// leaf first.
func issueLeaf(caKey *ecdsa.PrivateKey, ca *x509.Certificate, pub *secp256k1.PublicKey, name string, notBefore, notAfter time.Time) (string, error) {
	subject, err := asn1.Marshal(pkix.Name{CommonName: name}.ToRDNSequence())
	if err != nil {
		return "", err
	}
	params, _ := asn1.Marshal(oidSecp256k1)
	point := pub.SerializeUncompressed()
	tbs := tbsCertificate{Version: 2, Serial: serial(), Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA2},
		Issuer: asn1.RawValue{FullBytes: ca.RawSubject}, Validity: validity{notBefore.UTC(), notAfter.UTC()},
		Subject: asn1.RawValue{FullBytes: subject},
		PublicKey: publicKeyInfo{Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidECPublicKey, Parameters: asn1.RawValue{FullBytes: params}},
			PublicKey: asn1.BitString{Bytes: point, BitLength: 8 * len(point)}}}
	tbsDER, err := asn1.Marshal(tbs)
	if err != nil {
		return "", err
	}
	digest := sha256.Sum256(tbsDER)
	sig, err := ecdsa.SignASN1(rand.Reader, caKey, digest[:])
	if err != nil {
		return "", err
	}
	der, err := asn1.Marshal(certificate{TBS: asn1.RawValue{FullBytes: tbsDER},
		Algorithm: pkix.AlgorithmIdentifier{Algorithm: oidECDSAWithSHA2}, Signature: asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)}})
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})), nil
}

// Chain verification outcomes.
var (
	ErrChainInvalid = errors.New("uma: certificate chain invalid")
	ErrChainExpired = errors.New("uma: certificate chain expired")
)

// VerifyChain checks a PEM chain, leaf first: at least two certificates,
// each within its validity at now, each signed by the next; the last is
// self-signed. It returns ErrChainExpired or ErrChainInvalid (wrapped).
func VerifyChain(chainPEM string, now time.Time) error {
	blocks, err := pemBlocks(chainPEM)
	if err != nil {
		return err
	}
	if len(blocks) < 2 {
		return errors.Join(ErrChainInvalid, errors.New("the chain holds no issuer certificate"))
	}
	var leaf certificate
	if rest, err := asn1.Unmarshal(blocks[0], &leaf); err != nil || len(rest) > 0 {
		return errors.Join(ErrChainInvalid, errors.New("the leaf certificate does not parse"))
	}
	var tbs tbsCertificate
	if _, err := asn1.Unmarshal(leaf.TBS.FullBytes, &tbs); err != nil {
		return errors.Join(ErrChainInvalid, err)
	}
	if now.Before(tbs.Validity.NotBefore) || now.After(tbs.Validity.NotAfter) {
		return errors.Join(ErrChainExpired, errors.New("the leaf certificate is outside its validity period"))
	}
	issuers := make([]*x509.Certificate, 0, len(blocks)-1)
	for _, b := range blocks[1:] {
		c, err := x509.ParseCertificate(b)
		if err != nil {
			return errors.Join(ErrChainInvalid, err)
		}
		if now.Before(c.NotBefore) || now.After(c.NotAfter) {
			return errors.Join(ErrChainExpired, errors.New("an issuer certificate is outside its validity period"))
		}
		issuers = append(issuers, c)
	}
	pub, ok := issuers[0].PublicKey.(*ecdsa.PublicKey)
	digest := sha256.Sum256(leaf.TBS.FullBytes)
	if !ok || !ecdsa.VerifyASN1(pub, digest[:], leaf.Signature.RightAlign()) {
		return errors.Join(ErrChainInvalid, errors.New("the leaf certificate is not signed by its issuer"))
	}
	for i, c := range issuers {
		parent := c
		if i+1 < len(issuers) {
			parent = issuers[i+1]
		}
		if err := c.CheckSignatureFrom(parent); err != nil {
			return errors.Join(ErrChainInvalid, err)
		}
	}
	return nil
}

func pemBlocks(chainPEM string) ([][]byte, error) {
	rest := []byte(strings.TrimSpace(chainPEM))
	var out [][]byte
	for len(rest) > 0 {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil || b.Type != "CERTIFICATE" {
			return nil, errors.Join(ErrChainInvalid, errors.New("not a PEM certificate chain"))
		}
		out = append(out, b.Bytes)
		rest = []byte(strings.TrimSpace(string(rest)))
	}
	if len(out) == 0 {
		return nil, errors.Join(ErrChainInvalid, errors.New("empty certificate chain"))
	}
	return out, nil
}
