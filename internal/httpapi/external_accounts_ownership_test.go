package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// challenge starts a challenge and returns its body.
func (e *env) eaChallenge(t *testing.T, path, id, method string) map[string]any {
	t.Helper()
	r := e.do("POST", path+"/"+id+"/challenge", cobj{"method": method})
	expect(t, r, http.StatusCreated, "")
	return r.JSON(t)
}

// R-EACCT-06, R-EACCT-10, R-EACCT-11, R-EACCT-12, R-EACCT-14: a FIRST_PARTY
// self-custody wallet of every chain with a signature scheme starts
// PENDING_OWNERSHIP_VERIFICATION; a real signature over the exact
// messageToSign makes it ACTIVE, with an EXTERNAL_ACCOUNT.STATUS_UPDATED
// event; customer and platform paths alike.
func TestExternalAccounts_WalletSignature_R_EACCT_10_11_12_14(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		signers := []eaSigner{
			eaEVMSigner(t, "ETHEREUM_WALLET", "USDC"), eaEVMSigner(t, "BASE_WALLET", "USDC"),
			eaEVMSigner(t, "POLYGON_WALLET", "USDC"), eaEVMSigner(t, "PLASMA_WALLET", "USDT"),
			eaSolanaSigner(t), eaTronSigner(t), eaLightningSigner(t),
		}
		for i, s := range signers {
			path, owner := eaCustomers, cust
			if i%2 == 1 {
				path, owner = eaPlatform, ""
			}
			a := e.eaCreate(t, path, eaWallet(owner, s.accountType, s.currency, "FIRST_PARTY", s.info...))
			id := a["id"].(string)
			if a["status"] != "PENDING_OWNERSHIP_VERIFICATION" || a["ownershipType"] != "FIRST_PARTY" {
				t.Fatalf("%s: %v", s.accountType, a)
			}
			ch := e.eaChallenge(t, path, id, "WALLET_SIGNATURE")
			msg, _ := ch["messageToSign"].(string)
			exp, err := time.Parse(time.RFC3339, ch["expiresAt"].(string))
			if err != nil || ch["method"] != "WALLET_SIGNATURE" || !strings.Contains(msg, id) || !strings.Contains(msg, s.signer) ||
				!strings.Contains(msg, "Nonce: ") || time.Until(exp) < 9*time.Minute || time.Until(exp) > 11*time.Minute {
				t.Fatalf("%s: challenge %v", s.accountType, ch)
			}
			if _, has := ch["verificationLink"]; has {
				t.Fatal("a WALLET_SIGNATURE challenge has no link")
			}
			if e.eaStatus(t, path, id) != "PENDING_OWNERSHIP_VERIFICATION" {
				t.Fatal("R-EACCT-12")
			}
			r := e.do("POST", path+"/"+id+"/verify", cobj{"signature": s.sign(msg)})
			expect(t, r, http.StatusOK, "")
			if r.JSON(t)["status"] != "ACTIVE" || e.eaStatus(t, path, id) != "ACTIVE" {
				t.Fatalf("%s: %s", s.accountType, r.Body)
			}
			if got := strings.Join(e.eaEvents(t, id), ","); got != "EXTERNAL_ACCOUNT.STATUS_UPDATED:ACTIVE" {
				t.Fatalf("%s: events %s", s.accountType, got)
			}
			if err := e.eaService().UsableForPayout(context.Background(), e.custTenant(), id); err != nil {
				t.Fatalf("%s: %v", s.accountType, err)
			}
			// Verified: no further challenge, and verify finds none.
			expect(t, e.do("POST", path+"/"+id+"/challenge", cobj{"method": "WALLET_SIGNATURE"}), http.StatusConflict, "CONFLICT")
			expect(t, e.do("POST", path+"/"+id+"/verify", cobj{"signature": s.sign(msg)}), http.StatusConflict, "CONFLICT")
		}
	})
}

