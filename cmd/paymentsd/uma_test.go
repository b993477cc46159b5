package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"
)

// childEnv makes the test binary run paymentsd itself (TestMain), so the UMA
// test starts real, separate processes: each its own listener, store and
// background work, as two installations are.
const childEnv = "PAYMENTSD_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if args := os.Getenv(childEnv); args != "" {
		if err := run(context.Background(), strings.Split(args, "\x1f"), os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// installation is one paymentsd process.
type installation struct {
	cmd    *exec.Cmd
	base   string // http://host:port
	domain string // host:port, its UMA domain
	creds  string
	stderr *lockedBuffer
}

// spawn starts paymentsd in a new process on a loopback port over its own
// SQLite database, allowed to call loopback counterparties.
func spawn(t *testing.T, name string) *installation {
	t.Helper()
	dir := t.TempDir()
	args := []string{"--addr", "127.0.0.1:0", "--database-url", "sqlite:" + dir + "/payments.db", "--log-format", "json",
		"--blob-dir", dir + "/blobs"}
	in := &installation{creds: name + "-sandbox:" + name + "-sandbox-secret-0123456789", stderr: &lockedBuffer{}}
	in.cmd = exec.Command(os.Args[0], "-test.run=^$")
	in.cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, "\x1f"), "PAYMENTS_SANDBOX_TOKEN="+in.creds,
		"PAYMENTS_PRODUCTION_TOKEN="+name+"-production:"+name+"-production-secret-0123456789",
		"PAYMENTS_WEBHOOK_ALLOW_PRIVATE=true")
	pipe, err := in.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	in.cmd.Stdout = io.Discard
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.stop() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			in.stderr.Write([]byte(line + "\n"))
			var l struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				addr <- l.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		in.base, in.domain = "http://"+a, a
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start:\n%s", name, in.stderr)
	}
	return in
}

// stop ends the process (SIGTERM) and waits for it.
func (in *installation) stop() {
	if in.cmd.ProcessState != nil {
		return
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = in.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = in.cmd.Process.Kill()
		<-done
	}
}

func (in *installation) call(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rdr io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rdr = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, in.base+"/2025-10-13"+path, rdr)
	user, secret, _ := strings.Cut(in.creds, ":")
	req.SetBasicAuth(user, secret)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	raw, _ := io.ReadAll(res.Body)
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		t.Fatalf("%s %s: %s", method, path, raw)
	}
	return res.StatusCode, m
}

func (in *installation) must(t *testing.T, status int, method, path string, body any) map[string]any {
	t.Helper()
	st, m := in.call(t, method, path, body)
	if st != status {
		t.Fatalf("%s %s: %d %v", method, path, st, m)
	}
	return m
}

// hooks collects the webhooks of both installations.
type hooks struct {
	mu     sync.Mutex
	events map[string][]map[string]any // by path: /a, /b
}

