package httpapi

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/paymentsd/paymentsd/internal/externalaccounts"
	"github.com/paymentsd/paymentsd/internal/openapitest"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

const (
	eaCustomers = "/customers/external-accounts"
	eaPlatform  = "/platform/external-accounts"
)

func (e *env) eaService() *externalaccounts.Service { return e.srv.externalAccountService() }

// eaCustomer creates a customer and returns its id.
func (e *env) eaCustomer(t *testing.T, opts ...reqOpt) string {
	t.Helper()
	r := e.do("POST", "/customers", custIndividual("Jane Doe"), opts...)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)["id"].(string)
}

func eaIndividual() cobj { return cobj{"beneficiaryType": "INDIVIDUAL", "fullName": "Jane Doe"} }

// eaUSD is a USD_ACCOUNT create body (for the platform when customerID is "").
func eaUSD(customerID, accountNumber string) cobj {
	body := cobj{"currency": "USD", "accountInfo": cobj{"accountType": "USD_ACCOUNT", "routingNumber": "021000021",
		"accountNumber": accountNumber, "bankAccountType": "CHECKING", "beneficiary": eaIndividual()}}
	if customerID != "" {
		body["customerId"] = customerID
	}
	return body
}

// eaWallet is a wallet create body; extra are accountInfo keys and values.
func eaWallet(customerID, accountType, currency, ownership string, extra ...any) cobj {
	info := cwith(cobj{"accountType": accountType}, extra...)
	body := cobj{"currency": currency, "accountInfo": info}
	if ownership != "" {
		body["ownershipType"] = ownership
	}
	if customerID != "" {
		body["customerId"] = customerID
	}
	return body
}

func (e *env) eaCreate(t *testing.T, path string, body any, opts ...reqOpt) map[string]any {
	t.Helper()
	r := e.do("POST", path, body, opts...)
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

func (e *env) eaStatus(t *testing.T, path, accountID string) string {
	t.Helper()
	r := e.do("GET", path+"/"+accountID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)["status"].(string)
}

// eaCounts captures the rows a refused request must not change: external
// accounts and challenges, customers, and events.
func (e *env) eaCounts(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	m, err := e.db.Read().ExternalAccountRowCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprint(&b, m)
	for _, envName := range []string{store.EnvSandbox, store.EnvProduction} {
		_, n, err := e.db.Read().ListEvents(ctx, store.Tenant{PlatformID: e.platformID, Env: envName}, store.EventFilter{}, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, " events(%s)=%d", envName, n)
	}
	b.WriteString(" " + e.custRowCounts(t))
	return b.String()
}

// eaEvents lists the events about an account: type and the account status
// carried in data, oldest first.
func (e *env) eaEvents(t *testing.T, accountID string) []string {
	t.Helper()
	evs, _, err := e.db.Read().ListEvents(context.Background(), e.custTenant(), store.EventFilter{ResourceID: accountID}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, ev := range evs {
		var env struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal(ev.Event.Envelope, &env); err != nil || env.Data["id"] != accountID {
			t.Fatalf("event %s: %v", ev.Event.Envelope, err)
		}
		out = append(out, env.Type+":"+env.Data["status"].(string))
	}
	return out
}

// page requests the public liveness page and checks the response against
// the OpenAPI document (the harness's do expects JSON errors; the page
// answers HTML).
func (e *env) eaPage(t *testing.T, method, link string, form url.Values) (int, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, u.Path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s %s: Content-Type %q: %s", method, u.Path, ct, rec.Body)
	}
	openapitest.Check(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec.Code, rec.Body.String()
}

// eaRunner runs the service's background step with short delays until the
// test ends.
func (e *env) eaRunner(t *testing.T) {
	t.Helper()
	e.driveByHand() // this runner replaces the node's, with shorter delays
	svc := e.eaService()
	svc.Poll, svc.LivenessDelay = 10*time.Millisecond, 30*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// eaEventually polls cond for up to 10 seconds.
func eaEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Wallet keys of every signature scheme.

type eaSigner struct {
	accountType, currency string
	info                  []any // accountInfo keys and values
	sign                  func(msg string) string
	signer                string // what the message names
}

func eaEVMSigner(t *testing.T, accountType, currency string) eaSigner {
	t.Helper()
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	addr := walletsig.ChecksumAddress(walletsig.EVMAddressOf(key.PubKey()))
	return eaSigner{accountType, currency, []any{"address", addr}, func(m string) string { return walletsig.SignEVM(key, []byte(m)) }, addr}
}

func eaSolanaSigner(t *testing.T) eaSigner {
	t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	addr := walletsig.SolanaAddressOf(pub)
	return eaSigner{"SOLANA_WALLET", "USDC", []any{"address", addr}, func(m string) string {
		return walletsig.Base58Encode(ed25519.Sign(priv, []byte(m)))
	}, addr}
}

func eaTronSigner(t *testing.T) eaSigner {
	t.Helper()
	key, _ := secp256k1.GeneratePrivateKey()
	addr := walletsig.TronAddressOf(key.PubKey())
	return eaSigner{"TRON_WALLET", "USDT", []any{"address", addr}, func(m string) string { return walletsig.SignTron(key, []byte(m)) }, addr}
}

func eaLightningSigner(t *testing.T) eaSigner {
	t.Helper()
	key, _ := secp256k1.GeneratePrivateKey()
	var hash [32]byte
	_, _ = rand.Read(hash[:])
	inv := walletsig.MakeBolt11("lnbcrt", key, time.Now().Unix(), hash)
	node := fmt.Sprintf("%x", key.PubKey().SerializeCompressed())
	return eaSigner{"LIGHTNING", "BTC", []any{"invoice", inv}, func(m string) string { return walletsig.SignLightning(key, []byte(m)) }, node}
}
