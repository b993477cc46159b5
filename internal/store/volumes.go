package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The daily volume limit (R-ERR-21) is checked and counted on every
// execution. One row per tenant and day would make it exact, but on
// PostgreSQL every transfer of the tenant would then queue on that row from
// its update to its commit. So the day is split into volumeShards rows, each
// allowed an equal share of the limit: an execution adds to one shard
// if it fits that shard's share (one conditional upsert, no wait on the
// others); only when it does not fit does it lock every shard, in shard
// order, and spread the amount over their remaining shares. No shard ever
// passes its share, so the day never passes the limit, however many
// executions run at once.
//
// Deadlocks: the spread takes the shard locks in one order, and it must not
// start while its transaction holds a shard lock out of that order. On
// PostgreSQL a fast-path UPDATE that waited behind another writer and then
// found the shard full keeps the row locked even though it changed nothing;
// a spread after it deadlocked with another spread. So on PostgreSQL the
// fast path runs inside a savepoint, and a fast path that changed nothing
// rolls back to it, which releases that lock, before spreading. (A
// transaction that adds volume twice, e.g. two executions sharing one group
// commit, may still hold a shard from its first add: the spread can then
// deadlock, PostgreSQL aborts one side and InTx/InBatchTx run it again.)
const volumeShards = 8

// volumeTurn picks the shard (turn.go). PostgreSQL's wait events showed
// the fast path's UPDATE as the commonest lock wait while the pick was
// random.
var volumeTurn = newTurn()

// volumeKey is a tenant's day.
type volumeKey struct {
	platformID, env string
	day             int64
}

// pickVolumeShard is the shard a fast-path add goes to: the next turn, the
// same one for every add of one transaction (a group commit's adds share
// it), so that a transaction holds at most one shard row before a spread,
// and two batches never wait for each other's shard rows in a cycle.
func (q Q) pickVolumeShard(t Tenant, day int64) int {
	if q.volumeShard == nil {
		return volumeTurn.next(volumeShards)
	}
	key := volumeKey{t.PlatformID, t.Env, day}
	k, ok := q.volumeShard[key]
	if !ok {
		k = volumeTurn.next(volumeShards)
		q.volumeShard[key] = k
	}
	return k
}

func utcDay(at time.Time) int64 { return toMicros(at) / int64(24*time.Hour/time.Microsecond) }

// volumeShares splits limit into the shards' shares (the remainder to shard
// 0).
func volumeShares(limit int64) [volumeShards]int64 {
	var caps [volumeShards]int64
	for i := range caps {
		caps[i] = limit / volumeShards
	}
	caps[0] += limit % volumeShards
	return caps
}

// DailyVolume is the tenant's executed USD volume (cents) on the UTC day
// containing at.
func (q Q) DailyVolume(ctx context.Context, t Tenant, at time.Time) (int64, error) {
	var used int64
	err := q.queryRow(ctx, `SELECT CAST(COALESCE(SUM(usd), 0) AS BIGINT) FROM daily_volumes
		WHERE platform_id = ? AND env = ? AND day = ?`, t.PlatformID, t.Env, utcDay(at)).Scan(&used)
	return used, classify(err)
}

// AddDailyVolume adds usd to the tenant's volume of the UTC day containing
// at, unless the day's total would pass limit: then it changes nothing and
// reports false. On PostgreSQL the shard rows it changed stay locked until
// the caller's transaction ends: call it last. Call it inside a
// transaction (it uses a savepoint on PostgreSQL).
func (q Q) AddDailyVolume(ctx context.Context, t Tenant, at time.Time, usd, limit int64) (bool, error) {
	if usd < 0 || usd > limit {
		return false, nil
	}
	day := utcDay(at)
	caps := volumeShares(limit)
	if k := q.pickVolumeShard(t, day); usd <= caps[k] {
		if q.queueVolume(t, day, k, usd, caps) {
			return true, nil
		}
		added, err := q.addVolumeFast(ctx, t, day, k, usd, caps)
		if err != nil || added {
			return added, err
		}
	}
	return q.addVolumeSpread(ctx, t, day, usd, caps)
}

