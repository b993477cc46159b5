package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// scFixture is a platform with two ACTIVE provider account links (A issues
// ACME, B issues BETA), an INVALID and a REVOKED link, a coin still
// PROVISIONING, and external accounts in every state the refusals need.
type scFixture struct {
	linkA, linkB, invalid, revoked                        string
	acme, beta, pend                                      string
	wallet, walletB, fresh, unverified, bank, refusedBank string
	accountIDs                                            []string
}

func (e *env) scFixture(t *testing.T) scFixture {
	t.Helper()
	var f scFixture
	f.linkA = e.scLink(t, "client-a")["id"].(string)
	f.acme = e.scRegister(t, "ACME", "btkn1acme")["id"].(string)
	f.linkB = e.scLink(t, "client-b")["id"].(string)
	f.beta = e.scRegister(t, "BETA", "btkn1beta", "stablecoinProviderAccountId", f.linkB)["id"].(string)
	f.pend = e.scRegister(t, "PENDX", "btkn1pend", "stablecoinProviderAccountId", f.linkA)["id"].(string)
	inv := e.scLink(t, "unapproved-c")
	if inv["status"] != "INVALID" {
		t.Fatalf("unapproved link: %v", inv)
	}
	f.invalid = inv["id"].(string)
	f.revoked = e.scLink(t, "client-d")["id"].(string)
	r := e.do("DELETE", "/stablecoin-provider-accounts/"+f.revoked, nil)
	expect(t, r, http.StatusOK, "")
	if r.JSON(t)["status"] != "REVOKED" {
		t.Fatal(r.Body)
	}
	f.wallet, f.walletB, f.fresh = e.scSpark(t), e.scSpark(t), e.scSpark(t)
	f.unverified = e.eaCreate(t, eaPlatform, eaWallet("", "SPARK_WALLET", "USDB", "FIRST_PARTY", "address",
		walletsig.EncodeSparkAddress("spark", mustCompressed(t))))["id"].(string)
	f.bank, f.refusedBank = e.scBank(t, "123456789"), e.scBank(t, "555559999")
	r = e.do("POST", "/stablecoins/"+f.acme+"/mints", scMintBody("10000000", f.wallet), scKey())
	expect(t, r, http.StatusCreated, "")
	e.scWait(t, r.JSON(t)["id"].(string), "COMPLETED")
	r = e.do("POST", "/stablecoins/"+f.beta+"/mints", scMintBody("10000000", f.walletB), scKey())
	expect(t, r, http.StatusCreated, "")
	e.scWait(t, r.JSON(t)["id"].(string), "COMPLETED")
	expect(t, e.do("POST", "/stablecoins/"+f.acme+"/grid-operations-enablement", nil), http.StatusOK, "")
	f.accountIDs = []string{f.wallet, f.walletB, f.fresh, f.unverified, f.bank, f.refusedBank}
	return f
}

// scSnapshot is everything a stablecoin request could change.
func (e *env) scSnapshot(t *testing.T, f scFixture) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(e.acCounts(t))
	for _, env := range []string{store.EnvSandbox, store.EnvProduction} {
		tn := store.Tenant{PlatformID: e.platformID, Env: env}
		links, _, err := e.db.Read().ListStablecoinProviderAccounts(ctx, tn, "", "", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			fmt.Fprintf(&b, "%s %s %s;", l.ID, l.Status, l.UpdatedAt)
		}
		coins, _, err := e.db.Read().ListStablecoins(ctx, tn, store.StablecoinFilter{}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range coins {
			fmt.Fprintf(&b, "%s %s %s %s;", c.ID, c.IssuanceStatus, c.GridOperationsStatus, c.UpdatedAt)
			ops, _, err := e.db.Read().ListStablecoinOperations(ctx, tn, c.ID, "", "", 100)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "ops %d;", len(ops))
		}
		for _, id := range f.accountIDs {
			l, err := e.db.Read().StablecoinLinksOf(ctx, tn, id)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s links %d;", id, len(l))
		}
	}
	return b.String()
}

