package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// swAccountsTable is the helper table the pgbench script picks its two
// accounts from (n, account id, customer id), created in the replay's copy
// of the database.
const swAccountsTable = "paymentsbench_sw_accounts"

// versionRead is what a balance version argument becomes: the current
// version of the account's balance, read inside the statement, so the
// optimistic guard matches as it does in the service (which read it under
// the same lock earlier in the transaction).
func versionRead(acctExpr string) string {
	return "(SELECT version FROM ledger_balances WHERE account_id = " + acctExpr + ")"
}

// volumeRead is what a summed volume update's before becomes: the shard
// row's current total (platform, env, day and shard the row's own).
func volumeRead(platform, env, day, shard string) string {
	return "(SELECT usd FROM daily_volumes WHERE platform_id = " + platform + " AND env = " + env + " AND day = " + day +
		" AND shard = " + shard + ")"
}

// pgbenchScript renders the template as a pgbench custom script for
// accounts rows of swAccountsTable: it draws two different accounts, an
// amount in 1..maxAmount and the fresh ids, reads the accounts' ids in one
// query before BEGIN (\gset), then runs the transfer's statements.
func pgbenchScript(t *swTemplate, accounts int, maxAmount int64) string {
	var b strings.Builder
	b.WriteString("-- paymentsbench same-work baseline: the statements of one transfer, from paymentsd's statement log\n")
	fmt.Fprintf(&b, "\\set si random(1, %d)\n", accounts)
	fmt.Fprintf(&b, "\\set di 1 + (:si - 1 + random(1, %d)) %% %d\n", max(1, accounts-1), accounts)
	fmt.Fprintf(&b, "\\set amount random(1, %d)\n", maxAmount)
	b.WriteString("\\set neg_amount -1 * :amount\n")
	b.WriteString("\\set kq random(1, 999999999999999)\n")
	for i := range t.Uniques {
		fmt.Fprintf(&b, "\\set u%d random(100000000000000, 999999999999999)\n", i+1)
	}
	for i, r := range t.Ranges {
		fmt.Fprintf(&b, "\\set r%d random(%d, %d)\n", i+1, r.Min, r.Max)
	}
	fmt.Fprintf(&b, "SELECT s.acct AS src_acct, s.cust AS src_cust, d.acct AS dst_acct, d.cust AS dst_cust FROM %s s, %s d WHERE s.n = :si AND d.n = :di \\gset\n",
		swAccountsTable, swAccountsTable)
	for _, tx := range t.Txs {
		b.WriteString("BEGIN;\n")
		for _, s := range tx.Stmts {
			for i, seg := range s.Segs {
				b.WriteString(spaces.ReplaceAllString(seg, " "))
				if i < len(s.Args) {
					b.WriteString(pgArg(s.Args[i]))
				}
			}
			b.WriteString(";\n")
		}
		b.WriteString("COMMIT;\n")
	}
	return b.String()
}

func pgArg(a swArg) string {
	switch {
	case a.Elems != nil:
		parts := make([]string, len(a.Elems))
		for i, e := range a.Elems {
			parts[i] = pgArg(e)
		}
		return "ARRAY[" + strings.Join(parts, ", ") + "]::" + pgArrayType(a.ArrayType)
	case a.Const != nil:
		return pgLiteral(*a.Const)
	case a.VolumeOf != nil:
		v := a.VolumeOf
		return volumeRead(pgArg(v[0]), pgArg(v[1]), pgArg(v[2]), pgArg(v[3]))
	case a.Role == "src_version":
		return versionRead(":src_acct")
	case a.Role == "dst_version":
		return versionRead(":dst_acct")
	case a.Role == "key":
		// The key is the transfer's own: a fresh one from the client and
		// two draws.
		return "('k-' || :client_id || '-' || :kq)"
	case a.Role != "":
		return ":" + a.Role
	case a.Range > 0:
		return ":r" + strconv.Itoa(a.Range)
	}
	parts := make([]string, 0, len(a.Pieces))
	for _, p := range a.Pieces {
		if p.Var == "" {
			parts = append(parts, pgString(p.Lit))
		} else if p.Var == "key" {
			parts = append(parts, pgArg(swArg{Role: "key"}))
		} else {
			parts = append(parts, ":"+p.Var)
		}
	}
	return "(" + strings.Join(parts, " || ") + ")"
}

// pgArrayType is the PostgreSQL array type of a Go slice type (of values
// or of pointers to them, whose nil elements are NULLs).
func pgArrayType(goType string) string {
	switch strings.Replace(goType, "[]*", "[]", 1) {
	case "[]int64", "[]int", "[]int32":
		return "bigint[]"
	case "[]bool":
		return "boolean[]"
	case "[]float64":
		return "float8[]"
	}
	return "text[]"
}

