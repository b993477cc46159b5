package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// scKey is a fresh Idempotency-Key.
func scKey() reqOpt {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return withHeader("Idempotency-Key", hex.EncodeToString(b))
}

// scLink links a sandbox provider account and returns it.
func (e *env) scLink(t *testing.T, clientID string) map[string]any {
	t.Helper()
	r := e.do("POST", "/stablecoin-provider-accounts", cobj{"provider": "BRALE", "apiClientId": clientID,
		"apiClientSecret": "sandbox-secret-" + clientID}, scKey())
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// scRegister registers a stablecoin and returns it.
func (e *env) scRegister(t *testing.T, valueType, tokenID string, kv ...any) map[string]any {
	t.Helper()
	r := e.do("POST", "/stablecoins", cwith(cobj{"providerTokenIdentifier": valueType, "networkTokenIdentifier": tokenID,
		"network": "SPARK"}, kv...), scKey())
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// scSpark creates an ACTIVE platform SPARK_WALLET external account.
func (e *env) scSpark(t *testing.T) string {
	t.Helper()
	a := e.eaCreate(t, eaPlatform, eaWallet("", "SPARK_WALLET", "USDB", "", "address",
		walletsig.EncodeSparkAddress("spark", mustCompressed(t))))
	if a["status"] != "ACTIVE" {
		t.Fatalf("spark wallet not ACTIVE: %v", a)
	}
	return a["id"].(string)
}

// scBank creates a platform USD bank account with accountNumber.
func (e *env) scBank(t *testing.T, accountNumber string) string {
	t.Helper()
	return e.eaCreate(t, eaPlatform, eaUSD("", accountNumber))["id"].(string)
}

func scMintBody(amount, dest string) cobj {
	return cobj{"amount": amount, "fundingSource": cobj{"type": "WIRE"}, "destination": cobj{"accountId": dest}}
}

func scBurnBody(amount, src, bank, rail string) cobj {
	return cobj{"amount": amount, "source": cobj{"type": "EXTERNAL_ACCOUNT", "externalAccountId": src},
		"destination": cobj{"type": "EXTERNAL_ACCOUNT", "externalAccountId": bank, "rail": rail}}
}

// scWait polls an operation until it has status.
func (e *env) scWait(t *testing.T, opID, status string) map[string]any {
	t.Helper()
	var op map[string]any
	eaEventually(t, opID+" "+status, func() bool {
		r := e.do("GET", "/stablecoin-operations/"+opID, nil)
		expect(t, r, http.StatusOK, "")
		op = r.JSON(t)
		return op["status"] == status
	})
	return op
}

// scEventTypes lists the types of the events about a resource.
func (e *env) scEventTypes(t *testing.T, resourceID string) []string {
	t.Helper()
	var out []string
	for _, ev := range e.acEvents(t, resourceID) {
		out = append(out, ev["type"].(string))
	}
	return out
}

// scSupply is the stablecoin's issued supply per the ledger.
func (e *env) scSupply(t *testing.T, coinID string) int64 {
	t.Helper()
	n, err := e.srv.stablecoinService().Supply(context.Background(), e.acTenant(), coinID)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
