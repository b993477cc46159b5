package accounts

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // America/Chicago on machines without a zoneinfo database

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Statements (Part B "Periodic statements").
//
// A statement is read straight from the ledger: its rows are the posted
// postings of the account in the half-open window [start, end), in the order
// the money moved (posting time, then posting id); openingBalance is the sum
// of the account's posted postings before start and closingBalance the sum
// before end. Both are computed from the window on every request, never from
// the page, so they are identical on every page, and openingBalance plus the
// amounts of every row of every page is closingBalance (R-STMT-05..07).
// Pending postings (holds) are not balance changes and never appear.
//
// NOT_YET_AVAILABLE (R-STMT-09). A window is available once its card
// settlement has closed: once now is at least end plus the settlement delay
// of the environment. Until then a balance change could still land in the
// window (a card clearing dated inside it, or a transaction that stamped its
// time before end and has not committed yet) and the statement could differ
// between pages or between two reads. After it, the window never changes.
// The card settlement delay applies to accounts with card activity, which
// also wait while authorizations made before the window's end are open
// (settled, below); other accounts wait only for the sandbox delay.
//
// Which accounts (R-STMT-10, R-STMT-11): a customer's own USD INTERNAL_FIAT
// account. Rule-based accounts (their receipts are swept to, and appear on,
// the owner's account: R-STMT-12) and platform-owned accounts have no
// statement; asking for one is 400 INVALID_INPUT.

// Central is the US Central time zone that statement months follow.
var Central = mustLoad("America/Chicago")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("accounts: time zone " + name + ": " + err.Error())
	}
	return loc
}

// Statement is one page of balance changes.
type Statement struct {
	Data           []BalanceChange   `json:"data"`
	OpeningBalance int64             `json:"openingBalance"`
	ClosingBalance int64             `json:"closingBalance"`
	Currency       currency.Currency `json:"currency"`
	HasMore        bool              `json:"hasMore"`
	NextCursor     string            `json:"nextCursor,omitempty"`
}

// StatementCursor is the keyset position of a row in statement order.
type StatementCursor = store.LedgerPostingCursor

// FormatCursor and ParseCursor turn a keyset position into the string a
// signed page cursor carries, and back.
func FormatCursor(c StatementCursor) string {
	return strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "|" + c.ID
}

// ParseCursor is the inverse of FormatCursor.
func ParseCursor(s string) (StatementCursor, bool) {
	us, postingID, ok := strings.Cut(s, "|")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || postingID == "" {
		return StatementCursor{}, false
	}
	return StatementCursor{CreatedAt: time.UnixMicro(n).UTC(), ID: postingID}, true
}

// ceilMicro rounds t up to the microsecond, the precision of stored times:
// a row at µs p lies in [s, e) exactly when ceil(s) <= p < ceil(e).
func ceilMicro(t time.Time) time.Time {
	tr := t.Truncate(time.Microsecond)
	if tr.Before(t) {
		tr = tr.Add(time.Microsecond)
	}
	return tr.UTC()
}

// SettlementDelay is the environment's delay (see the package notes).
func (s *Service) SettlementDelay(env string) time.Duration {
	if env == store.EnvProduction {
		return s.ProductionSettlementDelay
	}
	return s.SandboxSettlementDelay
}

// statementAccount reads an account that has a statement of its own.
func statementAccount(ctx context.Context, q store.Q, t store.Tenant, accountID string) (store.InternalAccount, error) {
	acct, err := q.GetInternalAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return acct, accountNotFound(accountID)
	}
	if err != nil {
		return acct, err
	}
	switch {
	case acct.CustomerID == "":
		return acct, apierr.InvalidInput("Internal account " + accountID + " belongs to the platform; platform-owned accounts have no statement")
	case acct.Type == TypeRuleBased:
		return acct, apierr.InvalidInput("Internal account " + accountID + " is a rule-based account, which has no statement of its own; " +
			"its receipts appear on the statement of the account it sweeps to")
	case acct.Type != TypeFiat || acct.Currency != StatementCurrency:
		return acct, apierr.InvalidInput(fmt.Sprintf("Internal account %s is a %s %s account; statements are available for a customer's USD account only",
			accountID, acct.Currency, acct.Type))
	}
	return acct, nil
}