// pgLiteral writes a constant so that pgbench leaves it alone: strings as
// E” literals with every ":" escaped (pgbench would take ":name" for a
// variable).
func pgLiteral(v val) string {
	switch v.Kind {
	case 'n':
		return "NULL"
	case 'i':
		return strconv.FormatInt(v.I, 10)
	case 'f':
		return strconv.FormatFloat(v.F, 'g', -1, 64)
	case 'b':
		if v.B {
			return "TRUE"
		}
		return "FALSE"
	case 'y':
		return "decode(" + pgString(fmt.Sprintf("%x", v.S)) + ", 'hex')"
	case 't':
		return pgString(v.S) + "::timestamptz"
	case 'a':
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = pgLiteral(e)
		}
		return "ARRAY[" + strings.Join(parts, ", ") + "]::" + pgArrayType(v.Type)
	}
	return pgString(v.S)
}

func pgString(s string) string {
	var b strings.Builder
	b.WriteString("E'")
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r == ':':
			b.WriteString(`\072`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\%03o`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("'")
	return b.String()
}

// swAccount is one account the replays move money between.
type swAccount struct{ Acct, Cust string }

// swDraw is one replayed transfer's values.
type swDraw struct {
	Src, Dst swAccount
	Amount   int64
	Uniques  []string // by index: fresh suffixes
	Ranges   []int64
	Key      string
}

// draw picks a transfer's values: two different accounts, an amount, fresh
// ids (seq makes them unique within a run), a draw for each range.
func (t *swTemplate) draw(rng *rand.Rand, accts []swAccount, maxAmount int64, worker int, seq int64) swDraw {
	i := rng.IntN(len(accts))
	j := (i + 1 + rng.IntN(max(1, len(accts)-1))) % len(accts)
	d := swDraw{Src: accts[i], Dst: accts[j], Amount: 1 + rng.Int64N(maxAmount),
		Key: fmt.Sprintf("k-%d-%d", worker, seq)}
	for k := range t.Uniques {
		d.Uniques = append(d.Uniques, fmt.Sprintf("%02d%03d%011d", k, worker, seq))
	}
	for _, r := range t.Ranges {
		d.Ranges = append(d.Ranges, r.Min+rng.Int64N(r.Max-r.Min+1))
	}
	return d
}

// bind renders a statement for database/sql with "?" placeholders: the SQL
// (the same text for every draw, so it can be prepared once) and the
// arguments of draw d.
func (s swStmt) bind(d swDraw) (string, []any) {
	var b strings.Builder
	var args []any
	for i, seg := range s.Segs {
		b.WriteString(seg)
		if i >= len(s.Args) {
			continue
		}
		a := s.Args[i]
		switch {
		case a.Role == "src_version" || a.Role == "dst_version":
			b.WriteString(versionRead("?"))
		case a.VolumeOf != nil:
			b.WriteString(volumeRead("?", "?", "?", "?"))
			for _, v := range a.VolumeOf {
				args = append(args, v.value(d))
			}
			continue
		default:
			b.WriteString("?")
		}
		args = append(args, a.value(d))
	}
	return b.String(), args
}

func (a swArg) value(d swDraw) any {
	switch {
	case a.Elems != nil:
		out := make([]any, len(a.Elems))
		for i, e := range a.Elems {
			out[i] = e.value(d)
		}
		return out
	case a.Const != nil:
		return a.Const.goValue()
	case a.Role != "":
		return d.role(a.Role)
	case a.Range > 0:
		return d.Ranges[a.Range-1]
	}
	var b strings.Builder
	for _, p := range a.Pieces {
		switch {
		case p.Var == "":
			b.WriteString(p.Lit)
		case p.Var[0] == 'u':
			n, _ := strconv.Atoi(p.Var[1:])
			b.WriteString(d.Uniques[n-1])
		default:
			b.WriteString(fmt.Sprint(d.role(p.Var)))
		}
	}
	return b.String()
}

func (d swDraw) role(r string) any {
	switch r {
	case "src_acct", "src_version":
		return d.Src.Acct
	case "dst_acct", "dst_version":
		return d.Dst.Acct
	case "src_cust":
		return d.Src.Cust
	case "dst_cust":
		return d.Dst.Cust
	case "amount":
		return d.Amount
	case "neg_amount":
		return -d.Amount
	case "key":
		return d.Key
	}
	return nil
}

func (v val) goValue() any {
	switch v.Kind {
	case 'n':
		return nil
	case 'i':
		return v.I
	case 'f':
		return v.F
	case 'b':
		return v.B
	case 'y':
		return []byte(v.S)
	case 'a':
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = e.goValue()
		}
		return out
	}
	return v.S
}
