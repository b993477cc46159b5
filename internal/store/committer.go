package store

import (
	"cmp"
	"context"
	"slices"
	"strings"
)

// The batching committer's lock order. A batch (InBatchTx) holds every row
// its fns lock until its one commit, so two batches on one PostgreSQL (two
// workers of a node, or two nodes) that each lock balance rows as their fns
// reach them deadlock as soon as each holds a row the other's next fn
// wants; PostgreSQL then breaks the cycle only after deadlock_timeout (the
// sixth session measured 1 s stalls). So a caller declares, with the
// context it passes to InBatchTx, the balance rows its fn will move
// (WithLedgerLocks), and the batch locks all of its fns' rows in one
// statement, in ascending account-id order, right after it begins: the one
// order LockLedgerAccounts also uses, so no two lockers can wait for each
// other in a cycle. When a fn later locks its rows (ledger.Apply through
// LockLedgerAccounts) they are already the batch's and nothing waits. A fn
// that moves a row it did not declare still works; it only gives up the
// guarantee, and a deadlock then fails its batch, whose fns run again alone.

// declaredLock is one tenant's balance rows a request will move.
type declaredLock struct {
	tenant Tenant
	ids    []string
}

type locksKey struct{}

// WithLedgerLocks declares that the InBatchTx called with the returned
// context moves the balance rows of the tenant's ledger accounts ids (hot
// accounts have none and may be left out).
func WithLedgerLocks(ctx context.Context, t Tenant, ids ...string) context.Context {
	prev := declaredLocks(ctx)
	locks := append(prev[:len(prev):len(prev)], declaredLock{tenant: t, ids: ids})
	return context.WithValue(ctx, locksKey{}, locks)
}

func declaredLocks(ctx context.Context) []declaredLock {
	l, _ := ctx.Value(locksKey{}).([]declaredLock)
	return l
}

// declaredVolume is a daily-volume add a request's fn will make.
type declaredVolume struct {
	tenant     Tenant
	usd, limit int64
}

type volumeAddsKey struct{}

// WithDailyVolumeAdd declares that the InBatchTx called with the returned
// context adds usd to the tenant's volume of the current UTC day under
// limit (AddDailyVolume). The batch then locks, after the balance rows and
// in the same statement, the day's shard row its fns' adds go to, when
// their sum fits the shard's share (and no shard is over its share), and
// its fns' adds to that row are decided in memory and written at the
// commit (volumeCache). Declaring nothing, or a wrong amount, only loses
// that: AddDailyVolume decides each add as it would without it.
func WithDailyVolumeAdd(ctx context.Context, t Tenant, usd, limit int64) context.Context {
	prev := declaredVolumes(ctx)
	adds := append(prev[:len(prev):len(prev)], declaredVolume{tenant: t, usd: usd, limit: limit})
	return context.WithValue(ctx, volumeAddsKey{}, adds)
}

func declaredVolumes(ctx context.Context) []declaredVolume {
	v, _ := ctx.Value(volumeAddsKey{}).([]declaredVolume)
	return v
}

// lockDeclared locks, on PostgreSQL, the balance rows the batch's requests
// declared, in account-id order, and then the daily-volume shard rows their
// declared adds go to (declaredShards), in one statement, and returns them
// as the batch's balance and volume caches (balance_cache.go, volumes.go).
// SQLite has one writer, which holds the database from the batch's BEGIN:
// there the declared balance rows are read, not locked (readDeclaredRows).
//
// A request running alone after a failed commit (alone) takes none: its
// fn's own LockLedgerAccounts takes the rows in the same order, and it
// writes them at once. Any other batch, one request or more, decides from
// the caches and queues its ledger and volume writes for the commit
// (at_commit.go).
//
// It begins bt's transaction: on PostgreSQL the lock statement goes in
// BEGIN's round trip (batchTx).
func (q Q) lockDeclared(ctx context.Context, bt *batchTx, batch []*batchReq, alone bool) (*balanceCache, *volumeCache,
	error) {
	if alone {
		return nil, nil, bt.begin(ctx, nil)
	}
	rows, balances := declaredRows(batch), newBalanceCache()
	var shards []shardLock
	var volumes *volumeCache // SQLite caches no shard: each add is decided as it is made
	if q.engine == Postgres {
		shards, volumes = q.declaredShards(batch), newVolumeCache()
	}
	if len(rows) == 0 && len(shards) == 0 {
		return balances, volumes, bt.begin(ctx, nil)
	}
	var first pipelined
	if q.engine == Postgres {
		first = q.lockDeclaredRows(rows, shards, balances, volumes)
	} else {
		first = readDeclaredRows(rows, balances)
	}
	if err := bt.begin(ctx, &first); err != nil {
		return nil, nil, err
	}
	return balances, volumes, nil
}

