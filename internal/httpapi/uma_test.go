package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/uma"
)

// umaDomain sets the platform's UMA domain.
func (e *env) umaDomain(t *testing.T, domain string) {
	t.Helper()
	expect(t, e.do("PATCH", "/config", cobj{"umaDomain": domain}), http.StatusOK, "")
}

// Customers get UMA addresses under the platform's domain: the requested
// one (lowercased), unique on the domain (409 UMA_ADDRESS_EXISTS), refused
// off the domain or without one (400 INVALID_UMA_ADDRESS); one is assigned
// when none is given; a change frees the old one.
func TestUma_CustomerAddresses(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		// No domain yet: no address, and asking for one is refused.
		c := e.custCreate(t, custIndividual("No Domain"))
		if _, ok := c["umaAddress"]; ok {
			t.Fatalf("address without a domain: %v", c)
		}
		expect(t, e.do("POST", "/customers", cwith(custIndividual("Early"), "umaAddress", "$early@pay.example.com")), http.StatusBadRequest, "INVALID_UMA_ADDRESS")

		e.umaDomain(t, "pay.example.com")
		alice := e.custCreate(t, cwith(custIndividual("Alice"), "umaAddress", "$Alice@pay.example.com"))
		if alice["umaAddress"] != "$alice@pay.example.com" {
			t.Fatalf("%v", alice["umaAddress"])
		}
		expect(t, e.do("POST", "/customers", cwith(custIndividual("Alice 2"), "umaAddress", "$alice@pay.example.com")), http.StatusConflict, "UMA_ADDRESS_EXISTS")
		expect(t, e.do("POST", "/customers", cwith(custIndividual("Other"), "umaAddress", "$bob@other.example.com")), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		expect(t, e.do("POST", "/customers", cwith(custIndividual("Bad"), "umaAddress", "bob@pay.example.com")), http.StatusBadRequest, "INVALID_UMA_ADDRESS")
		auto := e.custCreate(t, custIndividual("Auto"))
		if a, _ := auto["umaAddress"].(string); !strings.HasPrefix(a, "$") || !strings.HasSuffix(a, "@pay.example.com") {
			t.Fatalf("no assigned address: %v", auto)
		}
		// Moving alice frees her old address for someone else.
		r := e.do("PATCH", "/customers/"+alice["id"].(string), cobj{"umaAddress": "$alice2@pay.example.com"})
		expect(t, r, http.StatusOK, "")
		if r.JSON(t)["umaAddress"] != "$alice2@pay.example.com" {
			t.Fatalf("%s", r.Body)
		}
		e.custCreate(t, cwith(custIndividual("New Alice"), "umaAddress", "$alice@pay.example.com"))
		got := e.do("GET", "/customers/"+alice["id"].(string), nil).JSON(t)
		if got["umaAddress"] != "$alice2@pay.example.com" {
			t.Fatalf("%v", got)
		}
	})
}

// The public-key endpoint serves the platform's keys by Host, with chains
// that verify; an unknown Host is 404 UMA_NOT_FOUND. The keys are stable and
// their private halves are stored sealed.
func TestUma_PublicKeys(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		hostOf := func(r *http.Request) { r.Host = "pay.example.com" }
		expect(t, e.do("GET", "//.well-known/lnurlpubkey", nil, hostOf), http.StatusNotFound, "UMA_NOT_FOUND")
		e.umaDomain(t, "pay.example.com")
		r := e.do("GET", "//.well-known/lnurlpubkey", nil, hostOf)
		expect(t, r, http.StatusOK, "")
		var pk protocol.PubKeyResponse
		if err := json.Unmarshal(r.Body, &pk); err != nil {
			t.Fatal(err)
		}
		if err := uma.VerifyChain(*pk.SigningCertChain, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := uma.VerifyChain(*pk.EncryptionCertChain, time.Now()); err != nil {
			t.Fatal(err)
		}
		if _, err := pk.SigningPubKey(); err != nil {
			t.Fatal(err)
		}
		again := e.do("GET", "//.well-known/lnurlpubkey", nil, hostOf)
		if string(again.Body) != string(r.Body) {
			t.Fatal("keys changed between calls")
		}
		row, err := e.db.Read().GetUmaKeys(context.Background(), e.custTenant())
		if err != nil || len(row.SealedSigningKey) < 40 || strings.Contains(string(r.Body), row.SealedSigningKey) {
			t.Fatalf("sealed key: %v %q", err, row.SealedSigningKey)
		}
	})
}
