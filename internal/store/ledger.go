package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// The ledger's SQL. Package ledger owns every rule (what balances, who may go
// negative, what a hold or a reversal is); this file only stores and reads
// rows. ledger_transfers and ledger_postings are append-only.

// Conflicts on the unique keys of ledger_transfers. Each is joined with
// ErrConflict, so errors.Is(err, ErrConflict) also holds.
var (
	ErrLedgerTransferExists   = errors.New("store: ledger transfer id already used")
	ErrLedgerHoldResolved     = errors.New("store: ledger hold already resolved")
	ErrLedgerTransferReversed = errors.New("store: ledger transfer already reversed")
)

// ledgerChunk bounds the size of IN lists and multi-row inserts, far below the
// bind-parameter limits of both engines.
const ledgerChunk = 400

// LedgerAccount is a row of ledger_accounts.
type LedgerAccount struct {
	ID        string
	Tenant    Tenant
	Currency  string
	Kind      string
	Hot       bool
	Code      string // "" when the account has no code
	Name      string
	CreatedAt time.Time
}

// NewLedgerAccount is an account to insert and whether it keeps a balance row.
type NewLedgerAccount struct {
	LedgerAccount
	BalanceRow bool // keep a ledger_balances row (every non-hot account)
	FloorZero  bool // the balance row refuses a negative available balance
}

const ledgerAccountCols = `id, platform_id, env, currency, kind, hot, code, name, created_at`

func scanLedgerAccount(row interface{ Scan(...any) error }) (LedgerAccount, error) {
	var a LedgerAccount
	var code sql.NullString
	var created int64
	if err := row.Scan(&a.ID, &a.Tenant.PlatformID, &a.Tenant.Env, &a.Currency, &a.Kind, &a.Hot, &code, &a.Name, &created); err != nil {
		return LedgerAccount{}, classify(err)
	}
	a.Code, a.CreatedAt = code.String, fromMicros(created)
	return a, nil
}

func ledgerNullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// InsertLedgerAccountIfAbsent stores an account (and its balance row) unless
// its id or code is taken, and reports whether it did. It never fails on a
// conflict, so it is safe inside a PostgreSQL transaction that must go on.
func (q Q) InsertLedgerAccountIfAbsent(ctx context.Context, a NewLedgerAccount) (bool, error) {
	query := `INSERT INTO ledger_accounts (` + ledgerAccountCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	res, err := q.exec(ctx, query, a.ID, a.Tenant.PlatformID, a.Tenant.Env, a.Currency, a.Kind, a.Hot,
		ledgerNullString(a.Code), a.Name, toMicros(a.CreatedAt))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if a.BalanceRow {
		if _, err := q.exec(ctx, `INSERT INTO ledger_balances (account_id, platform_id, env, posted, pending_debits,
			pending_credits, floor_zero, version, updated_at) VALUES (?, ?, ?, 0, 0, 0, ?, 0, ?)`,
			a.ID, a.Tenant.PlatformID, a.Tenant.Env, a.FloorZero, toMicros(a.CreatedAt)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// GetLedgerAccount returns one account of the tenant.
func (q Q) GetLedgerAccount(ctx context.Context, t Tenant, id string) (LedgerAccount, error) {
	return scanLedgerAccount(q.queryRow(ctx, `SELECT `+ledgerAccountCols+` FROM ledger_accounts
		WHERE platform_id = ? AND env = ? AND id = ?`, t.PlatformID, t.Env, id))
}

// LedgerAccountByCode returns the tenant's account with a code in a currency.
func (q Q) LedgerAccountByCode(ctx context.Context, t Tenant, code, currency string) (LedgerAccount, error) {
	return scanLedgerAccount(q.queryRow(ctx, `SELECT `+ledgerAccountCols+` FROM ledger_accounts
		WHERE platform_id = ? AND env = ? AND code = ? AND currency = ?`, t.PlatformID, t.Env, code, currency))
}

// LedgerAccountsByID returns those of ids that are accounts of the tenant.
func (q Q) LedgerAccountsByID(ctx context.Context, t Tenant, ids []string) (map[string]LedgerAccount, error) {
	return collectByID(ctx, q, ledgerDedupe(ids), func(in string) (string, []any) {
		return `SELECT ` + ledgerAccountCols + ` FROM ledger_accounts WHERE platform_id = ? AND env = ?
			AND id IN (` + in + `)`, []any{t.PlatformID, t.Env}
	}, scanLedgerAccount, func(a LedgerAccount) string { return a.ID })
}

// ListLedgerAccounts returns up to limit accounts of the tenant after the id
// `after` (keyset), in id order.
func (q Q) ListLedgerAccounts(ctx context.Context, t Tenant, after string, limit int) ([]LedgerAccount, error) {
	rows, err := q.query(ctx, `SELECT `+ledgerAccountCols+` FROM ledger_accounts
		WHERE platform_id = ? AND env = ? AND id > ? ORDER BY id LIMIT ?`, t.PlatformID, t.Env, after, limit)
	if err != nil {
		return nil, err
	}
	var out []LedgerAccount
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		a, err := scanLedgerAccount(r)
		out = append(out, a)
		return err
	})
	return out, err
}

// LedgerBalance is a balance row, or a balance derived from postings (then
// Version is 0).
type LedgerBalance struct {
	AccountID      string
	Posted         int64
	PendingDebits  int64 // positive magnitude of unresolved pending debits
	PendingCredits int64
	FloorZero      bool
	Version        int64
	UpdatedAt      time.Time
}

const ledgerBalanceCols = `account_id, posted, pending_debits, pending_credits, floor_zero, version, updated_at`

func scanLedgerBalance(row interface{ Scan(...any) error }) (LedgerBalance, error) {
	var b LedgerBalance
	var updated int64
	if err := row.Scan(&b.AccountID, &b.Posted, &b.PendingDebits, &b.PendingCredits, &b.FloorZero, &b.Version, &updated); err != nil {
		return LedgerBalance{}, classify(err)
	}
	b.UpdatedAt = fromMicros(updated)
	return b, nil
}

// GetLedgerBalance reads an account's balance row.
func (q Q) GetLedgerBalance(ctx context.Context, t Tenant, accountID string) (LedgerBalance, error) {
	return scanLedgerBalance(q.queryRow(ctx, `SELECT `+ledgerBalanceCols+` FROM ledger_balances
		WHERE platform_id = ? AND env = ? AND account_id = ?`, t.PlatformID, t.Env, accountID))
}

// LockedLedgerAccount is what a writer needs of an account: its currency,
// kind and hotness, and its balance row if it has one.
type LockedLedgerAccount struct {
	ID       string
	Currency string
	Kind     string
	Hot      bool
	// Closed: the account takes no more credits (see CloseLedgerAccounts).
	Closed  bool
	Balance *LedgerBalance
}

// lockBalancesPG locks the balance rows of ids in account order and puts
// them, with their accounts, in out. The ids are named for both tables: with
// the list on the balances alone, a small ledger_accounts was planned as a
// sequential scan and a hash join for every transfer.
func (q Q) lockBalancesPG(ctx context.Context, t Tenant, ids []string, out map[string]LockedLedgerAccount) error {
	for _, chunk := range ledgerChunks(ids) {
		in, list := ledgerPlaceholders(len(chunk)), ledgerAnys(chunk)
		args := append(append([]any{t.PlatformID, t.Env}, list...), list...)
		rows, err := q.query(ctx, `SELECT a.id, a.currency, a.kind, a.hot, b.posted, b.pending_debits, b.pending_credits,
			b.floor_zero, b.version, b.updated_at, b.closed FROM ledger_balances b JOIN ledger_accounts a ON a.id = b.account_id
			WHERE b.platform_id = ? AND b.env = ? AND a.platform_id = b.platform_id AND a.env = b.env
			AND a.id IN (`+in+`) AND b.account_id IN (`+in+`) ORDER BY b.account_id FOR UPDATE OF b`, args...)
		if err != nil {
			return err
		}
		err = ledgerEachRow(rows, func(r *sql.Rows) error {
			var a LockedLedgerAccount
			var b LedgerBalance
			var updated int64
			if err := r.Scan(&a.ID, &a.Currency, &a.Kind, &a.Hot, &b.Posted, &b.PendingDebits, &b.PendingCredits,
				&b.FloorZero, &b.Version, &updated, &a.Closed); err != nil {
				return err
			}
			b.AccountID, b.UpdatedAt = a.ID, fromMicros(updated)
			a.Balance = &b
			out[a.ID] = a
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// LockLedgerAccounts returns those of ids that are accounts of the tenant,
// with their balance rows. On PostgreSQL the balance rows are locked FOR
// UPDATE in ascending account-id order (the one lock order every writer
// uses, so writers never deadlock on balance rows). SQLite, with its single
// writer, needs no lock.
func (q Q) LockLedgerAccounts(ctx context.Context, t Tenant, ids []string) (map[string]LockedLedgerAccount, error) {
	// Inside a batch that locked (PostgreSQL) or read (SQLite) them all
	// when it began, no statement: they are in its cache.
	ids = ledgerDedupe(ids)
	if cached, ok := q.balances().get(t, ids); ok {
		return cached, nil
	}
	out := make(map[string]LockedLedgerAccount, len(ids))
	if q.engine == Postgres {
		// The accounts with a balance row, locked in account order, in one
		// query; then those without one (hot accounts), if any.
		if err := q.lockBalancesPG(ctx, t, ids, out); err != nil {
			return nil, err
		}
		var rest []string
		for _, aid := range ids {
			if _, ok := out[aid]; !ok {
				rest = append(rest, aid)
			}
		}
		if len(rest) == 0 {
			return out, nil
		}
		accts, err := q.LedgerAccountsByID(ctx, t, rest)
		if err != nil {
			return nil, err
		}
		for aid, a := range accts {
			out[aid] = LockedLedgerAccount{ID: a.ID, Currency: a.Currency, Kind: a.Kind, Hot: a.Hot}
		}
		return out, nil
	}
	err := q.eachInChunks(ctx, ids, func(in string) (string, []any) {
		return `SELECT a.id, a.currency, a.kind, a.hot, b.posted, b.pending_debits, b.pending_credits, b.version,
			COALESCE(b.closed, FALSE) FROM ledger_accounts a LEFT JOIN ledger_balances b ON b.account_id = a.id
			WHERE a.platform_id = ? AND a.env = ? AND a.id IN (` + in + `)`, []any{t.PlatformID, t.Env}
	}, func(r *sql.Rows) error {
		var a LockedLedgerAccount
		var posted, pd, pc, version sql.NullInt64
		if err := r.Scan(&a.ID, &a.Currency, &a.Kind, &a.Hot, &posted, &pd, &pc, &version, &a.Closed); err != nil {
			return err
		}
		if version.Valid {
			a.Balance = &LedgerBalance{AccountID: a.ID, Posted: posted.Int64, PendingDebits: pd.Int64,
				PendingCredits: pc.Int64, Version: version.Int64}
		}
		out[a.ID] = a
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CloseLedgerAccounts marks accounts' balance rows closed (they take no
// more credits; package ledger refuses or redirects them) and bumps their
// versions. The caller has locked the rows with LockLedgerAccounts in the
// same transaction and checked what they hold.
func (q Q) CloseLedgerAccounts(ctx context.Context, t Tenant, ids []string, at time.Time) error {
	return q.eachInChunks(ctx, ledgerDedupe(ids), func(in string) (string, []any) {
		return `UPDATE ledger_balances SET closed = TRUE, version = version + 1, updated_at = ?
			WHERE platform_id = ? AND env = ? AND account_id IN (` + in + `) RETURNING account_id`,
			[]any{toMicros(at), t.PlatformID, t.Env}
	}, func(r *sql.Rows) error { var id string; return r.Scan(&id) })
}

// LedgerBalanceChange adds deltas to a balance row.
type LedgerBalanceChange struct {
	AccountID      string
	Version        int64 // the version read; the update applies only if it is unchanged
	Posted         int64 // deltas
	PendingDebits  int64
	PendingCredits int64
	// FloorZero makes the update apply only if the resulting available
	// balance (posted - pending_debits) is not negative.
	FloorZero bool
}

// ChangeLedgerBalance applies c in one conditional UPDATE and reports whether
// it applied (false: the version moved, or the floor would be broken).
func (q Q) ChangeLedgerBalance(ctx context.Context, t Tenant, c LedgerBalanceChange, at time.Time) (bool, error) {
	query := `UPDATE ledger_balances SET posted = posted + ?, pending_debits = pending_debits + ?,
		pending_credits = pending_credits + ?, version = version + 1, updated_at = ?
		WHERE platform_id = ? AND env = ? AND account_id = ? AND version = ?`
	args := []any{c.Posted, c.PendingDebits, c.PendingCredits, toMicros(at), t.PlatformID, t.Env, c.AccountID, c.Version}
	if c.FloorZero {
		query += ` AND posted - pending_debits + ? >= 0`
		args = append(args, c.Posted-c.PendingDebits)
	}
	res, err := q.exec(ctx, query, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// WriteLedger stores what a ledger batch decided (inside a batch on
// PostgreSQL, usually queued for the commit: queueLedger): its transfers
// (InsertLedgerTransfers), postings and statement buckets (see
// ledgerBucketUpserts), then its balance changes
// (ChangeLedgerBalance each). failed names the account of a change that did
// not apply, "" when all did. On PostgreSQL it is one statement, the balance
// changes one UPDATE ... FROM VALUES whose RETURNING tells which applied; a
// transfer costs one round trip to write instead of five.
func (q Q) WriteLedger(ctx context.Context, t Tenant, ts []LedgerTransfer, ps, bucketed []LedgerPosting,
	changes []LedgerBalanceChange, at time.Time) (failed string, err error) {
	if q.queueLedger(t, ts, ps, bucketed, changes, toMicros(at)) {
		return "", nil // written with the batch's others (at_commit.go)
	}
	transfers := q.ledgerTransferInserts(ts)
	inserts := append(append(transfers, q.ledgerPostingInserts(ps)...), q.ledgerBucketUpserts(bucketed)...)
	params := 0
	for _, st := range inserts {
		params += len(st.args)
	}
	if q.engine != Postgres || len(changes) == 0 || params+len(changes)*10 > maxCombinedArgs {
		if err := q.execLedgerTransfers(ctx, transfers); err != nil {
			return "", err
		}
		if err := q.execAll(ctx, inserts[len(transfers):]); err != nil {
			return "", err
		}
		for _, c := range changes {
			ok, err := q.ChangeLedgerBalance(ctx, t, c, at)
			if err != nil || !ok {
				return c.AccountID, err
			}
		}
		return "", nil
	}
	sums := make([]*balanceSum, len(changes))
	for i, c := range changes {
		sums[i] = &balanceSum{key: balanceKey{t, c.AccountID}, version: c.Version, n: 1, posted: c.Posted,
			debits: c.PendingDebits, credits: c.PendingCredits, floor: c.FloorZero, at: toMicros(at)}
	}
	update := balanceSumUpdate(q.engine, sums)
	query, all := combine(append(inserts, update))
	cache := q.balances()
	failed, err = q.writeLedgerPG(ctx, query, all, changes)
	if err == nil && failed == "" {
		cache.applied(t, changes, toMicros(at))
	} else {
		cache.clear()
	}
	return failed, err
}

// writeLedgerPG runs WriteLedger's one statement and names the account of
// a change it did not apply ("" when all did). The batch's balance cache
// is left to the caller, which knows the changes.
func (q Q) writeLedgerPG(ctx context.Context, query string, args []any, changes []LedgerBalanceChange) (string, error) {
	if q.outbox != nil {
		was := q.outbox.flushing
		q.outbox.flushing = true // its own change: applied to the cache after
		defer func() { q.outbox.flushing = was }()
	}
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return "", ledgerConflict(err)
	}
	applied := make(map[string]bool, len(changes))
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		applied[id] = true
		return err
	})
	if err != nil {
		return "", ledgerConflict(err)
	}
	for _, c := range changes {
		if !applied[c.AccountID] {
			return c.AccountID, nil
		}
	}
	return "", nil
}

// ListLedgerBalances returns every balance row of the tenant.
func (q Q) ListLedgerBalances(ctx context.Context, t Tenant) (map[string]LedgerBalance, error) {
	rows, err := q.query(ctx, `SELECT `+ledgerBalanceCols+` FROM ledger_balances WHERE platform_id = ? AND env = ?`,
		t.PlatformID, t.Env)
	if err != nil {
		return nil, err
	}
	out := map[string]LedgerBalance{}
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		b, err := scanLedgerBalance(r)
		out[b.AccountID] = b
		return err
	})
	return out, err
}

// Sums over many postings can pass int64 even though no posting is near it
// (a hot account's balance is the sum of every posting it ever had; the
// audit sums every account). SQLite's SUM fails on integer overflow and a
// PostgreSQL CAST to BIGINT is out of range, so such sums are taken in two
// parts that cannot overflow: the sum of amount / 2^32 and the sum of
// amount % 2^32 (both engines truncate toward zero, so amount is exactly
// hi*2^32 + lo). Each part fits int64 for up to 2^31 postings; Go joins them
// exactly (bigSum).
func splitSum(expr string) string {
	return "CAST(COALESCE(SUM((" + expr + ") / 4294967296), 0) AS BIGINT), " +
		"CAST(COALESCE(SUM((" + expr + ") % 4294967296), 0) AS BIGINT)"
}

// bigSum is a sum read as splitSum's two parts.
type bigSum struct{ hi, lo int64 }

// Big is the exact sum.
func (s bigSum) Big() *big.Int {
	v := big.NewInt(s.hi)
	v.Lsh(v, 32)
	return v.Add(v, big.NewInt(s.lo))
}

// ErrSumOutOfRange is a sum of postings (a hot account's balance) that does
// not fit int64.
var ErrSumOutOfRange = errors.New("store: sum of postings out of int64 range")

func (s bigSum) int64() (int64, error) {
	v := s.Big()
	if !v.IsInt64() {
		return 0, fmt.Errorf("%w: %s", ErrSumOutOfRange, v)
	}
	return v.Int64(), nil
}

// DerivedLedgerBalance sums an account's postings: posted ones, and the
// pending ones of holds no POST or VOID has resolved. ErrSumOutOfRange
// when a sum does not fit int64.
func (q Q) DerivedLedgerBalance(ctx context.Context, t Tenant, accountID string) (LedgerBalance, error) {
	var posted, debits, credits bigSum
	if err := q.queryRow(ctx, `SELECT `+splitSum("amount")+` FROM ledger_postings
		WHERE account_id = ? AND NOT pending AND platform_id = ? AND env = ?`, accountID, t.PlatformID, t.Env).
		Scan(&posted.hi, &posted.lo); err != nil {
		return LedgerBalance{}, classify(err)
	}
	if err := q.queryRow(ctx, `SELECT
			`+splitSum("CASE WHEN p.amount < 0 THEN -p.amount ELSE 0 END")+`,
			`+splitSum("CASE WHEN p.amount > 0 THEN p.amount ELSE 0 END")+`
		FROM ledger_postings p
		WHERE p.account_id = ? AND p.pending AND p.platform_id = ? AND p.env = ?
		AND NOT EXISTS (SELECT 1 FROM ledger_transfers r WHERE r.hold_id = p.transfer_id)`,
		accountID, t.PlatformID, t.Env).Scan(&debits.hi, &debits.lo, &credits.hi, &credits.lo); err != nil {
		return LedgerBalance{}, classify(err)
	}
	b := LedgerBalance{AccountID: accountID}
	var err1, err2, err3 error
	b.Posted, err1 = posted.int64()
	b.PendingDebits, err2 = debits.int64()
	b.PendingCredits, err3 = credits.int64()
	if err := errors.Join(err1, err2, err3); err != nil {
		return LedgerBalance{}, fmt.Errorf("account %s: %w", accountID, err)
	}
	return b, nil
}

// LedgerSums are an account's sums of postings, exact whatever their size.
type LedgerSums struct {
	AccountID                             string
	Posted, PendingDebits, PendingCredits *big.Int
}

// DerivedLedgerBalances is DerivedLedgerBalance for every account of the
// tenant that has postings (an audit: it reads every posting), exactly.
func (q Q) DerivedLedgerBalances(ctx context.Context, t Tenant) (map[string]LedgerSums, error) {
	rows, err := q.query(ctx, `SELECT p.account_id,
			`+splitSum("CASE WHEN NOT p.pending THEN p.amount ELSE 0 END")+`,
			`+splitSum("CASE WHEN p.pending AND r.id IS NULL AND p.amount < 0 THEN -p.amount ELSE 0 END")+`,
			`+splitSum("CASE WHEN p.pending AND r.id IS NULL AND p.amount > 0 THEN p.amount ELSE 0 END")+`
		FROM ledger_postings p LEFT JOIN ledger_transfers r ON r.hold_id = p.transfer_id
		WHERE p.platform_id = ? AND p.env = ?
		GROUP BY p.account_id`, t.PlatformID, t.Env)
	if err != nil {
		return nil, err
	}
	out := map[string]LedgerSums{}
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var id string
		var posted, debits, credits bigSum
		err := r.Scan(&id, &posted.hi, &posted.lo, &debits.hi, &debits.lo, &credits.hi, &credits.lo)
		out[id] = LedgerSums{AccountID: id, Posted: posted.Big(), PendingDebits: debits.Big(), PendingCredits: credits.Big()}
		return err
	})
	return out, err
}

// LedgerTransfer is a row of ledger_transfers.
type LedgerTransfer struct {
	ID         string
	Tenant     Tenant
	Kind       string
	HoldID     string // POST and VOID: the hold they resolve
	ReversesID string // REVERSAL: the transfer it reverses
	Reference  string
	Metadata   []byte // JSON; nil is NULL
	CreatedAt  time.Time

	// Read only, filled by LedgerTransfersByID: the transfers that resolved
	// (hold_id) or reversed (reverses_transfer_id) this one, if any.
	ResolvedBy string
	ReversedBy string
}

// LedgerPosting is a row of ledger_postings.
type LedgerPosting struct {
	ID         string
	Tenant     Tenant
	TransferID string
	AccountID  string
	Currency   string
	Amount     int64
	Pending    bool
	CreatedAt  time.Time
}

const ledgerTransferCols = `id, platform_id, env, kind, hold_id, reverses_transfer_id, reference, metadata, created_at`

const ledgerPostingCols = `id, platform_id, env, transfer_id, account_id, currency, amount, pending, created_at`

// InsertLedgerTransfers stores transfers in order (a POST may name a hold
// stored earlier in the same call). A conflict on a unique key is ErrConflict
// joined with ErrLedgerTransferExists, ErrLedgerHoldResolved or
// ErrLedgerTransferReversed.
func (q Q) InsertLedgerTransfers(ctx context.Context, ts []LedgerTransfer) error {
	return q.execLedgerTransfers(ctx, q.ledgerTransferInserts(ts))
}

// execLedgerTransfers runs transfer inserts one by one, naming the unique key
// a conflict hit.
func (q Q) execLedgerTransfers(ctx context.Context, stmts []statement) error {
	for _, st := range stmts {
		if _, err := q.exec(ctx, st.sql, st.args...); err != nil {
			return ledgerConflict(err)
		}
	}
	return nil
}

func (q Q) ledgerTransferInserts(ts []LedgerTransfer) []statement {
	var out []statement
	for start := 0; start < len(ts); start += ledgerChunk {
		part := ts[start:min(start+ledgerChunk, len(ts))]
		args := make([]any, 0, len(part)*9)
		for _, tr := range part {
			var meta sql.NullString
			if tr.Metadata != nil {
				meta = sql.NullString{String: string(tr.Metadata), Valid: true}
			}
			args = append(args, tr.ID, tr.Tenant.PlatformID, tr.Tenant.Env, tr.Kind, ledgerNullString(tr.HoldID),
				ledgerNullString(tr.ReversesID), tr.Reference, meta, toMicros(tr.CreatedAt))
		}
		out = append(out, q.insertRows("ledger_transfers", splitCols(ledgerTransferCols), len(part), args, ""))
	}
	return out
}

func (q Q) ledgerPostingInserts(ps []LedgerPosting) []statement {
	var out []statement
	for start := 0; start < len(ps); start += ledgerChunk {
		part := ps[start:min(start+ledgerChunk, len(ps))]
		args := make([]any, 0, len(part)*9)
		for _, p := range part {
			args = append(args, p.ID, p.Tenant.PlatformID, p.Tenant.Env, p.TransferID, p.AccountID, p.Currency,
				p.Amount, p.Pending, toMicros(p.CreatedAt))
		}
		out = append(out, q.insertRows("ledger_postings", splitCols(ledgerPostingCols), len(part), args, ""))
	}
	return out
}

// ledgerConflict names the unique key a failed transfer insert hit.
func ledgerConflict(err error) error {
	if !errors.Is(err, ErrConflict) {
		return err
	}
	var name string
	var pg *pgconn.PgError
	var se *sqlite.Error
	switch {
	case errors.As(err, &pg):
		name = pg.ConstraintName
	case errors.As(err, &se):
		name = se.Error()
	}
	switch {
	case strings.Contains(name, "ledger_transfers_hold_once") || strings.Contains(name, "ledger_transfers.hold_id"):
		return errors.Join(ErrLedgerHoldResolved, err)
	case strings.Contains(name, "ledger_transfers_reversal_once") || strings.Contains(name, "ledger_transfers.reverses_transfer_id"):
		return errors.Join(ErrLedgerTransferReversed, err)
	case strings.Contains(name, "ledger_transfers_pkey") || strings.Contains(name, "ledger_transfers.id"):
		return errors.Join(ErrLedgerTransferExists, err)
	}
	return err
}

// LedgerTransfersByID returns those of ids that are transfers of the tenant,
// with ResolvedBy and ReversedBy filled.
func (q Q) LedgerTransfersByID(ctx context.Context, t Tenant, ids []string) (map[string]LedgerTransfer, error) {
	all, err := q.LedgerTransfersByIDAnyTenant(ctx, ids)
	for tid, tr := range all {
		if tr.Tenant != t {
			delete(all, tid)
		}
	}
	return all, err
}

// LedgerTransfersByIDAnyTenant is LedgerTransfersByID across tenants, for
// checks that an id is free (ids are unique across tenants). Callers check
// Tenant before using a row. (Rows are found by primary key only: a tenant
// condition in SQL tempts SQLite's planner into scanning the tenant's whole
// time index.)
func (q Q) LedgerTransfersByIDAnyTenant(ctx context.Context, ids []string) (map[string]LedgerTransfer, error) {
	out := make(map[string]LedgerTransfer, len(ids))
	err := q.eachInChunks(ctx, ledgerDedupe(ids), func(in string) (string, []any) {
		return `SELECT t.id, t.platform_id, t.env, t.kind, t.hold_id, t.reverses_transfer_id,
				t.reference, t.metadata, t.created_at,
				(SELECT r.id FROM ledger_transfers r WHERE r.hold_id = t.id),
				(SELECT r.id FROM ledger_transfers r WHERE r.reverses_transfer_id = t.id)
			FROM ledger_transfers t WHERE t.id IN (` + in + `)`, nil
	}, func(r *sql.Rows) error {
		var tr LedgerTransfer
		var hold, rev, meta, resolved, reversed sql.NullString
		var created int64
		if err := r.Scan(&tr.ID, &tr.Tenant.PlatformID, &tr.Tenant.Env, &tr.Kind, &hold, &rev, &tr.Reference,
			&meta, &created, &resolved, &reversed); err != nil {
			return err
		}
		tr.HoldID, tr.ReversesID, tr.ResolvedBy, tr.ReversedBy = hold.String, rev.String, resolved.String, reversed.String
		if meta.Valid {
			tr.Metadata = []byte(meta.String)
		}
		tr.CreatedAt = fromMicros(created)
		out[tr.ID] = tr
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LedgerPostingsOf returns the postings of transfers, each transfer's in the
// order they were stored.
func (q Q) LedgerPostingsOf(ctx context.Context, t Tenant, transferIDs []string) (map[string][]LedgerPosting, error) {
	out := make(map[string][]LedgerPosting, len(transferIDs))
	err := q.eachInChunks(ctx, ledgerDedupe(transferIDs), func(in string) (string, []any) {
		return `SELECT ` + ledgerPostingCols + ` FROM ledger_postings WHERE platform_id = ? AND env = ?
			AND transfer_id IN (` + in + `) ORDER BY transfer_id, id`, []any{t.PlatformID, t.Env}
	}, func(r *sql.Rows) error {
		p, err := scanLedgerPosting(r)
		out[p.TransferID] = append(out[p.TransferID], p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scanLedgerPosting(row interface{ Scan(...any) error }) (LedgerPosting, error) {
	var p LedgerPosting
	var created int64
	if err := row.Scan(&p.ID, &p.Tenant.PlatformID, &p.Tenant.Env, &p.TransferID, &p.AccountID, &p.Currency,
		&p.Amount, &p.Pending, &created); err != nil {
		return LedgerPosting{}, classify(err)
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

// LedgerPostingCursor is the keyset position of a posting in an account's
// statement order (created_at, id).
type LedgerPostingCursor struct {
	CreatedAt time.Time
	ID        string
}

// LedgerStatement returns up to limit posted postings of an account with
// from <= created_at < to (either bound optional), after the cursor, in the
// order the money moved.
func (q Q) LedgerStatement(ctx context.Context, t Tenant, accountID string, from, to *time.Time, after *LedgerPostingCursor, limit int) ([]LedgerPosting, error) {
	w := where{}
	w.add("account_id = ?", accountID)
	w.add("NOT pending")
	w.add("platform_id = ?", t.PlatformID)
	w.add("env = ?", t.Env)
	if from != nil {
		w.add("created_at >= ?", toMicros(*from))
	}
	if to != nil {
		w.add("created_at < ?", toMicros(*to))
	}
	if after != nil {
		us := toMicros(after.CreatedAt)
		w.add("(created_at > ? OR (created_at = ? AND id > ?))", us, us, after.ID)
	}
	rows, err := q.query(ctx, `SELECT `+ledgerPostingCols+` FROM ledger_postings`+w.sql()+
		` ORDER BY created_at, id LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, err
	}
	var out []LedgerPosting
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		p, err := scanLedgerPosting(r)
		out = append(out, p)
		return err
	})
	return out, err
}

// LedgerCounts counts a tenant's ledger rows.
type LedgerCounts struct {
	Accounts, Transfers, Postings int64
	BalanceVersions               int64 // sum of the balance rows' versions: moves on every balance change
}

// CountLedgerRows counts the tenant's ledger rows (an audit: it reads them all).
func (q Q) CountLedgerRows(ctx context.Context, t Tenant) (LedgerCounts, error) {
	var c LedgerCounts
	err := q.queryRow(ctx, `SELECT
			(SELECT COUNT(*) FROM ledger_accounts WHERE platform_id = ? AND env = ?),
			(SELECT COUNT(*) FROM ledger_transfers WHERE platform_id = ? AND env = ?),
			(SELECT COUNT(*) FROM ledger_postings WHERE platform_id = ? AND env = ?),
			(SELECT CAST(COALESCE(SUM(version), 0) AS BIGINT) FROM ledger_balances WHERE platform_id = ? AND env = ?)`,
		t.PlatformID, t.Env, t.PlatformID, t.Env, t.PlatformID, t.Env, t.PlatformID, t.Env).
		Scan(&c.Accounts, &c.Transfers, &c.Postings, &c.BalanceVersions)
	return c, classify(err)
}

// LedgerUnbalancedTransfers lists the tenant's transfers whose postings do
// not sum to zero in some currency (an audit: it reads every posting).
func (q Q) LedgerUnbalancedTransfers(ctx context.Context, t Tenant) ([]string, error) {
	return q.ledgerIDs(ctx, `SELECT DISTINCT transfer_id FROM (SELECT transfer_id FROM ledger_postings
		WHERE platform_id = ? AND env = ? GROUP BY transfer_id, currency HAVING SUM(amount) <> 0) u ORDER BY transfer_id`,
		t.PlatformID, t.Env)
}

// LedgerPostingsWithoutTransfer lists the transfers the tenant's postings
// name that have no row (an audit). On PostgreSQL no foreign key forbids
// such a posting (migration 0061); the ledger writes a posting only in the
// statement that writes its transfer.
func (q Q) LedgerPostingsWithoutTransfer(ctx context.Context, t Tenant) ([]string, error) {
	return q.ledgerIDs(ctx, `SELECT DISTINCT p.transfer_id FROM ledger_postings p
		LEFT JOIN ledger_transfers t ON t.id = p.transfer_id
		WHERE p.platform_id = ? AND p.env = ? AND t.id IS NULL ORDER BY p.transfer_id`,
		t.PlatformID, t.Env)
}

// ledgerIDs runs an audit query that selects one id per row.
func (q Q) ledgerIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		out = append(out, id)
		return err
	})
	return out, err
}

// LedgerPostingCount is a transfer's number of postings.
type LedgerPostingCount struct {
	TransferID string
	Kind       string
	Postings   int
}

// LedgerPostingCounts returns every transfer of the tenant with its number
// of postings (an audit).
func (q Q) LedgerPostingCounts(ctx context.Context, t Tenant) ([]LedgerPostingCount, error) {
	rows, err := q.query(ctx, `SELECT t.id, t.kind, COUNT(p.id) FROM ledger_transfers t
		LEFT JOIN ledger_postings p ON p.transfer_id = t.id
		WHERE t.platform_id = ? AND t.env = ? GROUP BY t.id, t.kind ORDER BY t.id`,
		t.PlatformID, t.Env)
	if err != nil {
		return nil, err
	}
	var out []LedgerPostingCount
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var c LedgerPostingCount
		err := r.Scan(&c.TransferID, &c.Kind, &c.Postings)
		out = append(out, c)
		return err
	})
	return out, err
}

// ledgerEachRow calls fn for every row and closes rows.
func ledgerEachRow(rows *sql.Rows, fn func(*sql.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return classify(err)
		}
	}
	return classify(rows.Err())
}

// ledgerDedupe returns the distinct non-empty strings of ss, sorted, in a new slice.
func ledgerDedupe(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return out[:n]
}

func ledgerChunks(ss []string) [][]string {
	var out [][]string
	for start := 0; start < len(ss); start += ledgerChunk {
		out = append(out, ss[start:min(start+ledgerChunk, len(ss))])
	}
	return out
}

func ledgerAnys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func ledgerPlaceholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// ledgerRowsOf is "(?, …), (?, …)" for n rows of cols values.
func ledgerRowsOf(n, cols int) string {
	row := "(" + ledgerPlaceholders(cols) + ")"
	var b strings.Builder
	b.Grow(n * (len(row) + 2))
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	return b.String()
}

// eachInChunks runs one query per chunk of ids (at most ledgerChunk, the
// engines' bound on placeholders): build returns the query for an IN list of
// placeholders and the arguments before the ids; fn sees every row.
func (q Q) eachInChunks(ctx context.Context, ids []string, build func(in string) (string, []any), fn func(*sql.Rows) error) error {
	for _, chunk := range ledgerChunks(ids) {
		query, args := build(ledgerPlaceholders(len(chunk)))
		rows, err := q.query(ctx, query, append(args, ledgerAnys(chunk)...)...)
		if err != nil {
			return err
		}
		if err := ledgerEachRow(rows, fn); err != nil {
			return err
		}
	}
	return nil
}

// collectByID is eachInChunks for the common case: one row per id, scanned
// by scan and kept under key(row).
func collectByID[T any](ctx context.Context, q Q, ids []string, build func(in string) (string, []any),
	scan func(interface{ Scan(...any) error }) (T, error), key func(T) string) (map[string]T, error) {
	out := make(map[string]T, len(ids))
	err := q.eachInChunks(ctx, ids, build, func(r *sql.Rows) error {
		v, err := scan(r)
		out[key(v)] = v
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
