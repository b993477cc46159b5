package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/paymentsd/paymentsd/internal/store"
)

// The same-work baseline (issue 23): the statements one transfer sends to
// the database, taken from paymentsd's own statement log
// (internal/store/stmtlog.go), replayed one transaction per transfer with
// fresh ids by pgbench (PostgreSQL) or a plain Go loop (SQLite). This file
// turns a log into a template; samework_run.go captures the log and runs
// the replays.

// loggedTx is one transaction of the log: the statements one connection
// sent between BEGIN and COMMIT (or ROLLBACK).
type loggedTx struct {
	Conn      int64
	Stmts     []store.LoggedStatement
	Committed bool
}

// parseStmtLog groups a statement log into transactions, in the order they
// ended. Statements outside a transaction are left out.
func parseStmtLog(r io.Reader) ([]loggedTx, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	open := map[int64]*loggedTx{}
	var out []loggedTx
	for n := 1; sc.Scan(); n++ {
		var s store.LoggedStatement
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		if err := d.Decode(&s); err != nil {
			return nil, fmt.Errorf("statement log line %d: %w", n, err)
		}
		switch s.Op {
		case "begin":
			open[s.Conn] = &loggedTx{Conn: s.Conn}
		case "commit", "rollback":
			if t := open[s.Conn]; t != nil {
				t.Committed = s.Op == "commit"
				out = append(out, *t)
				delete(open, s.Conn)
			}
		default:
			if t := open[s.Conn]; t != nil {
				t.Stmts = append(t.Stmts, s)
			}
		}
	}
	return out, sc.Err()
}

// transferTxs are the committed transactions that carry key (the
// transfer's Idempotency-Key) as an argument, or as an element of one (a
// PostgreSQL batch's rows go as one array a column).
func transferTxs(txs []loggedTx, key string) []loggedTx {
	var out []loggedTx
	for _, t := range txs {
		if !t.Committed {
			continue
		}
	found:
		for _, s := range t.Stmts {
			for _, a := range s.Args {
				if carries(a.Value, key) {
					out = append(out, t)
					break found
				}
			}
		}
	}
	return out
}

// carries reports whether a logged argument is key or an array holding it.
func carries(v any, key string) bool {
	switch x := v.(type) {
	case string:
		return x == key
	case []any:
		return slices.ContainsFunc(x, func(e any) bool { return e == key })
	}
	return false
}

// val is one argument value, normalised.
type val struct {
	Kind byte // 's' string, 'y' bytes, 'i' integer, 'f' float, 'b' bool, 'n' NULL, 't' time, 'a' array
	S    string
	I    int64
	F    float64
	B    bool
	// Elems and Type are an array's (PostgreSQL: unnest(…) parameters) and
	// its Go type ("[]string").
	Elems []val
	Type  string
}

func toVal(a store.LoggedArg) val {
	switch a.Type {
	case "nil":
		return val{Kind: 'n'}
	case "[]byte":
		s, _ := a.Value.(string)
		return val{Kind: 'y', S: s}
	case "time.Time":
		s, _ := a.Value.(string)
		return val{Kind: 't', S: s}
	}
	switch x := a.Value.(type) {
	case []any:
		v := val{Kind: 'a', Type: a.Type}
		et := strings.TrimPrefix(a.Type, "[]")
		for _, e := range x {
			v.Elems = append(v.Elems, toVal(store.LoggedArg{Type: et, Value: e}))
		}
		return v
	case string:
		return val{Kind: 's', S: x}
	case bool:
		return val{Kind: 'b', B: x}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return val{Kind: 'i', I: i}
		}
		f, _ := x.Float64()
		return val{Kind: 'f', F: f}
	case float64:
		return val{Kind: 'f', F: x}
	case int64:
		return val{Kind: 'i', I: x}
	case nil:
		return val{Kind: 'n'}
	}
	return val{Kind: 's', S: fmt.Sprint(a.Value)}
}

// sample is one captured transfer: its transactions and what the tool knows
// of it (the roles: accounts, customers, amount, key, balance versions).
type sample struct {
	Txs   []loggedTx
	Roles map[string]val
}

