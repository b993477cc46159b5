package store

import (
	"context"
	"database/sql"
	"sync"
)

// Prepared statements for SQLite. modernc's driver parses every query string
// it is handed; under transfer load that parsing was a third of the server's
// CPU (docs/benchmarks.md). database/sql keeps a statement prepared on each
// connection once asked to, so stmtCache asks once per query text and pool.
// PostgreSQL needs none of this: pgx caches statements per connection.
type stmtCache struct {
	pool *sql.DB
	mu   sync.RWMutex
	m    map[string]*sql.Stmt
}

// maxCachedStmts bounds the cache: queries built with a variable number of
// placeholders (IN lists, optional filters) could otherwise grow it forever.
// Past the bound, queries run unprepared, as before.
const maxCachedStmts = 1024

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
}

// get returns query prepared on the pool, or nil when it cannot be cached
// (yet). Inside a transaction (inTx) it never waits to prepare: SQLite's
// write pool has one connection, which that very transaction holds, so the
// statement is prepared in the background once the connection is free, and
// this call runs unprepared.
func (c *stmtCache) get(query string, inTx bool) *sql.Stmt {
	c.mu.RLock()
	st, ok := c.m[query]
	c.mu.RUnlock()
	if ok {
		return st
	}
	c.mu.Lock()
	if st, ok := c.m[query]; ok || len(c.m) >= maxCachedStmts {
		c.mu.Unlock()
		return st
	}
	if inTx {
		c.m[query] = nil // pending: one background preparation per query
		c.mu.Unlock()
		go c.prepare(query)
		return nil
	}
	c.mu.Unlock()
	return c.prepare(query)
}

func (c *stmtCache) prepare(query string) *sql.Stmt {
	// Not the request's context: the statement outlives the request.
	st, err := c.pool.PrepareContext(context.Background(), query)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		// Left nil: the unprepared call reports the error, and a query
		// that does not prepare is not tried again.
		c.m[query] = nil
		return nil
	}
	if old := c.m[query]; old != nil {
		_ = st.Close() // prepared twice meanwhile; keep the first
		return old
	}
	c.m[query] = st
	return st
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		if st != nil {
			_ = st.Close()
		}
		delete(c.m, q)
	}
}

// prepared returns query as a statement ready to run on q, or nil.
func (q Q) prepared(ctx context.Context, query string) *sql.Stmt {
	if q.stmts == nil {
		return nil
	}
	st := q.stmts.get(query, q.tx != nil)
	if st == nil || q.tx == nil {
		return st
	}
	if txst, ok := q.txStmts[query]; ok {
		return txst
	}
	txst := q.tx.StmtContext(ctx, st)
	q.txStmts[query] = txst
	return txst
}