// readDeclaredRows is lockDeclaredRows on SQLite, whose one writer holds the
// database from the batch's BEGIN: the statement reads rows, with their
// accounts, into balances without locking them.
func readDeclaredRows(rows []declaredRow, balances *balanceCache) pipelined {
	values := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(rows)), ", ")
	args := make([]any, 0, 3*len(rows))
	for _, r := range rows {
		args = append(args, r.platformID, r.env, r.id)
	}
	return pipelined{sql: `WITH k (platform_id, env, id) AS (VALUES ` + values + `)
		SELECT FALSE, ` + declaredBalanceCols + `
		FROM k JOIN ledger_accounts a ON a.platform_id = k.platform_id AND a.env = k.env AND a.id = k.id
		JOIN ledger_balances b ON b.platform_id = k.platform_id AND b.env = k.env AND b.account_id = k.id`,
		args: args, scan: declaredScan(nil, balances, nil)}
}

// declaredBalanceCols are the columns of a declared balance row, with its
// account's, as declaredScan reads them after the shard flag.
const declaredBalanceCols = `b.platform_id, b.env, a.id, a.currency, a.kind, a.hot, b.posted,
		b.pending_debits, b.pending_credits, b.floor_zero, b.version, b.updated_at, b.closed`

// shardLock is a daily-volume shard row a batch locks when it begins: the
// row its fns' declared adds go to, with their sum and the shares.
type shardLock struct {
	key  volumeShardKey
	add  int64
	caps [volumeShards]int64
}

// declaredShards picks, for each tenant the batch's requests declared adds
// for, the shard of the current UTC day their adds go to (the batch's turn,
// pickVolumeShard, which AddDailyVolume then uses too), and keeps it if the
// adds' sum fits that shard's share. A tenant whose adds name different
// limits (one changed between two requests) locks nothing. The result is
// sorted by tenant: the order in which the shard rows are locked.
func (q Q) declaredShards(batch []*batchReq) []shardLock {
	day := utcDay(q.Now())
	sums := map[Tenant]*shardLock{}
	var tenants []Tenant
	for _, r := range batch {
		for _, v := range r.volumes {
			l, ok := sums[v.tenant]
			if !ok {
				l = &shardLock{key: volumeShardKey{volumeKey: volumeKey{v.tenant.PlatformID, v.tenant.Env, day}},
					caps: volumeShares(max(v.limit, 0))}
				sums[v.tenant] = l
				tenants = append(tenants, v.tenant)
			}
			if v.usd < 0 || v.usd > v.limit || l.caps != volumeShares(v.limit) {
				l.add = -1 // not locked
			} else if l.add >= 0 {
				l.add += v.usd
			}
		}
	}
	slices.SortFunc(tenants, func(a, b Tenant) int {
		return cmp.Or(cmp.Compare(a.PlatformID, b.PlatformID), cmp.Compare(a.Env, b.Env))
	})
	var out []shardLock
	for _, t := range tenants {
		l := sums[t]
		if l.add < 0 {
			continue
		}
		l.key.shard = q.pickVolumeShard(t, day)
		if l.add <= l.caps[l.key.shard] {
			out = append(out, *l)
		}
	}
	return out
}

// declaredRow is one balance row a request declared.
type declaredRow struct{ platformID, env, id string }

// declaredRows are the batch's declared rows, sorted by account id, without
// repeats.
func declaredRows(batch []*batchReq) []declaredRow {
	var rows []declaredRow
	for _, r := range batch {
		for _, l := range r.locks {
			for _, id := range l.ids {
				if id != "" {
					rows = append(rows, declaredRow{l.tenant.PlatformID, l.tenant.Env, id})
				}
			}
		}
	}
	slices.SortFunc(rows, func(a, b declaredRow) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.platformID, b.platformID), cmp.Compare(a.env, b.env))
	})
	return slices.Compact(rows)
}

