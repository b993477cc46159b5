package store

import "strings"

// balanceCache holds, for one batch of the batching committer, the balance
// rows the batch locked (PostgreSQL) or read (SQLite) when it began
// (lockDeclared), kept equal to what the transaction holds as its fns move
// them. A fn's LockLedgerAccounts then answers from it instead of locking
// and reading the same rows again: one statement fewer per transfer of a
// batch.
//
// It stays exact because the rows are the batch's (on PostgreSQL locked FOR
// UPDATE before any fn ran, and a savepoint rollback keeps locks taken
// before the savepoint; on SQLite the one writer's since BEGIN),
// and every change to them in the transaction either goes through
// WriteLedger, which applies its own deltas here, or empties the cache: any
// statement naming ledger_balances that is not a plain SELECT (noteStatement),
// a write of WriteLedger that did not fully apply, and a fn's rollback to its
// savepoint. An empty cache answers nothing, so LockLedgerAccounts reads the
// rows as it does without one. Were it ever stale, WriteLedger's update would
// find another version and apply nothing (its versions come from here), so a
// transfer could fail but no balance could be wrong.
//
// One batch runs its fns one after another on one goroutine: no lock.
type balanceCache struct {
	rows map[balanceKey]LockedLedgerAccount
}

type balanceKey struct {
	tenant Tenant
	id     string
}

func newBalanceCache() *balanceCache {
	return &balanceCache{rows: map[balanceKey]LockedLedgerAccount{}}
}

func (c *balanceCache) put(t Tenant, a LockedLedgerAccount) {
	b := *a.Balance
	a.Balance = &b
	c.rows[balanceKey{t, a.ID}] = a
}

// get returns copies of the tenant's rows of ids, or false unless it holds
// every one.
func (c *balanceCache) get(t Tenant, ids []string) (map[string]LockedLedgerAccount, bool) {
	if c == nil || len(c.rows) == 0 || len(ids) == 0 {
		return nil, false
	}
	out := make(map[string]LockedLedgerAccount, len(ids))
	for _, id := range ids {
		a, ok := c.rows[balanceKey{t, id}]
		if !ok {
			return nil, false
		}
		b := *a.Balance
		a.Balance = &b
		out[id] = a
	}
	return out, true
}

// clear forgets every row: from then on LockLedgerAccounts reads them.
func (c *balanceCache) clear() {
	if c != nil {
		clear(c.rows)
	}
}

// noteStatement empties the cache before a statement that may change
// balance rows outside WriteLedger.
func (c *balanceCache) noteStatement(query string) {
	if c == nil || len(c.rows) == 0 || !strings.Contains(query, "ledger_balances") {
		return
	}
	if !strings.HasPrefix(strings.TrimSpace(query), "SELECT") {
		c.clear()
	}
}

// holds reports whether the cache has the tenant's row of every change at
// the version the change was decided on.
func (c *balanceCache) holds(t Tenant, changes []LedgerBalanceChange) bool {
	if c == nil {
		return false
	}
	for _, ch := range changes {
		a, ok := c.rows[balanceKey{t, ch.AccountID}]
		if !ok || a.Balance.Version != ch.Version {
			return false
		}
	}
	return true
}

// applied records changes WriteLedger made at `at`.
func (c *balanceCache) applied(t Tenant, changes []LedgerBalanceChange, atMicros int64) {
	if c == nil || len(c.rows) == 0 {
		return
	}
	for _, ch := range changes {
		k := balanceKey{t, ch.AccountID}
		a, ok := c.rows[k]
		if !ok {
			continue
		}
		if a.Balance.Version != ch.Version {
			c.clear() // not the version it held: trust nothing
			return
		}
		a.Balance.Posted += ch.Posted
		a.Balance.PendingDebits += ch.PendingDebits
		a.Balance.PendingCredits += ch.PendingCredits
		a.Balance.Version++
		a.Balance.UpdatedAt = fromMicros(atMicros)
	}
}

// balances is the batch's balance cache, nil outside such a batch.
func (q Q) balances() *balanceCache {
	if q.outbox == nil {
		return nil
	}
	return q.outbox.balances
}