// The roles a value can play, tried in this order.
var roleOrder = []string{"src_acct", "dst_acct", "src_cust", "dst_cust", "key", "amount", "neg_amount", "src_version", "dst_version"}

// swTemplate is one transfer's work with its varying values named.
type swTemplate struct {
	Txs []swTx
	// Uniques are the fresh values each replayed transfer makes: the
	// prefix of the original (id type and the start of its UUID) and a
	// number.
	Uniques []string
	// Ranges are small integers that varied between samples (shards):
	// each replay draws one uniformly in [Min, Max]. Two arguments that
	// held the same value in every sample (a shard a batch locks, then
	// adds to) share one draw.
	Ranges    []intRange
	rangeVals [][]int64 // each range's value in each sample
}

type intRange struct{ Min, Max int64 }

type swTx struct{ Stmts []swStmt }

// swStmt is a statement's SQL cut at its placeholders (Segs has one more
// element than Args) and what goes in each.
type swStmt struct {
	Op   string
	Segs []string
	Args []swArg
}

// swArg is one argument: a constant, a role, a version read (Role
// src_version/dst_version), a range draw, or a string of literal and
// variable pieces.
type swArg struct {
	Const  *val
	Role   string
	Range  int // 1-based index into Ranges
	Pieces []piece
	// VolumeOf, for the "before" of a summed daily-volume update's row,
	// are that row's platform, env, day and shard: the replay reads the
	// shard's total there (volumeRead), as it reads a balance's version.
	VolumeOf []swArg
	// Elems are an array argument's elements, ArrayType its Go type.
	Elems     []swArg
	ArrayType string
}

// piece is a literal or a variable: a role ("src_acct") or a unique ("u3").
type piece struct {
	Lit string
	Var string
}