// lockDeclaredRows is the statement that locks rows (in the ORDER BY's
// order: the row-lock step sits above the sort), whose scan puts them, with
// their accounts, in balances; then it locks the shard rows of shards that
// still have room for their adds (no shard of the day over its share: the
// fast path's condition, addVolumeFast), which go in volumes. Every list goes as arrays, so
// the statement's text is the same for every batch, however many rows it
// has (so it needs no chunks either): PostgreSQL plans it once per
// connection and keeps the plan, where a list of row values made a new
// text for every batch size and was planned again at every execution
// (0.4 ms a call, a third of its time).
//
// The lock order is every writer's: balance rows, then shard rows. The
// shard rows' scan waits for the balances' (its condition counts them, an
// InitPlan run before its first row). A shard row that another batch
// changed while this one waited, and that then has no room, is not
// returned but stays locked (PostgreSQL keeps the lock of a row that fails
// its re-check): the fn's add then runs the fast path's statement on a row
// the batch holds, and a spread after it may deadlock with another batch's,
// which PostgreSQL breaks by failing one of them (their fns run again);
// money and volume stay exact either way.
func (q Q) lockDeclaredRows(rows []declaredRow, shards []shardLock, balances *balanceCache,
	volumes *volumeCache) pipelined {
	platforms, envs, ids := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	for i, r := range rows {
		platforms[i], envs[i], ids[i] = r.platformID, r.env, r.id
	}
	args := append([]any{platforms, envs, ids}, shardArrays(shards)...)
	return pipelined{sql: q.rebind(lockDeclaredQuery), args: args, scan: declaredScan(shards, balances, volumes)}
}

// declaredScan puts a row of lockDeclaredQuery (or readDeclaredRows') in
// balances, or, a shard row, in volumes.
func declaredScan(shards []shardLock, balances *balanceCache, volumes *volumeCache) func(rowScanner) error {
	return func(r rowScanner) error {
		var shard bool
		var t Tenant
		var a LockedLedgerAccount
		var b LedgerBalance
		var updated int64
		if err := r.Scan(&shard, &t.PlatformID, &t.Env, &a.ID, &a.Currency, &a.Kind, &a.Hot, &b.Posted, &b.PendingDebits,
			&b.PendingCredits, &b.FloorZero, &b.Version, &updated, &a.Closed); err != nil {
			return err
		}
		if shard { // usd, day and shard in the posted, pending_debits and pending_credits columns
			key := volumeShardKey{volumeKey{t.PlatformID, t.Env, b.PendingDebits}, int(b.PendingCredits)}
			for _, l := range shards {
				if l.key == key {
					volumes.hold(key, b.Posted, l.caps)
				}
			}
			return nil
		}
		b.AccountID, b.UpdatedAt = a.ID, fromMicros(updated)
		a.Balance = &b
		balances.put(t, a)
		return nil
	}
}

// lockDeclaredQuery is lockDeclaredRows' statement: the balance rows (bl),
// then the shard rows (vl), as rows of one shape.
const lockDeclaredQuery = `WITH bl AS (SELECT ` + declaredBalanceCols + `
		FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[])) AS k (platform_id, env, id)
		JOIN ledger_accounts a ON a.platform_id = k.platform_id AND a.env = k.env AND a.id = k.id
		JOIN ledger_balances b ON b.platform_id = k.platform_id AND b.env = k.env AND b.account_id = k.id
		ORDER BY b.account_id FOR UPDATE OF b),
	vl AS (SELECT d.platform_id, d.env, d.day, d.shard, d.usd
		FROM unnest(CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS INTEGER[]), CAST(? AS BIGINT[]),
			CAST(? AS BIGINT[]), CAST(? AS BIGINT[]), CAST(? AS BIGINT[])) AS v (platform_id, env, day, shard, add, cap, cap0, capn)
		JOIN daily_volumes d ON d.platform_id = v.platform_id AND d.env = v.env AND d.day = v.day AND d.shard = v.shard
		WHERE (SELECT COUNT(*) FROM bl) >= 0 AND d.usd + v.add <= v.cap
		AND NOT EXISTS (SELECT 1 FROM daily_volumes o WHERE o.platform_id = v.platform_id AND o.env = v.env
			AND o.day = v.day AND o.usd > CASE WHEN o.shard = 0 THEN v.cap0 ELSE v.capn END)
		ORDER BY d.platform_id, d.env FOR UPDATE OF d)
	SELECT FALSE, bl.* FROM bl
	UNION ALL SELECT TRUE, platform_id, env, '', '', '', FALSE, usd, day, shard, FALSE, 0, 0, FALSE FROM vl`

// shardArrays are shards as lockDeclaredQuery's arrays.
func shardArrays(shards []shardLock) []any {
	n := len(shards)
	platforms, envs := make([]string, n), make([]string, n)
	days, adds, caps, cap0s, capns := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	nums := make([]int32, n)
	for i, l := range shards {
		platforms[i], envs[i], days[i], nums[i] = l.key.platformID, l.key.env, l.key.day, int32(l.key.shard)
		adds[i], caps[i], cap0s[i], capns[i] = l.add, l.caps[l.key.shard], l.caps[0], l.caps[1]
	}
	return []any{platforms, envs, days, nums, adds, caps, cap0s, capns}
}