// BalanceChanges returns the statement of an account over [start, end)
// with up to limit rows after the cursor in Data (the caller pages: ask for
// one more row than the page holds to learn whether there is more). When the
// window is an exact US Central calendar month, the first page records the
// month's statement as fetched.
func (s *Service) BalanceChanges(ctx context.Context, t store.Tenant, accountID string, start, end time.Time, after *StatementCursor, limit int) (Statement, error) {
	start, end = ceilMicro(start), ceilMicro(end)
	if !start.Before(end) {
		var f apierr.Fields
		f.Add("endDate", apierr.Minimum, "must be later than startDate")
		return Statement{}, f.Err()
	}
	q := s.DB.Read()
	acct, err := statementAccount(ctx, q, t, accountID)
	if err != nil {
		return Statement{}, err
	}
	now := s.DB.Now()
	if err := s.settled(ctx, q, t, acct.ID, end); err != nil {
		return Statement{}, err
	}
	opening, err := q.LedgerPostedSumBefore(ctx, t, acct.LedgerAccountID, &start)
	if err != nil {
		return Statement{}, err
	}
	closing, err := q.LedgerPostedSumBefore(ctx, t, acct.LedgerAccountID, &end)
	if err != nil {
		return Statement{}, err
	}
	postings, err := q.LedgerStatement(ctx, t, acct.LedgerAccountID, &start, &end, after, limit)
	if err != nil {
		return Statement{}, err
	}
	transfers := make([]string, len(postings))
	for i, p := range postings {
		transfers[i] = p.TransferID
	}
	refs, err := q.LedgerTransferReferences(ctx, t, transfers)
	if err != nil {
		return Statement{}, err
	}
	rows := make([]BalanceChange, len(postings))
	for i, p := range postings {
		rows[i] = BalanceChange{ID: p.ID, Amount: p.Amount, EffectiveAt: p.CreatedAt}
		if ref := refs[p.TransferID]; id.Valid(id.Transaction, ref) {
			rows[i].TransactionID = ref
		}
	}
	if month, ok := exactMonth(start, end); ok && after == nil {
		if err := s.DB.Write().MarkStatementFetched(ctx, t, acct.ID, month, now.UTC().Truncate(time.Microsecond)); err != nil {
			return Statement{}, err
		}
	}
	cur, _ := currency.Lookup(acct.Currency)
	return Statement{Data: rows, OpeningBalance: opening, ClosingBalance: closing, Currency: cur}, nil
}

// monthStart is the first instant of a US Central calendar month.
func monthStart(year int, month time.Month) time.Time {
	return time.Date(year, month, 1, 0, 0, 0, 0, Central)
}

// exactMonth reports whether [start, end) is exactly one US Central
// calendar month, and which (YYYY-MM).
func exactMonth(start, end time.Time) (string, bool) {
	local := start.In(Central)
	first := monthStart(local.Year(), local.Month())
	if !first.Equal(start) || !monthStart(local.Year(), local.Month()+1).Equal(end) {
		return "", false
	}
	return local.Format("2006-01"), true
}

var statementMonthRE = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)

// ValidateStatementMonth checks statementMonth on its own: YYYY-MM naming a
// US Central calendar month that has begun at now (R-STMT-15).
func ValidateStatementMonth(month *string, now time.Time) error {
	var f apierr.Fields
	switch {
	case month == nil:
		f.Add("statementMonth", apierr.Required, "is required, as YYYY-MM")
	case !statementMonthRE.MatchString(*month):
		f.Add("statementMonth", apierr.Pattern, "must be a month as YYYY-MM, such as 2025-10")
	default:
		m, _ := time.ParseInLocation("2006-01", *month, Central)
		if m.After(now) {
			f.Add("statementMonth", apierr.Maximum, "must be a month that has already begun in US Central time (%s begins %s)",
				*month, m.UTC().Format(time.RFC3339))
		}
	}
	return f.Err()
}

// ConfirmStatement records that the statement of a US Central month was
// delivered to the customer (R-STMT-14..16). It is idempotent: the first
// confirmation time is kept and every call answers with it.
func (s *Service) ConfirmStatement(ctx context.Context, t store.Tenant, accountID string, req ConfirmStatementRequest) (StatementConfirmation, error) {
	now := s.DB.Now().UTC().Truncate(time.Microsecond)
	if err := ValidateStatementMonth(req.StatementMonth, now); err != nil {
		return StatementConfirmation{}, err
	}
	month := *req.StatementMonth
	var out StatementConfirmation
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		acct, err := statementAccount(ctx, tx.Q, t, accountID)
		if err != nil {
			return err
		}
		if err := tx.MarkStatementConfirmed(ctx, t, acct.ID, month, now); err != nil {
			return err
		}
		r, err := tx.GetStatementReceipt(ctx, t, acct.ID, month)
		if err != nil {
			return err
		}
		out = StatementConfirmation{AccountID: acct.ID, StatementMonth: month, ConfirmedAt: *r.ConfirmedAt, FetchedAt: r.FetchedAt}
		return nil
	})
	if err != nil {
		return StatementConfirmation{}, err
	}
	return out, nil
}

// settled refuses a window whose balance changes could still change (409
// NOT_YET_AVAILABLE): every window until a transaction stamped before its end
// can no longer be committing (the sandbox delay); for an account with card
// activity, until the environment's card settlement delay has passed and
// while authorizations made before its end are still open. Accounts without
// card activity do not wait for card settlement.
func (s *Service) settled(ctx context.Context, q store.Q, t store.Tenant, accountID string, end time.Time) error {
	delay := s.SandboxSettlementDelay
	activity, open := false, false
	if s.CardSettlement != nil {
		var err error
		if activity, open, err = s.CardSettlement(ctx, q, t, accountID, end); err != nil {
			return err
		}
	}
	if activity {
		delay = s.SettlementDelay(t.Env)
	}
	if availableAt := end.Add(delay); s.DB.Now().Before(availableAt) {
		return apierr.New("NOT_YET_AVAILABLE",
			"Settlement for this window has not closed yet, so its balance changes could still change; retry after "+
				availableAt.UTC().Format(time.RFC3339)).
			WithDetails(map[string]any{"availableAt": availableAt.UTC().Format(time.RFC3339Nano)})
	}
	if open {
		return apierr.New("NOT_YET_AVAILABLE",
			"Card authorizations made before the window ended are still open, so its card settlement could still change; retry once they clear, are reversed or expire")
	}
	return nil
}