// R-EACCT-15, R-EACCT-12: a well-formed signature that does not verify makes
// the account UNVERIFIED (400, event); the challenge is spent; a new
// challenge returns it to PENDING_OWNERSHIP_VERIFICATION and can succeed. A
// malformed signature is 400 and changes nothing.
func TestExternalAccounts_BadSignature_R_EACCT_15(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		s := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
		id := e.eaCreate(t, eaCustomers, eaWallet(cust, s.accountType, s.currency, "FIRST_PARTY", s.info...))["id"].(string)
		base := eaCustomers + "/" + id
		msg := e.eaChallenge(t, eaCustomers, id, "WALLET_SIGNATURE")["messageToSign"].(string)

		// Malformed: nothing changes, the challenge still works later.
		before := e.eaCounts(t)
		for _, bad := range []string{"not-hex", "0x1234", s.sign(msg)[:len(s.sign(msg))-2] + "07"} {
			r := e.do("POST", base+"/verify", cobj{"signature": bad})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fieldErrors(t, r)["signature"] != "format" {
				t.Fatal(r.Body)
			}
		}
		r := e.do("POST", base+"/verify", cobj{})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if e.eaCounts(t) != before || e.eaStatus(t, eaCustomers, id) != "PENDING_OWNERSHIP_VERIFICATION" {
			t.Fatal("a malformed signature changed something")
		}

		// Wrong key, and the right key over a tampered message.
		wrong := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
		for i, sig := range []string{wrong.sign(msg), s.sign(msg + " ")} {
			r = e.do("POST", base+"/verify", cobj{"signature": sig})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			d := r.JSON(t)["details"].(map[string]any)
			if d["status"] != "UNVERIFIED" || fieldErrors(t, r)["signature"] != "format" {
				t.Fatalf("%s", r.Body)
			}
			if e.eaStatus(t, eaCustomers, id) != "UNVERIFIED" {
				t.Fatal("R-EACCT-15")
			}
			// The challenge is spent: even the right signature needs a new one.
			expect(t, e.do("POST", base+"/verify", cobj{"signature": s.sign(msg)}), http.StatusConflict, "CONFLICT")
			if i == 0 {
				msg = e.eaChallenge(t, eaCustomers, id, "WALLET_SIGNATURE")["messageToSign"].(string)
				if e.eaStatus(t, eaCustomers, id) != "PENDING_OWNERSHIP_VERIFICATION" {
					t.Fatal("R-EACCT-12: a challenge from UNVERIFIED")
				}
			}
		}
		msg = e.eaChallenge(t, eaCustomers, id, "WALLET_SIGNATURE")["messageToSign"].(string)
		expect(t, e.do("POST", base+"/verify", cobj{"signature": s.sign(msg)}), http.StatusOK, "")
		want := "EXTERNAL_ACCOUNT.STATUS_UPDATED:UNVERIFIED,EXTERNAL_ACCOUNT.STATUS_UPDATED:UNVERIFIED,EXTERNAL_ACCOUNT.STATUS_UPDATED:ACTIVE"
		if got := strings.Join(e.eaEvents(t, id), ","); got != want {
			t.Fatalf("events %s", got)
		}
	})
}

// A signature after expiresAt is 400 and changes nothing; a new challenge
// works.
func TestExternalAccounts_ExpiredChallenge(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		s := eaSolanaSigner(t)
		id := e.eaCreate(t, eaPlatform, eaWallet("", s.accountType, s.currency, "FIRST_PARTY", s.info...))["id"].(string)
		msg := e.eaChallenge(t, eaPlatform, id, "WALLET_SIGNATURE")["messageToSign"].(string)
		real := time.Now
		e.db.SetClock(func() time.Time { return real().Add(10*time.Minute + time.Second) })
		defer e.db.SetClock(real)
		before := e.eaCounts(t)
		r := e.do("POST", eaPlatform+"/"+id+"/verify", cobj{"signature": s.sign(msg)})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if !strings.Contains(string(r.Body), "expired") || r.JSON(t)["details"].(map[string]any)["challengeExpiresAt"] == nil {
			t.Fatal(r.Body)
		}
		if e.eaCounts(t) != before || e.eaStatus(t, eaPlatform, id) != "PENDING_OWNERSHIP_VERIFICATION" {
			t.Fatal("an expired challenge changed something")
		}
		msg = e.eaChallenge(t, eaPlatform, id, "WALLET_SIGNATURE")["messageToSign"].(string)
		expect(t, e.do("POST", eaPlatform+"/"+id+"/verify", cobj{"signature": s.sign(msg)}), http.StatusOK, "")
	})
}