// Every STABLECOIN_* error of Part B, each with the input docs/stablecoins.md
// documents for it, at its status; none changes anything.
func TestStablecoinErrors(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		f := e.scFixture(t)
		const unknownEA = "ExternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"
		mint := func(coin string, body cobj) (string, string, any) {
			return "POST", "/stablecoins/" + coin + "/mints", body
		}
		burn := func(coin string, body cobj) (string, string, any) {
			return "POST", "/stablecoins/" + coin + "/burns", body
		}
		register := func(kv ...any) (string, string, any) {
			return "POST", "/stablecoins", cwith(cobj{"providerTokenIdentifier": "GAMMA", "networkTokenIdentifier": "btkn1gamma", "network": "SPARK"}, kv...)
		}
		link := func(client, secret string) (string, string, any) {
			return "POST", "/stablecoin-provider-accounts", cobj{"provider": "BRALE", "apiClientId": client, "apiClientSecret": secret}
		}
		type call = func() (string, string, any)
		rows := []struct {
			code   string
			status int
			req    call
			opts   []reqOpt
		}{
			// R-STBL-01: provider-account errors are 400.
			{"STABLECOIN_PROVIDER_ACCOUNT_INVALID", 400, func() (string, string, any) { return register("stablecoinProviderAccountId", f.invalid) }, nil},
			{"STABLECOIN_PROVIDER_ACCOUNT_REVOKED", 400, func() (string, string, any) { return register("stablecoinProviderAccountId", f.revoked) }, nil},
			{"STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED", 400, func() (string, string, any) { return register() }, nil},
			// R-STBL-03: amount and source errors are 400.
			{"STABLECOIN_AMOUNT_NOT_REPRESENTABLE", 400, func() (string, string, any) { return mint(f.acme, scMintBody("1000001", f.wallet)) }, nil},
			{"STABLECOIN_BURN_SOURCE_NOT_SUPPORTED", 400, func() (string, string, any) { return burn(f.acme, scBurnBody("1000000", f.bank, f.bank, "WIRE")) }, nil},
			{"STABLECOIN_PROVIDER_SOURCE_NOT_LINKED", 400, func() (string, string, any) {
				return burn(f.acme, cobj{"amount": "1000000", "source": cobj{"type": "PROVIDER_INTERNAL_BALANCE"},
					"destination": cobj{"type": "EXTERNAL_ACCOUNT", "externalAccountId": f.bank, "rail": "WIRE"}})
			}, nil},
			// R-STBL-04: external-account link errors are 400.
			{"STABLECOIN_EXTERNAL_ACCOUNT_LINK_FAILED", 400, func() (string, string, any) { return mint(f.acme, scMintBody("1000000", f.unverified)) }, nil},
			{"STABLECOIN_EXTERNAL_ACCOUNT_LINK_METHOD_REQUIRED", 400, func() (string, string, any) {
				return mint(f.acme, cobj{"amount": "1000000", "fundingSource": cobj{"type": "ACH_DEBIT", "externalAccountId": f.bank},
					"destination": cobj{"accountId": f.wallet}})
			}, nil},
			{"STABLECOIN_EXTERNAL_ACCOUNT_NOT_LINKED", 400, func() (string, string, any) { return burn(f.acme, scBurnBody("1000000", f.fresh, f.bank, "WIRE")) }, nil},
			{"STABLECOIN_EXTERNAL_ACCOUNT_NOT_SUPPORTED", 400, func() (string, string, any) { return mint(f.acme, scMintBody("1000000", f.bank)) }, nil},
			{"STABLECOIN_EXTERNAL_ACCOUNT_PROVIDER_LINK_FAILED", 400, func() (string, string, any) {
				return burn(f.acme, scBurnBody("1000000", f.wallet, f.refusedBank, "WIRE"))
			}, nil},
			{"STABLECOIN_EXTERNAL_ACCOUNT_PROVIDER_LINK_REQUIRED", 400, func() (string, string, any) {
				return burn(f.acme, scBurnBody("1000000", f.walletB, f.bank, "WIRE"))
			}, nil},
			// R-STBL-05: enablement and provider errors are 400.
			{"STABLECOIN_GRID_OPERATIONS_NOT_ENABLED", 400, func() (string, string, any) {
				return mint(f.beta, cobj{"amount": "1000000", "fundingSource": cobj{"type": "GRID_INTERNAL_ACCOUNT", "accountId": "InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"},
					"destination": cobj{"accountId": f.walletB}})
			}, nil},
			{"STABLECOIN_NOT_PROVISIONED", 400, func() (string, string, any) { return mint(f.pend, scMintBody("1000000", f.wallet)) }, nil},
			{"STABLECOIN_OPERATION_NOT_SUPPORTED", 400, func() (string, string, any) {
				return burn(f.acme, scBurnBody("1000000", f.wallet, f.bank, "RTP_CREDIT"))
			}, nil},
			{"STABLECOIN_PROVIDER_ERROR", 400, func() (string, string, any) { return link("client-p", "production-secret-1") }, []reqOpt{withCreds(e.production)}},
			{"STABLECOIN_VERIFICATION_FAILED", 400, func() (string, string, any) { return link("client-v", "invalid-secret-1") }, nil},
			// R-STBL-06: not-found errors are 404.
			{"STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND", 404, func() (string, string, any) {
				return "GET", "/stablecoin-provider-accounts/StablecoinProviderAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil
			}, nil},
			{"STABLECOIN_EXTERNAL_ACCOUNT_NOT_FOUND", 404, func() (string, string, any) { return mint(f.acme, scMintBody("1000000", unknownEA)) }, nil},
			{"STABLECOIN_NOT_FOUND", 404, func() (string, string, any) {
				return "GET", "/stablecoins/Stablecoin:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil
			}, nil},
			{"STABLECOIN_OPERATION_NOT_FOUND", 404, func() (string, string, any) {
				return "GET", "/stablecoin-operations/StablecoinOperation:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", nil
			}, nil},
			// R-STBL-07: conflicts are 409.
			{"STABLECOIN_GRID_ENABLEMENT_NOT_REQUESTABLE", 409, func() (string, string, any) {
				return "POST", "/stablecoins/" + f.acme + "/grid-operations-enablement", nil
			}, nil},
			// R-STBL-08: a symbol and a token identifier are unique.
			{"STABLECOIN_SYMBOL_ALREADY_EXISTS", 409, func() (string, string, any) {
				return "POST", "/stablecoins", cobj{"providerTokenIdentifier": "ACME", "networkTokenIdentifier": "btkn1other", "network": "SPARK",
					"stablecoinProviderAccountId": f.linkA}
			}, nil},
			{"STABLECOIN_TOKEN_IDENTIFIER_ALREADY_EXISTS", 409, func() (string, string, any) {
				return "POST", "/stablecoins", cobj{"providerTokenIdentifier": "DELTA", "networkTokenIdentifier": "btkn1acme", "network": "SPARK",
					"stablecoinProviderAccountId": f.linkA}
			}, nil},
		}
		for _, row := range rows {
			before := e.scSnapshot(t, f)
			method, path, body := row.req()
			opts := append([]reqOpt{scKey()}, row.opts...)
			r := e.do(method, path, body, opts...)
			if r.Status != row.status || r.Code(t) != row.code { // R-STBL-01..08 code-to-status, per row
				t.Errorf("%s: status %d code %s: %s", row.code, r.Status, r.Code(t), r.Body)
				continue
			}
			if after := e.scSnapshot(t, f); after != before {
				t.Errorf("%s changed something:\n%s\n%s", row.code, before, after)
			}
		}
	})
}

// R-STBL-02: SELECTION_REQUIRED, then the same request naming
// stablecoinProviderAccountId succeeds.
func TestStablecoinSelection_R_STBL_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.scLink(t, "client-a")
		b := e.scLink(t, "client-b")["id"].(string)
		body := cobj{"providerTokenIdentifier": "ACME", "networkTokenIdentifier": "btkn1acme", "network": "SPARK"}
		expect(t, e.do("POST", "/stablecoins", body, scKey()), http.StatusBadRequest, "STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED")
		body["stablecoinProviderAccountId"] = b
		r := e.do("POST", "/stablecoins", body, scKey())
		expect(t, r, http.StatusCreated, "")
		if r.JSON(t)["stablecoinProviderAccountId"] != b {
			t.Fatal(r.Body)
		}
	})
}