// addVolumeFast adds usd to shard k if it fits the shard's share. The day's
// first execution finds no rows: the spread creates them.
//
// A shard can be over its share only if the limit was lowered during the
// day; then the shares no longer add up to a bound, so the fast path stands
// aside (NOT EXISTS) and the spread, which counts the whole day, decides.
//
// On PostgreSQL the UPDATE runs in a savepoint, rolled back when it changed
// nothing: an UPDATE that waited for another writer's lock on the row and
// then failed its re-check keeps the row locked, and the spread that
// follows must hold no shard out of order (see volumeShards).
func (q Q) addVolumeFast(ctx context.Context, t Tenant, day int64, k int, usd int64, caps [volumeShards]int64) (bool, error) {
	pg := q.engine == Postgres
	if pg {
		// Queued writes of these rows go in first, outside the savepoint:
		// a rollback to it must not undo writes that have left the queue.
		if err := q.flushFor(ctx, fastVolumeAdd); err != nil {
			return false, err
		}
		if _, err := q.exec(ctx, "SAVEPOINT volume_fast"); err != nil {
			return false, err
		}
	}
	var after int64
	err := q.queryRow(ctx, fastVolumeAdd, usd, t.PlatformID, t.Env, day, k, usd, caps[k], t.PlatformID, t.Env, day, caps[0], caps[1]).Scan(&after)
	n := int64(1)
	if errors.Is(err, sql.ErrNoRows) {
		n, err = 0, nil
	}
	if err != nil {
		return false, classify(err)
	}
	// An add that changed nothing rolls back, which releases the row lock.
	// One that did leaves its savepoint open rather than spend a round trip
	// on releasing it: the savepoint is released, or rolled back, with the
	// one the batch opened around the fn, or committed with the transaction.
	// A later add opens a savepoint of the same name, which its own rollback
	// names (the latest of that name), after writing the queue (above).
	if pg && n != 1 {
		if _, err := q.exec(ctx, "ROLLBACK TO SAVEPOINT volume_fast"); err != nil {
			return false, err
		}
	}
	if n == 1 {
		q.volumes().hold(volumeShardKey{volumeKey{t.PlatformID, t.Env, day}, k}, after, caps)
	}
	return n == 1, nil
}

// fastVolumeAdd adds to one shard if the add fits its share and no shard
// is over its share.
const fastVolumeAdd = `UPDATE daily_volumes SET usd = usd + ?
	WHERE platform_id = ? AND env = ? AND day = ? AND shard = ? AND usd + ? <= ?
	AND NOT EXISTS (SELECT 1 FROM daily_volumes o WHERE o.platform_id = ? AND o.env = ? AND o.day = ?
		AND o.usd > CASE WHEN o.shard = 0 THEN CAST(? AS BIGINT) ELSE CAST(? AS BIGINT) END)
	RETURNING usd`

