package store

import (
	"context"
	"slices"
	"sync/atomic"
)

// A request's credential statement reads ahead (issue 23: fewer round
// trips per transfer). A route that records its Idempotency-Key in its
// transaction asks next whether the key is taken, and POST /quotes reads
// the internal accounts its body names, with their owners, right after
// authenticating; both questions are about the token's tenant, so the
// statement that finds the token answers them too, and the request saves
// a statement and a round trip for each. What it reads is what the later
// read would have found a moment later: both are reads outside any
// transaction, and the transaction that acts on them decides every race
// as before.

// ReadAhead is what a credential statement reads besides the token
// (TokenByClientIDSeeing).
type ReadAhead struct {
	// Key is the request's Idempotency-Key ("": none to look for).
	Key string
	// AccountIDs are internal account ids the request names. Of them, the
	// token's tenant's accounts with live owners are read with their
	// owners and agreements, as InternalAccountsWithOwners reads them.
	AccountIDs []string
}

// readAheadMaxAccounts bounds AccountIDs: more are not read ahead.
const readAheadMaxAccounts = 8

// Seen is what a ReadAhead found.
type Seen struct {
	// Key reports whether the token's tenant holds the Idempotency-Key.
	Key bool
	// Accounts is nil when no accounts were read ahead; WithAccountsRead
	// puts it where InternalAccountsWithOwners finds it.
	Accounts *AccountsRead
}

// AccountsRead is an InternalAccountsWithOwners answer read ahead: it
// answers that call once, for the same tenant and ids, outside a
// transaction (readAheadFor).
type AccountsRead struct {
	tenant   Tenant
	ids      []string // as ledgerDedupe leaves them
	accounts map[string]InternalAccount
	owners   map[string]AccountOwner
	used     atomic.Bool
}

type accountsReadKey struct{}

// WithAccountsRead returns ctx carrying r. With r nil it carries none: a
// request made in-process from inside another never takes that request's
// read-ahead.
func WithAccountsRead(ctx context.Context, r *AccountsRead) context.Context {
	if r == nil && ctx.Value(accountsReadKey{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, accountsReadKey{}, r)
}

// ReadAheadStats counts accounts read ahead by credential statements and
// the reads they answered.
type ReadAheadStats struct {
	Made, Used int64
}

type readAheadCounts struct {
	made, used atomic.Int64
}

// ReadAheadStats reports the database's read-ahead counts.
func (db *DB) ReadAheadStats() ReadAheadStats {
	return ReadAheadStats{Made: db.aheads.made.Load(), Used: db.aheads.used.Load()}
}

// readAheadFor returns ctx's read-ahead if it answers
// InternalAccountsWithOwners(t, ids) here: not inside a transaction (whose
// reads see its own writes and snapshot), for the same tenant and ids, and
// not used before.
func (q Q) readAheadFor(ctx context.Context, t Tenant, ids []string) (*AccountsRead, bool) {
	if q.outbox != nil || q.tx != nil {
		return nil, false
	}
	r, _ := ctx.Value(accountsReadKey{}).(*AccountsRead)
	if r == nil || r.tenant != t || !slices.Equal(r.ids, ids) || !r.used.CompareAndSwap(false, true) {
		return nil, false
	}
	if q.aheads != nil {
		q.aheads.used.Add(1)
	}
	return r, true
}

// TokenByClientIDSeeing is TokenByClientID that also answers ahead, in
// the same statement: whether the token's tenant holds ahead.Key, and
// that tenant's internal accounts among ahead.AccountIDs with their owners.
func (q Q) TokenByClientIDSeeing(ctx context.Context, clientID string, ahead ReadAhead) (Token, Seen, error) {
	ids := ledgerDedupe(ahead.AccountIDs)
	if len(ids) == 0 || len(ids) > readAheadMaxAccounts {
		var seen Seen
		t, err := scanToken(tailScan{row: q.queryRow(ctx, `SELECT `+tokenCols+`, `+keyTaken("api_tokens")+`
			FROM api_tokens WHERE client_id = ?`, ahead.Key, clientID), tail: []any{&seen.Key}})
		return t, seen, err
	}
	rows, err := q.query(ctx, `SELECT `+tokenColsT+`, `+keyTaken("t")+`, `+ownedAccountCols+`
		FROM api_tokens t LEFT JOIN (internal_accounts ia `+ownedAccountJoins+`)
			ON ia.platform_id = t.platform_id AND ia.env = t.env AND ia.id IN (`+ledgerPlaceholders(len(ids))+`)
			AND `+liveOwnedAccount+`
		WHERE t.client_id = ?`,
		append(append([]any{ahead.Key}, ledgerAnys(ids)...), clientID)...)
	if err != nil {
		return Token{}, Seen{}, err
	}
	var tok Token
	var seen Seen
	got, found := newOwnedAccounts(), false
	err = eachRow(rows, func(r rowScanner) error {
		found = true
		return got.add(tokenThen{row: r, tok: &tok, seen: &seen.Key})
	})
	switch {
	case err != nil:
		return Token{}, Seen{}, err
	case !found:
		return Token{}, Seen{}, ErrNotFound
	}
	seen.Accounts = &AccountsRead{tenant: Tenant{PlatformID: tok.PlatformID, Env: tok.Env}, ids: ids,
		accounts: got.accounts, owners: got.owners}
	if q.aheads != nil {
		q.aheads.made.Add(1)
	}
	return tok, seen, nil
}

// keyTaken is the EXISTS that reports whether the tenant of the token row
// tokens holds the Idempotency-Key given as its parameter.
func keyTaken(tokens string) string {
	return `EXISTS (SELECT 1 FROM idempotency_keys k
		WHERE k.platform_id = ` + tokens + `.platform_id AND k.env = ` + tokens + `.env AND k.idem_key = ?)`
}

// tokenColsT is tokenCols qualified by the alias t.
var tokenColsT = qualifiedCols("t", tokenCols)

// tokenThen is a row whose Scan reads a token's columns and the key's
// EXISTS first, then the caller's destinations.
type tokenThen struct {
	row  rowScanner
	tok  *Token
	seen *bool
}

func (w tokenThen) Scan(dest ...any) error {
	var err error
	*w.tok, err = scanToken(tailScan{row: w.row, tail: append([]any{w.seen}, dest...)})
	return err
}