// R-EACCT-13: a new challenge abandons the old one, and may switch method:
// a signature over the old message no longer yields ACTIVE, an old
// liveness link no longer records anything.
func TestExternalAccounts_NewChallengeAbandonsOld_R_EACCT_13(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		s := eaTronSigner(t)
		id := e.eaCreate(t, eaCustomers, eaWallet(cust, s.accountType, s.currency, "FIRST_PARTY", s.info...))["id"].(string)
		base := eaCustomers + "/" + id
		link := e.eaChallenge(t, eaCustomers, id, "LIVENESS")["verificationLink"].(string)
		msgA := e.eaChallenge(t, eaCustomers, id, "WALLET_SIGNATURE")["messageToSign"].(string)
		status, page := e.eaPage(t, "GET", link, nil)
		if status != http.StatusConflict || !strings.Contains(page, "replaced") {
			t.Fatalf("old link %d: %s", status, page)
		}
		if status, _ = e.eaPage(t, "POST", link, url.Values{"outcome": {"PASS"}}); status != http.StatusConflict {
			t.Fatalf("old link records %d", status)
		}
		msgB := e.eaChallenge(t, eaCustomers, id, "WALLET_SIGNATURE")["messageToSign"].(string)
		if msgA == msgB {
			t.Fatal("each challenge has its own nonce")
		}
		r := e.do("POST", base+"/verify", cobj{"signature": s.sign(msgA)})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if e.eaStatus(t, eaCustomers, id) == "ACTIVE" {
			t.Fatal("a signature over an abandoned message verified")
		}
		msgC := e.eaChallenge(t, eaCustomers, id, "WALLET_SIGNATURE")["messageToSign"].(string)
		expect(t, e.do("POST", base+"/verify", cobj{"signature": s.sign(msgC)}), http.StatusOK, "")
	})
}

// R-EACCT-10 conditions: only FIRST_PARTY self-custody wallets that are not
// yet verified take challenges (409 otherwise); a method the wallet cannot
// use is 400 on `method`; verify without a WALLET_SIGNATURE challenge is
// 409. None changes anything.
func TestExternalAccounts_ChallengeRefusals_R_EACCT_10(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust := e.eaCustomer(t)
		ev := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
		bank := e.eaCreate(t, eaCustomers, cwith(eaUSD(cust, "12345678"), "ownershipType", "FIRST_PARTY"))["id"].(string)
		third := e.eaCreate(t, eaCustomers, eaWallet(cust, "ETHEREUM_WALLET", "USDC", "THIRD_PARTY", ev.info...))["id"].(string)
		plain := e.eaCreate(t, eaCustomers, eaWallet(cust, "BASE_WALLET", "USDC", "", ev.info...))["id"].(string)
		custodial := e.eaCreate(t, eaCustomers, eaWallet(cust, "POLYGON_WALLET", "USDC", "FIRST_PARTY", append(ev.info, "vaspName", "Kraken")...))
		if custodial["status"] != "ACTIVE" {
			t.Fatalf("a custodial wallet needs no ownership verification: %v", custodial)
		}
		spark := e.eaCreate(t, eaCustomers, eaWallet(cust, "SPARK_WALLET", "BTC", "FIRST_PARTY", "address",
			walletsig.EncodeSparkAddress("spark", mustCompressed(t))))["id"].(string)
		lnAddr := e.eaCreate(t, eaCustomers, eaWallet(cust, "LIGHTNING", "BTC", "FIRST_PARTY", "lightningAddress", "alice@example.com"))
		if lnAddr["status"] != "PENDING_OWNERSHIP_VERIFICATION" {
			t.Fatalf("%v", lnAddr)
		}
		before := e.eaCounts(t)
		for _, id := range []string{bank, third, plain, custodial["id"].(string)} {
			expect(t, e.do("POST", eaCustomers+"/"+id+"/challenge", cobj{"method": "WALLET_SIGNATURE"}), http.StatusConflict, "CONFLICT")
			expect(t, e.do("POST", eaCustomers+"/"+id+"/verify", cobj{"signature": "0x00"}), http.StatusConflict, "CONFLICT")
		}
		for _, id := range []string{spark, lnAddr["id"].(string)} {
			r := e.do("POST", eaCustomers+"/"+id+"/challenge", cobj{"method": "WALLET_SIGNATURE"})
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if fieldErrors(t, r)["method"] != "enum" {
				t.Fatal(r.Body)
			}
		}
		r := e.do("POST", eaCustomers+"/"+spark+"/challenge", cobj{"method": "SELFIE"})
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", eaCustomers+"/"+spark+"/challenge", nil), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", eaCustomers+"/ExternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b/challenge", cobj{"method": "LIVENESS"}),
			http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		if e.eaCounts(t) != before {
			t.Fatal("a refused challenge changed something")
		}
		// Verify while a LIVENESS challenge is current: 409.
		e.eaChallenge(t, eaCustomers, spark, "LIVENESS")
		expect(t, e.do("POST", eaCustomers+"/"+spark+"/verify", cobj{"signature": "0x00"}), http.StatusConflict, "CONFLICT")
		// Production has no liveness provider.
		prod := withCreds(e.production)
		pid := e.eaCreate(t, eaPlatform, eaWallet("", "SPARK_WALLET", "BTC", "FIRST_PARTY", "address",
			walletsig.EncodeSparkAddress("spark", mustCompressed(t))), prod)["id"].(string)
		r = e.do("POST", eaPlatform+"/"+pid+"/challenge", cobj{"method": "LIVENESS"}, prod)
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["method"] != "enum" {
			t.Fatal(r.Body)
		}
	})
}

