package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
)

// fakeTransferLog writes the statement log of n transfers as the service
// would: a read of both balances, a posting insert per side, a balance
// update guarded by the version read, an idempotency record with a JSON
// body naming the quote, a counter shard; plus an unrelated background
// transaction interleaved on another connection.
func fakeTransferLog(t *testing.T, n int) (string, []map[string]val) {
	t.Helper()
	var b strings.Builder
	w := func(s store.LoggedStatement) {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	arg := func(v any) store.LoggedArg {
		switch v.(type) {
		case nil:
			return store.LoggedArg{Type: "nil"}
		case int64:
			return store.LoggedArg{Type: "int64", Value: v}
		}
		return store.LoggedArg{Type: fmt.Sprintf("%T", v), Value: v}
	}
	const platform = "Platform:01a2166d-6d2a-741c-9c03-2faf00192e12"
	var roles []map[string]val
	for k := 0; k < n; k++ {
		src := fmt.Sprintf("InternalAccount:01a2166d-6d54-75ff-afea-%012d", 2*k)
		dst := fmt.Sprintf("InternalAccount:01a2166d-6d54-75ff-afea-%012d", 2*k+1)
		quote := fmt.Sprintf("Quote:01a2166d-70fb-71c7-bb69-%012x", 1000+k)
		posting := fmt.Sprintf("Posting:01a2166d-70fd-75e7-ad60-%012x", 2000+k)
		posting2 := fmt.Sprintf("Posting:01a2166d-70fd-75e7-ad61-%012x", 3000+k)
		key := fmt.Sprintf("run-q-%d", k)
		amount := int64(101 + 37*k)
		sv, dv := int64(10+k), int64(20+2*k)
		roles = append(roles, map[string]val{"src_acct": {Kind: 's', S: src}, "dst_acct": {Kind: 's', S: dst},
			"src_cust": {Kind: 's', S: "Customer:x" + fmt.Sprint(k)}, "dst_cust": {Kind: 's', S: "Customer:y" + fmt.Sprint(k)},
			"amount": {Kind: 'i', I: amount}, "neg_amount": {Kind: 'i', I: -amount}, "key": {Kind: 's', S: key},
			"src_version": {Kind: 'i', I: sv}, "dst_version": {Kind: 'i', I: dv}})
		conn := int64(1 + k%2)
		w(store.LoggedStatement{Conn: conn, Op: "begin"})
		w(store.LoggedStatement{Conn: 9, Op: "begin"}) // background work on another connection
		w(store.LoggedStatement{Conn: conn, Op: "query", SQL: "SELECT version FROM ledger_balances WHERE platform_id = $1 AND account_id IN ($2, $3)",
			Args: []store.LoggedArg{arg(platform), arg(src), arg(dst)}})
		w(store.LoggedStatement{Conn: 9, Op: "exec", SQL: "UPDATE webhook_deliveries SET state = 'DELIVERED' WHERE event_id = $1", Args: []store.LoggedArg{arg("Event:01a2166d-70fe-70b6-875f-56edfa423c8a")}})
		w(store.LoggedStatement{Conn: conn, Op: "exec", SQL: "INSERT INTO ledger_postings (id, account_id, amount, created_at) VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)",
			Args: []store.LoggedArg{arg(posting), arg(src), arg(-amount), arg(int64(1795672600829383 + k)), arg(posting2), arg(dst), arg(amount), arg(int64(1795672600829383 + k))}})
		w(store.LoggedStatement{Conn: 9, Op: "commit"})
		w(store.LoggedStatement{Conn: conn, Op: "exec", SQL: "UPDATE ledger_balances SET posted = posted + $1, version = version + 1 WHERE account_id = $2 AND version = $3",
			Args: []store.LoggedArg{arg(-amount), arg(src), arg(sv)}})
		w(store.LoggedStatement{Conn: conn, Op: "exec", SQL: "UPDATE ledger_balances SET posted = posted + $1, version = version + 1 WHERE account_id = $2 AND version = $3",
			Args: []store.LoggedArg{arg(amount), arg(dst), arg(dv)}})
		w(store.LoggedStatement{Conn: conn, Op: "exec", SQL: "INSERT INTO idempotency_keys (platform_id, idem_key, response_body, customer_scope) VALUES ($1, $2, $3, $4)",
			Args: []store.LoggedArg{arg(platform), arg(key), arg(`{"id":"` + quote + `","amount":` + fmt.Sprint(amount) + `}`), arg("customer:Customer:x" + fmt.Sprint(k))}})
		w(store.LoggedStatement{Conn: conn, Op: "exec", SQL: "UPDATE transaction_counts SET n = n + 1 WHERE scope = 'all' AND shard = $1 AND note IS $2",
			Args: []store.LoggedArg{arg(int64(k % 4)), arg(nil)}})
		w(store.LoggedStatement{Conn: conn, Op: "commit"})
	}
	// A transaction that rolled back carries no transfer.
	w(store.LoggedStatement{Conn: 3, Op: "begin"})
	w(store.LoggedStatement{Conn: 3, Op: "exec", SQL: "INSERT INTO idempotency_keys (idem_key) VALUES (?)", Args: []store.LoggedArg{arg("run-q-0")}})
	w(store.LoggedStatement{Conn: 3, Op: "rollback"})
	return b.String(), roles
}

func templateFromFake(t *testing.T, n int) *swTemplate {
	t.Helper()
	log, roles := fakeTransferLog(t, n)
	txs, err := parseStmtLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(txs) != 2*n+1 {
		t.Fatalf("parsed %d transactions, want %d (transfers, background, the rolled back one)", len(txs), 2*n+1)
	}
	var samples []sample
	for _, r := range roles {
		st := transferTxs(txs, r["key"].S)
		if len(st) != 1 || len(st[0].Stmts) != 6 {
			t.Fatalf("key %s: %d transactions, want the one committed transfer of 6 statements", r["key"].S, len(st))
		}
		samples = append(samples, sample{Txs: st, Roles: r})
	}
	tpl, err := buildTemplate(samples)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func TestSameWorkTemplateNamesWhatVaries(t *testing.T) {
	tpl := templateFromFake(t, 4)
	st := tpl.Txs[0].Stmts
	if got := st[0].Args[0]; got.Const == nil || got.Const.S != "Platform:01a2166d-6d2a-741c-9c03-2faf00192e12" {
		t.Errorf("platform id: %+v, want the constant", got)
	}
	if st[0].Args[1].Role != "src_acct" || st[0].Args[2].Role != "dst_acct" {
		t.Errorf("accounts: %+v %+v", st[0].Args[1], st[0].Args[2])
	}
	post := st[1].Args
	if post[0].Pieces == nil || post[0].Pieces[1].Var == "" || post[2].Role != "neg_amount" || post[6].Role != "amount" {
		t.Errorf("postings: %+v", post)
	}
	if post[3].Const == nil || post[3].Const.I != 1795672600829383 {
		t.Errorf("a timestamp stays one constant: %+v", post[3])
	}
	if post[0].Pieces[1].Var == post[4].Pieces[1].Var {
		t.Errorf("two postings share a fresh id variable: %+v %+v", post[0], post[4])
	}
	if st[2].Args[2].Role != "src_version" || st[3].Args[2].Role != "dst_version" {
		t.Errorf("versions: %+v %+v", st[2].Args[2], st[3].Args[2])
	}
	idem := st[4].Args
	if idem[1].Role != "key" {
		t.Errorf("idempotency key: %+v", idem[1])
	}
	var vars []string
	for _, p := range idem[2].Pieces {
		vars = append(vars, p.Var)
	}
	if want := []string{"", "u3", ""}; strings.Join(vars, ",") != strings.Join(want, ",") {
		// The amount inside the JSON is left as text: only ids are renamed.
		t.Errorf("response body pieces: %+v", idem[2].Pieces)
	}
	if p := idem[3].Pieces; len(p) != 2 || p[0].Lit != "customer:" || p[1].Var != "src_cust" {
		t.Errorf("scope: %+v", p)
	}
	if r := st[5].Args[0]; r.Range == 0 || tpl.Ranges[r.Range-1] != (intRange{0, 3}) {
		t.Errorf("shard: %+v ranges %v", r, tpl.Ranges)
	}
	if c := st[5].Args[1]; c.Const == nil || c.Const.Kind != 'n' {
		t.Errorf("NULL: %+v", c)
	}
}

func TestSameWorkPgbenchScript(t *testing.T) {
	script := pgbenchScript(templateFromFake(t, 3), 200, 1000)
	for _, want := range []string{
		`\set si random(1, 200)`,
		`\set di 1 + (:si - 1 + random(1, 199)) % 200`,
		`\set amount random(1, 1000)`,
		`\set r1 random(0, 2)`,
		`FROM paymentsbench_sw_accounts s, paymentsbench_sw_accounts d WHERE s.n = :si AND d.n = :di \gset`,
		"BEGIN;\nSELECT version FROM ledger_balances WHERE platform_id = E'Platform\\07201a2166d-6d2a-741c-9c03-2faf00192e12' AND account_id IN (:src_acct, :dst_acct);",
		"VALUES ((E'Posting\\07201a2166d-70fd-' || :u1), :src_acct, :neg_amount, 1795672600829383), ((E'Posting\\07201a2166d-70fd-' || :u2), :dst_acct, :amount,",
		"AND version = (SELECT version FROM ledger_balances WHERE account_id = :src_acct);",
		"('k-' || :client_id || '-' || :kq)",
		"(E'customer\\072' || :src_cust)",
		"AND shard = :r1 AND note IS NULL;\nCOMMIT;\n",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	// pgbench reads ":name" as a variable anywhere in a command: every one
	// the script uses must be set by it (or be pgbench's :client_id).
	set := map[string]bool{"client_id": true, "src_acct": true, "src_cust": true, "dst_acct": true, "dst_cust": true}
	for _, m := range regexp.MustCompile(`(?m)^\\set (\w+)`).FindAllStringSubmatch(script, -1) {
		set[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`[^:]:([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(script, -1) {
		if !set[m[1]] {
			t.Errorf("the script uses :%s, which nothing sets", m[1])
		}
	}
}

func TestSameWorkBindMakesFreshValues(t *testing.T) {
	tpl := templateFromFake(t, 3)
	accts := []swAccount{{"A1", "C1"}, {"A2", "C2"}, {"A3", "C3"}}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[any]bool{}
	for seq := int64(1); seq <= 50; seq++ {
		d := tpl.draw(rng, accts, 1000, 3, seq)
		if d.Src == d.Dst || d.Amount < 1 || d.Amount > 1000 {
			t.Fatalf("draw %+v", d)
		}
		q, args := tpl.Txs[0].Stmts[1].bind(d)
		if !strings.Contains(q, "VALUES (?, ?, ?, ?), (?, ?, ?, ?)") || len(args) != 8 {
			t.Fatalf("bound %q %v", q, args)
		}
		if args[1] != d.Src.Acct || args[2] != -d.Amount || args[5] != d.Dst.Acct || args[6] != d.Amount {
			t.Fatalf("posting args %v for %+v", args, d)
		}
		for _, id := range []any{args[0], args[4]} {
			if seen[id] || !strings.HasPrefix(id.(string), "Posting:01a2166d-70fd-") {
				t.Fatalf("posting id %v repeated or malformed", id)
			}
			seen[id] = true
		}
		q, args = tpl.Txs[0].Stmts[2].bind(d)
		if !strings.HasSuffix(q, "AND version = (SELECT version FROM ledger_balances WHERE account_id = ?)") || args[2] != d.Src.Acct {
			t.Fatalf("version guard %q %v", q, args)
		}
	}
}

func TestSameWorkShapes(t *testing.T) {
	log, roles := fakeTransferLog(t, 3)
	txs, err := parseStmtLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	var samples []sample
	for _, r := range roles {
		samples = append(samples, sample{Txs: transferTxs(txs, r["key"].S), Roles: r})
	}
	// The first transfer warmed a cache with one statement more.
	first := samples[0].Txs[0]
	first.Stmts = append([]store.LoggedStatement{{Op: "query", SQL: "SELECT document FROM settings"}}, first.Stmts...)
	samples[0].Txs = []loggedTx{first}
	if _, err := buildTemplate(samples); err == nil {
		t.Fatal("a template from transfers with different statements")
	}
	kept, dropped := steadyShape(samples)
	if dropped != 1 || len(kept) != 2 {
		t.Fatalf("kept %d dropped %d, want 2 and 1", len(kept), dropped)
	}
	if _, err := buildTemplate(kept); err != nil {
		t.Fatal(err)
	}
	if _, err := buildTemplate(kept[:1]); err == nil {
		t.Fatal("a template from one transfer: nothing tells what varies")
	}
}

func TestPgStringEscapesColonsAndQuotes(t *testing.T) {
	if got, want := pgString("a:b'c\\d\ne"), `E'a\072b\'c\\d\ne'`; got != want {
		t.Fatalf("pgString = %s, want %s", got, want)
	}
}

func TestWritesOf(t *testing.T) {
	q := `WITH w0 AS (INSERT INTO ledger_transfers (id, x) VALUES ($1, $2)), w1 AS (INSERT INTO ledger_postings (id) VALUES ($3), ($4))
		UPDATE ledger_balances AS b SET posted = b.posted + v.posted FROM (VALUES (CAST($5 AS TEXT))) AS v (account_id) WHERE b.account_id = v.account_id`
	got := strings.Join(writesOf(q), "; ")
	if want := "INSERT INTO ledger_transfers; INSERT INTO ledger_postings (2 rows); UPDATE ledger_balances"; got != want {
		t.Fatalf("writesOf = %q, want %q", got, want)
	}
}

// Describe names each statement; a WITH statement that writes nothing (the
// batch's pre-lock) says so rather than listing no writes.
func TestSameWorkDescribe(t *testing.T) {
	tmpl := swTemplate{Txs: []swTx{{Stmts: []swStmt{
		{Op: "query", Segs: []string{`WITH bl AS (SELECT b.id FROM ledger_balances b WHERE b.id = `, ` FOR UPDATE OF b) SELECT * FROM bl`}, Args: []swArg{{}}},
		{Op: "exec", Segs: []string{`WITH w0 AS (INSERT INTO events (id) VALUES (`, `)) UPDATE ledger_balances SET posted = 1`}, Args: []swArg{{}}},
	}}}}
	got := strings.Join(tmpl.Describe(), " | ")
	if want := "BEGIN | one statement: reads and locks rows, writes nothing | one statement: INSERT INTO events; UPDATE ledger_balances | COMMIT"; got != want {
		t.Fatalf("Describe = %q\nwant       %q", got, want)
	}
}

// A batched write path sends arrays (INSERT … SELECT FROM unnest($1, $2));
// each element is named like an argument of its own.
func TestSameWorkArrays(t *testing.T) {
	var samples []sample
	for k := 0; k < 3; k++ {
		src := fmt.Sprintf("InternalAccount:01a2166d-6d54-75ff-afea-%012d", 2*k)
		dst := fmt.Sprintf("InternalAccount:01a2166d-6d54-75ff-afea-%012d", 2*k+1)
		amount := int64(101 + 37*k)
		line, _ := json.Marshal(store.LoggedStatement{Conn: 1, Op: "exec",
			SQL: "INSERT INTO ledger_postings (id, account_id, amount) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])",
			Args: []store.LoggedArg{
				{Type: "[]string", Value: []string{fmt.Sprintf("Posting:01a2166d-70fd-75e7-ad60-%012x", k), fmt.Sprintf("Posting:01a2166d-70fd-75e7-ad61-%012x", k)}},
				{Type: "[]string", Value: []string{src, dst}},
				{Type: "[]int64", Value: []int64{-amount, amount}},
			}})
		log := `{"conn":1,"op":"begin"}` + "\n" + string(line) + "\n" + `{"conn":1,"op":"commit"}` + "\n"
		txs, err := parseStmtLog(strings.NewReader(log))
		if err != nil || len(txs) != 1 {
			t.Fatalf("%v %v", txs, err)
		}
		samples = append(samples, sample{Txs: txs, Roles: map[string]val{"src_acct": {Kind: 's', S: src}, "dst_acct": {Kind: 's', S: dst},
			"amount": {Kind: 'i', I: amount}, "neg_amount": {Kind: 'i', I: -amount}}})
	}
	tpl, err := buildTemplate(samples)
	if err != nil {
		t.Fatal(err)
	}
	script := pgbenchScript(tpl, 10, 1000)
	want := "unnest(ARRAY[(E'Posting\\07201a2166d-70fd-' || :u1), (E'Posting\\07201a2166d-70fd-' || :u2)]::text[]::text[], " +
		"ARRAY[:src_acct, :dst_acct]::text[]::text[], ARRAY[:neg_amount, :amount]::bigint[]::bigint[]);"
	if !strings.Contains(script, want) {
		t.Fatalf("script lacks %q:\n%s", want, script)
	}
}

// A summed daily-volume update's row checks the shard's total (before):
// the replay reads it from the row, for the row it names, and the shard it
// adds to is the one drawn for the lock statement (the same value in every
// sample), so that the replayed update changes its row as the service's
// did.
func TestSameWorkVolumeBeforeReadFromItsRow(t *testing.T) {
	tpl := volumeTemplate(t, func(platform string, shard, before, amount int64) store.LoggedStatement {
		return store.LoggedStatement{Conn: 1, Op: "exec",
			SQL: "WITH w0 AS (" + volumeUpdateHead + " FROM (VALUES (CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS BIGINT), " +
				"CAST($4 AS INTEGER), CAST($5 AS BIGINT), CAST($6 AS BIGINT))) " + volumeUpdateTail +
				" WHERE d.shard = v.shard AND d.usd = v.before RETURNING d.shard) SELECT paymentsd_expect_rows((SELECT count(*) FROM w0), 1)",
			Args: []store.LoggedArg{logArg(platform), logArg("sandbox"), logArg(int64(20784)), logArg(shard), logArg(before),
				logArg(amount)}}
	})
	script := pgbenchScript(tpl, 10, 1000)
	for _, want := range []string{
		"shard = ANY(ARRAY[:r1]::bigint[])",
		"CAST(:r1 AS INTEGER), CAST((SELECT usd FROM daily_volumes WHERE platform_id = E'Platform\\07201a2166d-6d2a-741c-9c03-2faf00192e12' " +
			"AND env = E'sandbox' AND day = 20784 AND shard = :r1) AS BIGINT), CAST(:amount AS BIGINT)",
	} {
		if !strings.Contains(script, want) {
			t.Fatalf("script lacks %q:\n%s", want, script)
		}
	}
	q, args := tpl.Txs[0].Stmts[1].bind(swDraw{Amount: 7, Ranges: []int64{1}})
	if !strings.Contains(q, "CAST((SELECT usd FROM daily_volumes WHERE platform_id = ? AND env = ? AND day = ? AND shard = ?) AS BIGINT)") ||
		strings.Count(q, "?") != len(args) || len(args) != 9 {
		t.Fatalf("bound %q with %d arguments %v", q, len(args), args)
	}
}

// The same, with the rows as one array a column (PostgreSQL's batches,
// store/unnest.go): each row's before, an element of the fifth array, is
// read from the row its elements of the first four arrays name.
func TestSameWorkVolumeBeforeReadFromItsRowInArrays(t *testing.T) {
	str := func(s string) *string { return &s }
	num := func(n int64) *int64 { return &n }
	tpl := volumeTemplate(t, func(platform string, shard, before, amount int64) store.LoggedStatement {
		return store.LoggedStatement{Conn: 1, Op: "exec",
			SQL: "WITH w0 AS (" + volumeUpdateHead + " FROM unnest(CAST($1 AS text[]), CAST($2 AS text[]), CAST($3 AS bigint[]), " +
				"CAST($4 AS integer[]), CAST($5 AS bigint[]), CAST($6 AS bigint[])) " + volumeUpdateTail +
				" WHERE d.shard = v.shard AND d.usd = v.before RETURNING d.shard) SELECT paymentsd_expect_rows((SELECT count(*) FROM w0), CAST($7 AS BIGINT))",
			Args: []store.LoggedArg{logArg([]*string{str(platform)}), logArg([]*string{str("sandbox")}), logArg([]*int64{num(20784)}),
				logArg([]*int64{num(shard)}), logArg([]*int64{num(before)}), logArg([]*int64{num(amount)}), logArg(int64(1))}}
	})
	script := pgbenchScript(tpl, 10, 1000)
	want := "CAST(ARRAY[(SELECT usd FROM daily_volumes WHERE platform_id = E'Platform\\07201a2166d-6d2a-741c-9c03-2faf00192e12' " +
		"AND env = E'sandbox' AND day = 20784 AND shard = :r1)]::bigint[] AS bigint[]), CAST(ARRAY[:amount]::bigint[] AS bigint[])"
	if !strings.Contains(script, want) {
		t.Fatalf("script lacks %q:\n%s", want, script)
	}
}

// A transfer's transaction is found by its Idempotency-Key as an argument
// or as an element of an array argument.
func TestTransferTxsFindsTheKeyInAnArray(t *testing.T) {
	txs := []loggedTx{
		{Committed: true, Stmts: []store.LoggedStatement{{Args: []store.LoggedArg{{Value: []any{"other", "k-1"}}}}}},
		{Committed: true, Stmts: []store.LoggedStatement{{Args: []store.LoggedArg{{Value: "k-1"}}}}},
		{Committed: true, Stmts: []store.LoggedStatement{{Args: []store.LoggedArg{{Value: []any{"k-2"}}}}}},
		{Committed: false, Stmts: []store.LoggedStatement{{Args: []store.LoggedArg{{Value: "k-1"}}}}},
	}
	if got := transferTxs(txs, "k-1"); len(got) != 2 {
		t.Fatalf("%d transactions carry the key, want 2", len(got))
	}
}

// logArg is v as the statement log records it.
func logArg(v any) store.LoggedArg { return store.LoggedArg{Type: fmt.Sprintf("%T", v), Value: v} }

// volumeTemplate is the template of three samples, each a lock statement
// and the daily-volume update upd makes for the sample's platform, shard,
// shard total before and amount.
func volumeTemplate(t *testing.T, upd func(platform string, shard, before, amount int64) store.LoggedStatement) *swTemplate {
	t.Helper()
	const platform = "Platform:01a2166d-6d2a-741c-9c03-2faf00192e12"
	var samples []sample
	for k := 0; k < 3; k++ {
		src := fmt.Sprintf("InternalAccount:01a2166d-6d54-75ff-afea-%012d", 2*k)
		amount, shard, before := int64(101+37*k), int64(k%2), int64(5000+977*k)
		lock, _ := json.Marshal(store.LoggedStatement{Conn: 1, Op: "query",
			SQL:  "SELECT 1 FROM daily_volumes WHERE account = $1 AND shard = ANY($2)",
			Args: []store.LoggedArg{logArg(src), logArg([]int64{shard})}})
		update, _ := json.Marshal(upd(platform, shard, before, amount))
		log := `{"conn":1,"op":"begin"}` + "\n" + string(lock) + "\n" + string(update) + "\n" + `{"conn":1,"op":"commit"}` + "\n"
		txs, err := parseStmtLog(strings.NewReader(log))
		if err != nil || len(txs) != 1 {
			t.Fatalf("%v %v", txs, err)
		}
		samples = append(samples, sample{Txs: txs, Roles: map[string]val{"src_acct": {Kind: 's', S: src},
			"amount": {Kind: 'i', I: amount}, "neg_amount": {Kind: 'i', I: -amount}}})
	}
	tpl, err := buildTemplate(samples)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}
