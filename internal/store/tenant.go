package store

import (
	"database/sql"
	"strings"
	"time"
)

// Environments a tenant's objects live in.
const (
	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// Tenant scopes every query: a platform and one of its environments.
type Tenant struct {
	PlatformID string
	Env        string
}

// where builds a conjunction of conditions with their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// timeRange adds inclusive bounds on a microsecond column.
func (w *where) timeRange(col string, from, to *time.Time) {
	if from != nil {
		w.add(col+" >= ?", toMicros(*from))
	}
	if to != nil {
		w.add(col+" <= ?", toMicros(*to))
	}
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// affectedOne turns "no row matched" into ErrNotFound.
func affectedOne(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}