// mustCompressed is a fresh compressed secp256k1 public key (a Spark
// identity key).
func mustCompressed(t *testing.T) []byte {
	t.Helper()
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	return key.PubKey().SerializeCompressed()
}

// R-EACCT-11, R-EACCT-16: a LIVENESS challenge returns an absolute
// verificationLink to a page paymentsd serves; finishing the check (sandbox:
// Pass or Fail) changes the status asynchronously to ACTIVE or UNVERIFIED,
// with EXTERNAL_ACCOUNT.STATUS_UPDATED.
func TestExternalAccounts_Liveness_R_EACCT_11_16(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.eaRunner(t)
		cust := e.eaCustomer(t)
		for _, c := range []struct {
			path, owner, outcome, want string
		}{
			{eaCustomers, cust, "PASS", "ACTIVE"},
			{eaPlatform, "", "FAIL", "UNVERIFIED"},
		} {
			s := eaEVMSigner(t, "ETHEREUM_WALLET", "USDC")
			id := e.eaCreate(t, c.path, eaWallet(c.owner, s.accountType, s.currency, "FIRST_PARTY", s.info...))["id"].(string)
			ch := e.eaChallenge(t, c.path, id, "LIVENESS")
			link, _ := ch["verificationLink"].(string)
			u, err := url.Parse(link)
			if err != nil || ch["method"] != "LIVENESS" || u.Scheme != "http" || u.Host != "example.com" ||
				!strings.HasPrefix(u.Path, "/verify/liveness/") || ch["expiresAt"] == nil {
				t.Fatalf("challenge %v", ch)
			}
			if _, has := ch["messageToSign"]; has {
				t.Fatal("a LIVENESS challenge has no message")
			}
			status, page := e.eaPage(t, "GET", link, nil)
			if status != http.StatusOK || !strings.Contains(page, `value="PASS"`) || !strings.Contains(page, `value="FAIL"`) {
				t.Fatalf("page %d: %s", status, page)
			}
			if status, _ = e.eaPage(t, "POST", link, url.Values{"outcome": {"MAYBE"}}); status != http.StatusBadRequest {
				t.Fatalf("bad outcome %d", status)
			}
			if status, page = e.eaPage(t, "POST", link, url.Values{"outcome": {c.outcome}}); status != http.StatusOK || !strings.Contains(page, "recorded") {
				t.Fatalf("submit %d: %s", status, page)
			}
			// The outcome arrives on its own, with its event.
			eaEventually(t, "the liveness outcome", func() bool { return e.eaStatus(t, c.path, id) == c.want })
			if got := strings.Join(e.eaEvents(t, id), ","); got != "EXTERNAL_ACCOUNT.STATUS_UPDATED:"+c.want {
				t.Fatalf("events %s", got)
			}
			// The link is used up.
			if status, _ = e.eaPage(t, "POST", link, url.Values{"outcome": {"PASS"}}); status != http.StatusConflict {
				t.Fatalf("reused link %d", status)
			}
			if status, page = e.eaPage(t, "GET", link, nil); status != http.StatusOK || strings.Contains(page, `value="PASS"`) {
				t.Fatalf("finished page %d", status)
			}
		}
		if status, _ := e.eaPage(t, "GET", "/verify/liveness/nope", nil); status != http.StatusNotFound {
			t.Fatalf("unknown token %d", status)
		}
		if status, _ := e.eaPage(t, "POST", "/verify/liveness/nope", url.Values{"outcome": {"PASS"}}); status != http.StatusNotFound {
			t.Fatalf("unknown token %d", status)
		}
	})
}