// addVolumeSpread locks all of the day's shards in order and spreads usd
// over their remaining shares.
func (q Q) addVolumeSpread(ctx context.Context, t Tenant, day, usd int64, caps [volumeShards]int64) (bool, error) {
	values := make([]string, volumeShards)
	args := make([]any, 0, 4*volumeShards)
	for k := range volumeShards {
		values[k] = "(?, ?, ?, ?, 0)"
		args = append(args, t.PlatformID, t.Env, day, k)
	}
	if _, err := q.exec(ctx, `INSERT INTO daily_volumes (platform_id, env, day, shard, usd) VALUES `+
		strings.Join(values, ", ")+` ON CONFLICT (platform_id, env, day, shard) DO NOTHING`, args...); err != nil {
		return false, err
	}
	rows, err := q.query(ctx, `SELECT shard, usd FROM daily_volumes WHERE platform_id = ? AND env = ? AND day = ?
		ORDER BY shard`+q.forUpdate(), t.PlatformID, t.Env, day)
	if err != nil {
		return false, err
	}
	var room [volumeShards]int64
	var free, total int64
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var k int
		var used int64
		if err := r.Scan(&k, &used); err != nil {
			return err
		}
		total += used
		if k >= 0 && k < volumeShards {
			room[k] = max(0, caps[k]-used)
			free += room[k]
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// The shares' room overstates what is left when a shard is over its
	// share (a lowered limit): the day's total decides.
	free = min(free, caps[0]+caps[1]*(volumeShards-1)-total)
	if usd > free {
		return false, nil
	}
	for k := 0; usd > 0; k++ {
		add := min(usd, room[k])
		if add == 0 {
			continue
		}
		if _, err := q.exec(ctx, `UPDATE daily_volumes SET usd = usd + ? WHERE platform_id = ? AND env = ? AND day = ? AND shard = ?`,
			add, t.PlatformID, t.Env, day, k); err != nil {
			return false, err
		}
		usd -= add
	}
	return true, nil
}

// ReleaseDailyVolume takes usd back off the tenant's volume of the UTC day
// containing at (the day it was added): an execution whose payout failed or
// was cancelled before it left. It locks the day's shards in shard order,
// as the spread does, and takes from the last shards first; the day's total
// never goes below zero. Call it last in the transaction, like
// AddDailyVolume.
func (q Q) ReleaseDailyVolume(ctx context.Context, t Tenant, at time.Time, usd int64) error {
	if usd <= 0 {
		return nil
	}
	day := utcDay(at)
	rows, err := q.query(ctx, `SELECT shard, usd FROM daily_volumes WHERE platform_id = ? AND env = ? AND day = ?
		ORDER BY shard`+q.forUpdate(), t.PlatformID, t.Env, day)
	if err != nil {
		return err
	}
	var used [volumeShards]int64
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		var k int
		var n int64
		if err := r.Scan(&k, &n); err != nil {
			return err
		}
		if k >= 0 && k < volumeShards {
			used[k] = n
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k := volumeShards - 1; k >= 0 && usd > 0; k-- {
		take := min(usd, used[k])
		if take <= 0 {
			continue
		}
		if _, err := q.exec(ctx, `UPDATE daily_volumes SET usd = usd - ? WHERE platform_id = ? AND env = ? AND day = ? AND shard = ?`,
			take, t.PlatformID, t.Env, day, k); err != nil {
			return err
		}
		usd -= take
	}
	return nil
}

// DailyVolumeLimit returns the tenant's own daily volume limit in US cents,
// from memory when it was read recently; ok is false when the tenant has
// none (the service's default applies). Inside a transaction, call it on
// the Tx: on PostgreSQL reads and transactions share one pool, and a
// transaction waiting for a second connection can wait forever.
func (q Q) DailyVolumeLimit(ctx context.Context, t Tenant) (usd int64, ok bool, err error) {
	load := func(ctx context.Context) (int64, error) {
		var usd int64
		err := q.queryRow(ctx, `SELECT usd FROM daily_volume_limits WHERE platform_id = ? AND env = ?`,
			t.PlatformID, t.Env).Scan(&usd)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return usd, classify(err)
	}
	var v int64
	if q.settings == nil {
		v, err = load(ctx)
	} else {
		v, err = get(ctx, q.settings, settingKey{kind: settingVolumeLimit, tenant: t}, load)
	}
	return v, v > 0, err
}

// SetDailyVolumeLimit sets the tenant's daily volume limit in US cents;
// 0 removes it, so the default applies again.
func (q Q) SetDailyVolumeLimit(ctx context.Context, t Tenant, usd int64) error {
	if usd < 0 {
		return fmt.Errorf("store: negative daily volume limit %d", usd)
	}
	defer q.changed(settingKey{kind: settingVolumeLimit, tenant: t})
	if usd == 0 {
		_, err := q.exec(ctx, `DELETE FROM daily_volume_limits WHERE platform_id = ? AND env = ?`, t.PlatformID, t.Env)
		return err
	}
	_, err := q.exec(ctx, `INSERT INTO daily_volume_limits (platform_id, env, usd, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (platform_id, env) DO UPDATE SET usd = excluded.usd, updated_at = excluded.updated_at`,
		t.PlatformID, t.Env, usd, toMicros(q.Now()))
	return err
}

// volumeCache holds, for a batch on PostgreSQL (not a request alone), the
// daily-volume shard rows the batch locked when it began (its requests
// declared adds: WithDailyVolumeAdd, lockDeclared) or added to, and so
// holds locked until its commit, with what they hold in its transaction.
// An add of the batch to such a row is decided here and queued
// (queueVolume, at_commit.go) instead of sent.
// It stays exact like the balance cache: any other statement naming
// daily_volumes, and a fn's rollback to its savepoint (which may undo the
// add that locked a row), empty it.
type volumeCache struct {
	rows map[volumeShardKey]heldVolume
}

type volumeShardKey struct {
	volumeKey
	shard int
}

// heldVolume is a held shard row's usd in the batch's transaction, and the
// shares it was added under.
type heldVolume struct {
	usd  int64
	caps [volumeShards]int64
}

func newVolumeCache() *volumeCache { return &volumeCache{rows: map[volumeShardKey]heldVolume{}} }

// volumes is the batch's volume cache, nil outside a batch and for a
// request running alone.
func (q Q) volumes() *volumeCache {
	if q.outbox == nil {
		return nil
	}
	return q.outbox.volumes
}

// hold records that the batch holds row k, at usd, under the shares caps
// (a fast-path add left it there, or lockDeclared locked it).
func (c *volumeCache) hold(k volumeShardKey, usd int64, caps [volumeShards]int64) {
	if c != nil {
		c.rows[k] = heldVolume{usd: usd, caps: caps}
	}
}

func (c *volumeCache) clear() {
	if c != nil {
		clear(c.rows)
	}
}

// noteStatement empties the cache before a statement naming daily_volumes.
func (c *volumeCache) noteStatement(query string) {
	if c != nil && len(c.rows) > 0 && strings.Contains(query, "daily_volumes") {
		c.clear()
	}
}

// queueVolume adds usd to shard k of the day, if the batch holds that row
// under the same shares and the add fits the shard's share, as a queued
// write, and reports whether it did. The fast path would have added it; the
// row being the batch's, no one else can have changed it.
func (q Q) queueVolume(t Tenant, day int64, k int, usd int64, caps [volumeShards]int64) bool {
	c := q.volumes()
	if c == nil || !q.outbox.shared {
		return false
	}
	key := volumeShardKey{volumeKey{t.PlatformID, t.Env, day}, k}
	h, ok := c.rows[key]
	if !ok || h.caps != caps || h.usd+usd > caps[k] {
		return false
	}
	q.outbox.writes = append(q.outbox.writes, statement{volume: &queuedVolume{key: key, before: h.usd, usd: usd}})
	h.usd += usd
	c.rows[key] = h
	return true
}