func (h *hooks) serve(w http.ResponseWriter, r *http.Request) {
	var m map[string]any
	_ = json.NewDecoder(r.Body).Decode(&m)
	h.mu.Lock()
	h.events[r.URL.Path] = append(h.events[r.URL.Path], m)
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// has reports whether path received an event of typ about resource id.
func (h *hooks) has(path, typ, id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.events[path] {
		if d, _ := e["data"].(map[string]any); e["type"] == typ && (id == "" || d["id"] == id) {
			return true
		}
	}
	return false
}

// setup configures an installation: its UMA domain is its own listener,
// its webhooks go to hooks at path; it gets a customer user holding cur.
func (in *installation) setup(t *testing.T, hookURL, user, cur string) (customerID, accountID string) {
	t.Helper()
	in.must(t, 200, "PATCH", "/config", map[string]any{"umaDomain": in.domain, "webhookEndpoint": hookURL,
		"supportedCurrencies": []any{map[string]any{"currencyCode": cur, "minAmount": 1, "maxAmount": 100000000000,
			"enabledTransactionTypes": []string{"INCOMING", "OUTGOING"}}}})
	terms := in.must(t, 200, "GET", "/customers/agreements", nil)["data"].([]any)[0].(map[string]any)
	c := in.must(t, 201, "POST", "/customers", map[string]any{"customerType": "INDIVIDUAL", "fullName": "UMA " + user,
		"birthDate": "1990-01-15", "nationality": "US", "umaAddress": "$" + user + "@" + in.domain,
		"address": map[string]any{"line1": "1 Main St", "city": "Springfield", "state": "IL", "postalCode": "62701", "country": "US"},
		"agreementConsents": []any{map[string]any{"type": terms["type"], "acceptedAt": "2025-10-01T12:00:00Z",
			"ipAddress": "198.51.100.24", "termsVersion": terms["version"], "acceptanceMethod": "CHECKBOX"}}})
	customerID = c["id"].(string)
	accountID = in.account(t, customerID, cur)["id"].(string)
	return customerID, accountID
}

// account is the customer's internal account in cur.
func (in *installation) account(t *testing.T, customerID, cur string) map[string]any {
	t.Helper()
	list := in.must(t, 200, "GET", "/customers/internal-accounts?customerId="+url.QueryEscape(customerID)+"&currency="+cur, nil)["data"].([]any)
	for _, a := range list {
		if m := a.(map[string]any); m["type"] != "RULE_BASED" {
			return m
		}
	}
	t.Fatalf("no %s account: %v", cur, list)
	return nil
}

func (in *installation) balance(t *testing.T, customerID, cur string) int64 {
	t.Helper()
	return int64(in.account(t, customerID, cur)["balance"].(map[string]any)["amount"].(float64))
}

// Done-when test of issue 20: two paymentsd processes on loopback, with
// different UMA domains and databases. A customer of the first looks up
// $bob at the second, quotes USD→MXN and executes; the second credits Bob
// in MXN exactly the amount it quoted; both sides' balances move by the
// quoted amounts and nothing else; both platforms receive their webhooks.
// Then a missing user, a stopped counterparty and a tampered signature each
// fail with their code and move nothing.
func TestUMA_TwoInstallations(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	h := &hooks{events: map[string][]map[string]any{}}
	rc := httptest.NewServer(http.HandlerFunc(h.serve))
	defer rc.Close()
	a, b := spawn(t, "alpha"), spawn(t, "bravo")
	alice, src := a.setup(t, rc.URL+"/a", "alice", "USD")
	bob, _ := b.setup(t, rc.URL+"/b", "bob", "MXN")
	a.must(t, 200, "POST", "/sandbox/internal-accounts/"+src+"/fund", map[string]any{"amount": 100_000})
	receiver := "$bob@" + b.domain

	lookup := a.must(t, 200, "GET", "/receiver/uma/"+url.PathEscape(receiver)+"?customerId="+alice+"&sendingCurrency=USD", nil)
	q := a.must(t, 200, "POST", "/quotes", map[string]any{
		"source":             map[string]any{"sourceType": "ACCOUNT", "accountId": src},
		"destination":        map[string]any{"destinationType": "UMA_ADDRESS", "umaAddress": receiver, "currency": "MXN"},
		"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": 10_000, "lookupId": lookup["lookupId"]})
	quoted := int64(q["totalReceivingAmount"].(float64))
	a.must(t, 200, "POST", "/quotes/"+q["id"].(string)+"/execute", nil)
	txID := q["transactionId"].(string)
	var x map[string]any
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if x = a.must(t, 200, "GET", "/transactions/"+txID, nil); x["status"] == "COMPLETED" || x["status"] == "FAILED" {
			break
		}
	}
	if x["status"] != "COMPLETED" || x["reconciliationInstructions"].(map[string]any)["transactionHash"] == nil {
		t.Fatalf("payment: %v\n%s\n%s", x, a.stderr, b.stderr)
	}
	if got := a.balance(t, alice, "USD"); got != 90_000 {
		t.Fatalf("alice: %d", got)
	}
	if got := b.balance(t, bob, "MXN"); got != quoted || quoted < 170_000 {
		t.Fatalf("bob: %d, quoted %d", got, quoted)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if h.has("/a", "OUTGOING_PAYMENT.COMPLETED", txID) && h.has("/b", "INCOMING_PAYMENT.COMPLETED", "") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks: %v", h.events)
		}
	}

	// Failures move nothing.
	look := func(addr string) (int, string) {
		st, m := a.call(t, "GET", "/receiver/uma/"+url.PathEscape(addr)+"?customerId="+alice, nil)
		code, _ := m["code"].(string)
		return st, code
	}
	if st, code := look("$nobody@" + b.domain); st != 404 || code != "UMA_NOT_FOUND" {
		t.Fatalf("missing user: %d %s", st, code)
	}
	// The counterparty stops: 504 LOOKUP_REQUEST_FAILED.
	var pubKeys map[string]any
	if res, err := http.Get(b.base + "/.well-known/lnurlpubkey"); err != nil {
		t.Fatal(err)
	} else {
		_ = json.NewDecoder(res.Body).Decode(&pubKeys)
		res.Body.Close()
	}
	b.stop()
	if st, code := look(receiver); st != 504 || code != "LOOKUP_REQUEST_FAILED" {
		t.Fatalf("stopped counterparty: %d %s", st, code)
	}
	// A forger takes over bravo's address: it serves bravo's published
	// keys, but signs its discovery answers with a key of its own.
	forgery(t, b.domain, pubKeys)
	if st, code := look(receiver); st != 400 || code != "INVALID_RECEIVER" {
		t.Fatalf("tampered signature: %d %s", st, code)
	}
	if got := a.balance(t, alice, "USD"); got != 90_000 {
		t.Fatalf("alice after failures: %d", got)
	}
}

// forgery listens on addr (a stopped installation's) and answers UMA
// discovery for anyone with a response signed by a key that is not the one
// the published keys (pubKeys, the stopped installation's) certify.
func forgery(t *testing.T, addr string, pubKeys map[string]any) {
	t.Helper()
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("take over %s: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/.well-known/lnurlpubkey" {
			_ = json.NewEncoder(w).Encode(pubKeys)
			return
		}
		u := *r.URL
		u.Host = addr
		req, err := umasdk.ParseLnurlpRequest(u)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		priv, notTR, kyc := key.Serialize(), false, protocol.KycStatusVerified
		opts := protocol.CounterPartyDataOptions{}
		cur := []protocol.Currency{{Code: "MXN", Name: "Mexican Peso", Symbol: "$", MillisatoshiPerUnit: 8.9,
			Convertible: protocol.ConvertibleCurrency{MinSendable: 1, MaxSendable: 1_000_000}, Decimals: 2, UmaMajorVersion: 1}}
		resp, err := umasdk.GetLnurlpResponse(*req, "http://"+addr+"/cb", "[]", 1, 1000, &priv, &notTR, &opts, &cur, &kyc, nil, nil)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		_ = json.NewEncoder(w).Encode(resp)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
}