// An expired link is 410 and records nothing; with Options.PublicURL the
// link is built on it.
func TestExternalAccounts_LivenessExpiryAndPublicURL(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.srv.opts.PublicURL = "https://pay.example.org/"
		s := eaSolanaSigner(t)
		id := e.eaCreate(t, eaPlatform, eaWallet("", s.accountType, s.currency, "FIRST_PARTY", s.info...))["id"].(string)
		link := e.eaChallenge(t, eaPlatform, id, "LIVENESS")["verificationLink"].(string)
		if !strings.HasPrefix(link, "https://pay.example.org/verify/liveness/") {
			t.Fatal(link)
		}
		real := time.Now
		e.db.SetClock(func() time.Time { return real().Add(31 * time.Minute) })
		defer e.db.SetClock(real)
		before := e.eaCounts(t)
		if status, page := e.eaPage(t, "GET", link, nil); status != http.StatusGone || !strings.Contains(page, "expired") {
			t.Fatalf("%d %s", status, page)
		}
		if status, _ := e.eaPage(t, "POST", link, url.Values{"outcome": {"PASS"}}); status != http.StatusGone {
			t.Fatalf("%d", status)
		}
		if e.eaCounts(t) != before {
			t.Fatal("an expired link recorded something")
		}
	})
}

// The background step is durable and applies each outcome exactly once:
// nothing changes before the outcome is due, a second pass finds nothing,
// and an outcome whose challenge was replaced meanwhile is dropped.
func TestExternalAccounts_LivenessAppliedOnce(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		svc := e.eaService()
		svc.LivenessDelay = time.Minute
		cust := e.eaCustomer(t)
		s := eaEVMSigner(t, "BASE_WALLET", "USDC")
		id := e.eaCreate(t, eaCustomers, eaWallet(cust, s.accountType, s.currency, "FIRST_PARTY", s.info...))["id"].(string)
		link := e.eaChallenge(t, eaCustomers, id, "LIVENESS")["verificationLink"].(string)
		if status, _ := e.eaPage(t, "POST", link, url.Values{"outcome": {"PASS"}}); status != http.StatusOK {
			t.Fatal(status)
		}
		if n, err := svc.ApplyDueLivenessOutcomes(ctx); n != 0 || err != nil {
			t.Fatalf("applied before due: %d %v", n, err)
		}
		real := time.Now
		e.db.SetClock(func() time.Time { return real().Add(2 * time.Minute) })
		defer e.db.SetClock(real)
		if n, err := svc.ApplyDueLivenessOutcomes(ctx); n != 1 || err != nil {
			t.Fatalf("applied %d %v", n, err)
		}
		if n, _ := svc.ApplyDueLivenessOutcomes(ctx); n != 0 {
			t.Fatal("applied twice")
		}
		if e.eaStatus(t, eaCustomers, id) != "ACTIVE" || len(e.eaEvents(t, id)) != 1 {
			t.Fatal("one outcome, one event")
		}

		// Replaced before it was applied: dropped.
		s2 := eaEVMSigner(t, "BASE_WALLET", "USDC")
		id2 := e.eaCreate(t, eaCustomers, eaWallet(cust, s2.accountType, s2.currency, "FIRST_PARTY", s2.info...))["id"].(string)
		link2 := e.eaChallenge(t, eaCustomers, id2, "LIVENESS")["verificationLink"].(string)
		e.eaPage(t, "POST", link2, url.Values{"outcome": {"FAIL"}})
		e.eaChallenge(t, eaCustomers, id2, "WALLET_SIGNATURE")
		e.db.SetClock(func() time.Time { return real().Add(10 * time.Minute) })
		if n, _ := svc.ApplyDueLivenessOutcomes(ctx); n != 0 {
			t.Fatal("an abandoned outcome was applied")
		}
		if e.eaStatus(t, eaCustomers, id2) != "PENDING_OWNERSHIP_VERIFICATION" || len(e.eaEvents(t, id2)) != 0 {
			t.Fatal("an abandoned outcome changed the account")
		}
	})
}