var (
	pgPlaceholder = regexp.MustCompile(`\$[0-9]+`)
	idToken       = regexp.MustCompile(`[A-Z][A-Za-z]*:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// splitPlaceholders cuts a statement at its placeholders ("?" or "$N"); idx
// is the argument each one takes.
func splitPlaceholders(sql string) (segs []string, idx []int) {
	if locs := pgPlaceholder.FindAllStringIndex(sql, -1); len(locs) > 0 {
		last := 0
		for _, l := range locs {
			n, _ := strconv.Atoi(sql[l[0]+1 : l[1]])
			segs, idx = append(segs, sql[last:l[0]]), append(idx, n-1)
			last = l[1]
		}
		return append(segs, sql[last:]), idx
	}
	parts := strings.Split(sql, "?")
	for i := range parts[1:] {
		idx = append(idx, i)
	}
	return parts, idx
}

// steadyShape keeps the samples whose statements are those most samples
// have (the first transfer after a start may warm a cache with a statement
// more); it returns how many it dropped.
func steadyShape(samples []sample) ([]sample, int) {
	shape := func(s sample) string {
		var b strings.Builder
		for _, tx := range s.Txs {
			b.WriteString("\x00tx")
			for _, st := range tx.Stmts {
				fmt.Fprintf(&b, "\x00%s\x00%d", st.SQL, len(st.Args))
			}
		}
		return b.String()
	}
	count := map[string]int{}
	best := ""
	for _, s := range samples {
		k := shape(s)
		count[k]++
		if count[k] > count[best] {
			best = k
		}
	}
	var out []sample
	for _, s := range samples {
		if shape(s) == best {
			out = append(out, s)
		}
	}
	return out, len(samples) - len(out)
}

// buildTemplate compares the samples (at least two, with the same
// statements) position by position and names what varies.
func buildTemplate(samples []sample) (*swTemplate, error) {
	if len(samples) < 2 {
		return nil, fmt.Errorf("need at least 2 captured transfers, have %d", len(samples))
	}
	if err := sameShape(samples); err != nil {
		return nil, err
	}
	t := &swTemplate{}
	uniq := map[string]int{} // token -> 1-based unique index
	constTok := constantTokens(samples)
	for ti, tx := range samples[0].Txs {
		var stx swTx
		for si, st := range tx.Stmts {
			segs, idx := splitPlaceholders(st.SQL)
			s := swStmt{Op: st.Op, Segs: segs}
			for _, ai := range idx {
				vs := make([]val, len(samples))
				for k, smp := range samples {
					vs[k] = toVal(smp.Txs[ti].Stmts[si].Args[ai])
				}
				s.Args = append(s.Args, t.classify(vs, samples, constTok, uniq))
			}
			volumeBefores(&s)
			stx.Stmts = append(stx.Stmts, s)
		}
		t.Txs = append(t.Txs, stx)
	}
	return t, nil
}

func sameShape(samples []sample) error {
	a := samples[0]
	if len(a.Txs) == 0 {
		return fmt.Errorf("the first captured transfer has no transaction in the log")
	}
	for k, b := range samples[1:] {
		if len(b.Txs) != len(a.Txs) {
			return fmt.Errorf("transfer %d: %d transactions, the first had %d", k+2, len(b.Txs), len(a.Txs))
		}
		for ti := range a.Txs {
			x, y := a.Txs[ti].Stmts, b.Txs[ti].Stmts
			if len(x) != len(y) {
				return fmt.Errorf("transfer %d: transaction %d has %d statements, the first had %d", k+2, ti+1, len(y), len(x))
			}
			for si := range x {
				if x[si].SQL != y[si].SQL || len(x[si].Args) != len(y[si].Args) {
					return fmt.Errorf("transfer %d: statement %d differs from the first transfer's", k+2, si+1)
				}
			}
		}
	}
	return nil
}

// constantTokens are the ids every sample mentions (the platform's).
func constantTokens(samples []sample) map[string]bool {
	count := map[string]int{}
	for _, smp := range samples {
		seen := map[string]bool{}
		for _, tx := range smp.Txs {
			for _, st := range tx.Stmts {
				for _, a := range st.Args {
					if s, ok := a.Value.(string); ok {
						for _, tok := range idToken.FindAllString(s, -1) {
							seen[tok] = true
						}
					}
				}
			}
		}
		for tok := range seen {
			count[tok]++
		}
	}
	out := map[string]bool{}
	for tok, n := range count {
		if n == len(samples) {
			out[tok] = true
		}
	}
	return out
}

func (t *swTemplate) classify(vs []val, samples []sample, constTok map[string]bool, uniq map[string]int) swArg {
	for _, role := range roleOrder {
		if roleMatches(role, vs, samples) {
			return swArg{Role: role}
		}
	}
	if allEqual(vs) {
		v := vs[0]
		return swArg{Const: &v}
	}
	v := vs[0]
	if v.Kind == 'a' && sameLength(vs) {
		// An array: each element is named as an argument of its own.
		a := swArg{ArrayType: v.Type, Elems: []swArg{}}
		for i := range v.Elems {
			es := make([]val, len(vs))
			for k := range vs {
				es[k] = vs[k].Elems[i]
			}
			a.Elems = append(a.Elems, t.classify(es, samples, constTok, uniq))
		}
		return a
	}
	switch v.Kind {
	case 's', 'y':
		return swArg{Pieces: t.pieces(v.S, samples[0].Roles, constTok, uniq)}
	case 'i':
		lo, hi := v.I, v.I
		for _, x := range vs {
			lo, hi = min(lo, x.I), max(hi, x.I)
		}
		if lo < -1e12 || hi > 1e12 { // a timestamp: any one does the same work
			return swArg{Const: &v}
		}
		is := make([]int64, len(vs))
		for k, x := range vs {
			is[k] = x.I
		}
		for i, seen := range t.rangeVals {
			if slices.Equal(seen, is) {
				return swArg{Range: i + 1}
			}
		}
		t.Ranges, t.rangeVals = append(t.Ranges, intRange{lo, hi}), append(t.rangeVals, is)
		return swArg{Range: len(t.Ranges)}
	}
	return swArg{Const: &v}
}

// The summed daily-volume update (the store's volumeDeltaUpdates): rows of
// platform_id, env, day, shard, before, add, where before is the shard's
// total when the batch first added to it, which the update checks. Should
// the store's text change so that these no longer match, the replay's
// update matches no row and its row check (paymentsd_expect_rows) aborts
// pgbench: the baseline fails loudly rather than skip the write.
const (
	volumeUpdateHead = "UPDATE daily_volumes AS d SET usd = d.usd + v.add"
	volumeUpdateTail = "AS v (platform_id, env, day, shard, before, add)"
)

// volumeBefores turns each row's before (a VALUES list's fifth of six, or
// each element of the fifth array) into a read of the shard's total,
// so that the replayed update changes its row as the service's did (a
// drawn or logged total would match no row, and the statement's row check
// would fail it).
func volumeBefores(s *swStmt) {
	in, n := false, 0
	for k := range s.Args {
		switch seg := s.Segs[k]; {
		case strings.Contains(seg, volumeUpdateHead):
			in, n = true, 0
		case strings.Contains(seg, volumeUpdateTail):
			in = false
		}
		if !in {
			continue
		}
		switch rows := arrayLen(s.Args[k]); {
		case n%6 != 4:
		case rows >= 0: // PostgreSQL: one array a column, an element a row
			elems := make([]swArg, rows)
			for i := range elems {
				of := make([]swArg, 4)
				for c := range of {
					of[c] = elemOf(s.Args[k-4+c], i)
				}
				elems[i] = swArg{VolumeOf: of}
			}
			s.Args[k] = swArg{ArrayType: "[]int64", Elems: elems}
		default:
			s.Args[k] = swArg{VolumeOf: slices.Clone(s.Args[k-4 : k])}
		}
		n++
	}
}

// arrayLen is the number of elements of an array argument, -1 for any
// other.
func arrayLen(a swArg) int {
	switch {
	case a.Elems != nil:
		return len(a.Elems)
	case a.Const != nil && a.Const.Kind == 'a':
		return len(a.Const.Elems)
	}
	return -1
}

// elemOf is element i of an array argument (arrayLen > i).
func elemOf(a swArg, i int) swArg {
	if a.Elems != nil {
		return a.Elems[i]
	}
	v := a.Const.Elems[i]
	return swArg{Const: &v}
}

// roleMatches: every sample's value is that sample's value of role, and the
// role's values are not all the same (else the match says nothing).
func roleMatches(role string, vs []val, samples []sample) bool {
	var rv []val
	for k, smp := range samples {
		r, ok := smp.Roles[role]
		if !ok || !sameVal(r, vs[k]) {
			return false
		}
		rv = append(rv, r)
	}
	return !allEqual(rv)
}

func sameVal(a, b val) bool {
	if (a.Kind == 's' || a.Kind == 'y') && (b.Kind == 's' || b.Kind == 'y') {
		return a.S == b.S
	}
	if a.Kind == 'a' || b.Kind == 'a' {
		if a.Kind != b.Kind || len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !sameVal(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	}
	return a.Kind == b.Kind && a.S == b.S && a.I == b.I && a.F == b.F && a.B == b.B
}

func sameLength(vs []val) bool {
	for _, v := range vs {
		if v.Kind != 'a' || len(v.Elems) != len(vs[0].Elems) {
			return false
		}
	}
	return true
}

func allEqual(vs []val) bool {
	for _, v := range vs[1:] {
		if !sameVal(v, vs[0]) {
			return false
		}
	}
	return true
}

// pieces cuts a varying string into literal text and variables: the
// sample's role strings (accounts, customers, key) where they occur, and
// every id that not every sample mentions, each named once for the whole
// transfer. A string with neither keeps its start and gets a fresh end.
func (t *swTemplate) pieces(s string, roles map[string]val, constTok map[string]bool, uniq map[string]int) []piece {
	type hit struct {
		at, end int
		v       string
	}
	var hits []hit
	taken := make([]bool, len(s))
	mark := func(at, end int, v string) {
		for i := at; i < end; i++ {
			if taken[i] {
				return
			}
		}
		for i := at; i < end; i++ {
			taken[i] = true
		}
		hits = append(hits, hit{at, end, v})
	}
	for _, role := range []string{"src_acct", "dst_acct", "src_cust", "dst_cust", "key"} {
		r, ok := roles[role]
		if !ok || len(r.S) < 6 {
			continue
		}
		for off := 0; ; {
			i := strings.Index(s[off:], r.S)
			if i < 0 {
				break
			}
			mark(off+i, off+i+len(r.S), role)
			off += i + len(r.S)
		}
	}
	for _, l := range idToken.FindAllStringIndex(s, -1) {
		tok := s[l[0]:l[1]]
		if constTok[tok] {
			continue
		}
		// Keep the id's type and the first 13 characters of its UUID (its
		// time), so the fresh id has the original's shape and order.
		keep := strings.IndexByte(tok, ':') + 1 + 14
		mark(l[0]+keep, l[1], t.unique(tok, uniq))
	}
	if len(hits) == 0 {
		keep := max(0, len(s)-16)
		return []piece{{Lit: s[:keep]}, {Var: t.unique("\x00"+s, uniq)}}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	var out []piece
	last := 0
	for _, h := range hits {
		if h.at > last {
			out = append(out, piece{Lit: s[last:h.at]})
		}
		out = append(out, piece{Var: h.v})
		last = h.end
	}
	if last < len(s) {
		out = append(out, piece{Lit: s[last:]})
	}
	return out
}

func (t *swTemplate) unique(tok string, uniq map[string]int) string {
	n, ok := uniq[tok]
	if !ok {
		t.Uniques = append(t.Uniques, tok)
		n = len(t.Uniques)
		uniq[tok] = n
	}
	return "u" + strconv.Itoa(n)
}

// Describe lists the template's statements, one line each, for the report
// and docs/benchmarks.md.
func (t *swTemplate) Describe() []string {
	var out []string
	for i, tx := range t.Txs {
		if len(t.Txs) > 1 {
			out = append(out, fmt.Sprintf("transaction %d:", i+1))
		}
		out = append(out, "BEGIN")
		for _, s := range tx.Stmts {
			q := strings.Join(s.Segs, "?")
			line := statementHead(q)
			if w := writesOf(q); len(w) > 1 || strings.HasPrefix(strings.TrimSpace(q), "WITH") {
				line = "one statement: " + strings.Join(w, "; ")
				if len(w) == 0 && strings.Contains(q, "FOR UPDATE") { // the batch's pre-lock
					line = "one statement: reads and locks rows, writes nothing"
				} else if len(w) == 0 {
					line = "one statement: reads, writes nothing"
				}
			}
			out = append(out, line)
		}
		out = append(out, "COMMIT")
	}
	return out
}

// statementHead is a statement's first words, up to its table(s).
var spaces = regexp.MustCompile(`\s+`)

func statementHead(sql string) string {
	sql = strings.TrimSpace(spaces.ReplaceAllString(sql, " "))
	cut := 0
	for _, kw := range []string{" VALUES", " SET ", " WHERE ", " FROM (VALUES", " ON CONFLICT"} {
		if i := strings.Index(sql, kw); i > 0 && (cut == 0 || i < cut) {
			cut = i
		}
	}
	if strings.HasPrefix(sql, "SELECT") {
		if i := strings.Index(sql, " WHERE "); i > 0 {
			cut = i
		}
	}
	if cut > 0 && cut < len(sql) {
		sql = sql[:cut] + " …"
	}
	if len(sql) > 160 {
		sql = sql[:160] + " …"
	}
	return sql
}

// Counts is the number of statements, rows of multi-row INSERTs not
// counted separately.
func (t *swTemplate) Counts() (txs, stmts int) {
	for _, tx := range t.Txs {
		stmts += len(tx.Stmts)
	}
	return len(t.Txs), stmts
}

var writeRE = regexp.MustCompile(`(?i)\b(INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_][a-z0-9_]*)\s*(?:\([^()]*\))?\s*(?:VALUES\s*((?:\([^()]*\)\s*,?\s*)+))?`)

// writesOf lists what a statement writes: "INSERT INTO t (n rows)",
// "UPDATE t", in order (a WITH statement writes several tables).
func writesOf(sql string) []string {
	var out []string
	for _, m := range writeRE.FindAllStringSubmatch(sql, -1) {
		if t := strings.ToUpper(m[2]); strings.ToUpper(m[1]) == "UPDATE" && (t == "SET" || t == "OF") {
			continue // ON CONFLICT … DO UPDATE SET, FOR UPDATE OF
		}
		w := strings.ToUpper(m[1]) + " " + m[2]
		if n := strings.Count(m[3], "("); n > 1 {
			w += fmt.Sprintf(" (%d rows)", n)
		}
		out = append(out, w)
	}
	return out
}
