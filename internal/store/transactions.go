package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Transaction is one row of transactions. Source and Destination are the
// API objects as JSON, owned by package transactions; the columns beside them
// are what lists filter on. PlatformCustomerID is read from the customer
// (the current value), never stored.
type Transaction struct {
	ID        string
	Tenant    Tenant
	Type      string
	Status    string
	Direction string
	// CustomerID is empty when the platform's own account is concerned.
	CustomerID           string
	PlatformCustomerID   string // read only
	AccountID            string
	SourceAccountID      string
	DestinationAccountID string
	Source               []byte
	Destination          []byte
	SentAmount           int64
	SentCurrency         string
	ReceivedAmount       *int64
	ReceivedCurrency     string
	Fees                 int64
	RuleBasedAccountID   string
	CardID               string
	QuoteID              string
	Reference            string
	Description          string
	FailureReason        string
	LedgerTransferID     string
	SettledAt            *time.Time
	CreatedAt            time.Time
	UpdatedAt            time.Time

	// Outgoing fields (migration 0010). JSON columns hold API objects, nil
	// when absent; ExchangeRate is a decimal as text, "" when unknown.
	PaymentRail             string
	PlatformFees            int64
	ExchangeRate            string
	RateDetails             []byte
	Refund                  []byte
	PaymentInstructions     []byte
	CounterpartyInformation []byte
	// HoldID is the ledger hold reserving an outgoing payment's money.
	HoldID string
	// PendingReason says why a PENDING transaction is held ("" for none;
	// migration 0023).
	PendingReason string
	// ScaExemption is the SCA exemption an outgoing payment went under
	// (migration 0044; "" for none).
	ScaExemption string
	// CardDetails is a CARD transaction's card fields as JSON (package
	// transactions), nil for other types (migration 0029).
	CardDetails []byte
	// AgentID is the agent that initiated the transaction ("" for none;
	// migration 0048).
	AgentID string
}

const transactionCols = `t.id, t.platform_id, t.env, t.transaction_type, t.status, t.direction, t.customer_id,
	c.platform_customer_id, t.account_id, t.source_account_id, t.destination_account_id, t.source, t.destination,
	t.sent_amount, t.sent_currency, t.received_amount, t.received_currency, t.fees, t.rule_based_account_id,
	t.card_id, t.quote_id, t.reference, t.description, t.failure_reason, t.ledger_transfer_id, t.settled_at,
	t.created_at, t.updated_at, t.payment_rail, t.platform_fees, t.exchange_rate, t.rate_details, t.refund,
	t.payment_instructions, t.counterparty_information, t.hold_id, t.pending_reason, t.sca_exemption, t.card_details, t.agent_id`

const transactionFrom = ` FROM transactions t LEFT JOIN customers c ON c.id = t.customer_id`

func scanTransaction(row interface{ Scan(...any) error }) (Transaction, error) {
	var x Transaction
	var customer, pcid, transfer sql.NullString
	var source, dest string
	var received, settled sql.NullInt64
	var created, updated int64
	var rateDetails, refund, instructions, counterparty, cardDetails string
	if err := row.Scan(&x.ID, &x.Tenant.PlatformID, &x.Tenant.Env, &x.Type, &x.Status, &x.Direction, &customer,
		&pcid, &x.AccountID, &x.SourceAccountID, &x.DestinationAccountID, &source, &dest, &x.SentAmount,
		&x.SentCurrency, &received, &x.ReceivedCurrency, &x.Fees, &x.RuleBasedAccountID, &x.CardID, &x.QuoteID,
		&x.Reference, &x.Description, &x.FailureReason, &transfer, &settled, &created, &updated, &x.PaymentRail,
		&x.PlatformFees, &x.ExchangeRate, &rateDetails, &refund, &instructions, &counterparty, &x.HoldID,
		&x.PendingReason, &x.ScaExemption, &cardDetails, &x.AgentID); err != nil {
		return Transaction{}, classify(err)
	}
	x.CustomerID, x.PlatformCustomerID, x.LedgerTransferID = customer.String, pcid.String, transfer.String
	x.Source, x.Destination = []byte(source), []byte(dest)
	x.RateDetails, x.Refund = jsonCol(rateDetails), jsonCol(refund)
	x.PaymentInstructions, x.CounterpartyInformation = jsonCol(instructions), jsonCol(counterparty)
	x.CardDetails = jsonCol(cardDetails)
	if received.Valid {
		v := received.Int64
		x.ReceivedAmount = &v
	}
	x.SettledAt = timePtr(settled)
	x.CreatedAt, x.UpdatedAt = fromMicros(created), fromMicros(updated)
	return x, nil
}

// insertedTransactionCols are transactionCols read from the inserted row
// (RETURNING names it by its table: SQLite allows no alias there), the
// customer's platformCustomerId by a subquery instead of the join.
var insertedTransactionCols = strings.ReplaceAll(strings.Replace(transactionCols, "c.platform_customer_id",
	"(SELECT c.platform_customer_id FROM customers c WHERE c.id = t.customer_id)", 1), "t.", "transactions.")

// CreateTransaction stores a new transaction, counts it in
// transaction_counts (q must be a Tx: outside one it writes nothing and
// fails), and answers the row as GetTransaction would read it back, from the
// same statement.
func (q Q) CreateTransaction(ctx context.Context, x Transaction) (Transaction, error) {
	if q.counts == nil {
		return Transaction{}, errUncounted
	}
	st := transactionInsert(x)
	stored, err := scanTransaction(q.queryRow(ctx, st.sql+` RETURNING `+insertedTransactionCols, st.args...))
	if err != nil {
		return Transaction{}, err
	}
	return stored, q.countTransaction(x.Tenant, x.CustomerID, x.Type, x.Status, 1)
}

// CreateTransactionAtCommit is CreateTransaction with the INSERT queued to
// the transaction's last statement (outbox.go), where a batch's rows go in
// as one; a statement through the transaction that may touch transactions
// makes it first. The answer is built here: x.PlatformCustomerID must be
// the platformCustomerId of x.CustomerID as the caller read it (RETURNING
// reads it from the customer), and x's customer, platform and ledger
// transfer must exist. A row the table's checks or the engine would refuse
// (an unknown type, negative fees, text PostgreSQL cannot store) is inserted
// at once instead: a queued insert that fails fails its whole batch, and
// this keeps such a failure the caller's own, answered as before.
func (q Q) CreateTransactionAtCommit(ctx context.Context, x Transaction) (Transaction, error) {
	if q.counts == nil {
		return Transaction{}, errUncounted
	}
	if !insertableAtCommit(x) {
		return q.CreateTransaction(ctx, x)
	}
	if err := q.queueWrite(transactionInsert(x)); err != nil {
		return Transaction{}, err
	}
	return storedTransaction(x), q.countTransaction(x.Tenant, x.CustomerID, x.Type, x.Status, 1)
}

const transactionInsertCols = `id, platform_id, env, transaction_type, status, direction,
	customer_id, account_id, source_account_id, destination_account_id, source, destination, sent_amount,
	sent_currency, received_amount, received_currency, fees, rule_based_account_id, card_id, quote_id, reference,
	description, failure_reason, ledger_transfer_id, settled_at, created_at, updated_at, payment_rail,
	platform_fees, exchange_rate, rate_details, refund, payment_instructions, counterparty_information, hold_id,
	pending_reason, sca_exemption, card_details, agent_id`

// transactionInsert is the one-row INSERT of x, in the shape mergeInserts
// merges (the VALUES tuple last).
func transactionInsert(x Transaction) statement {
	var received sql.NullInt64
	if x.ReceivedAmount != nil {
		received = sql.NullInt64{Int64: *x.ReceivedAmount, Valid: true}
	}
	return statement{sql: `INSERT INTO transactions (` + transactionInsertCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		args: []any{x.ID, x.Tenant.PlatformID, x.Tenant.Env, x.Type, x.Status, x.Direction, iaNullString(x.CustomerID),
			x.AccountID, x.SourceAccountID, x.DestinationAccountID, string(x.Source), string(x.Destination),
			x.SentAmount, x.SentCurrency, received, x.ReceivedCurrency, x.Fees, x.RuleBasedAccountID, x.CardID,
			x.QuoteID, x.Reference, x.Description, x.FailureReason, iaNullString(x.LedgerTransferID),
			nullMicros(x.SettledAt), toMicros(x.CreatedAt), toMicros(x.UpdatedAt), x.PaymentRail, x.PlatformFees,
			x.ExchangeRate, string(x.RateDetails), string(x.Refund), string(x.PaymentInstructions),
			string(x.CounterpartyInformation), x.HoldID, x.PendingReason, x.ScaExemption, string(x.CardDetails), x.AgentID}}
}

// storedTransaction is x as scanTransaction reads it back once inserted.
func storedTransaction(x Transaction) Transaction {
	out := x
	if x.CustomerID == "" {
		out.PlatformCustomerID = "" // no customer joined
	}
	out.Source, out.Destination = []byte(string(x.Source)), []byte(string(x.Destination))
	out.RateDetails, out.Refund = jsonCol(string(x.RateDetails)), jsonCol(string(x.Refund))
	out.PaymentInstructions = jsonCol(string(x.PaymentInstructions))
	out.CounterpartyInformation = jsonCol(string(x.CounterpartyInformation))
	out.CardDetails = jsonCol(string(x.CardDetails))
	if x.ReceivedAmount != nil {
		v := *x.ReceivedAmount
		out.ReceivedAmount = &v
	}
	out.SettledAt = timePtr(nullMicros(x.SettledAt))
	out.CreatedAt, out.UpdatedAt = fromMicros(toMicros(x.CreatedAt)), fromMicros(toMicros(x.UpdatedAt))
	return out
}

// insertableAtCommit reports whether the INSERT of x cannot fail on x's own
// values: the table's CHECKs (migration 0008) hold, an id is given, and
// every text is one PostgreSQL stores (valid UTF-8 without NUL).
func insertableAtCommit(x Transaction) bool {
	switch {
	case x.ID == "", x.Fees < 0,
		x.Tenant.Env != EnvSandbox && x.Tenant.Env != EnvProduction,
		x.Type != "INCOMING" && x.Type != "OUTGOING" && x.Type != "CARD",
		x.Direction != "CREDIT" && x.Direction != "DEBIT":
		return false
	}
	for _, s := range []string{x.ID, x.Tenant.PlatformID, x.Status, x.CustomerID, x.PlatformCustomerID,
		x.AccountID, x.SourceAccountID, x.DestinationAccountID, string(x.Source), string(x.Destination),
		x.SentCurrency, x.ReceivedCurrency, x.RuleBasedAccountID, x.CardID, x.QuoteID, x.Reference,
		x.Description, x.FailureReason, x.LedgerTransferID, x.PaymentRail, x.ExchangeRate, string(x.RateDetails),
		string(x.Refund), string(x.PaymentInstructions), string(x.CounterpartyInformation), x.HoldID,
		x.PendingReason, x.ScaExemption, string(x.CardDetails), x.AgentID} {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

func jsonCol(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// UpdateTransaction writes the mutable fields of a transaction (status,
// failure, settlement, rail, both sides' JSON, refund, hold, ledger transfer,
// pending reason) and updatedAt, and moves its count from its old status to
// its new one (q must be a Tx, as for CreateTransaction). ErrNotFound when
// the row is not the tenant's.
func (q Q) UpdateTransaction(ctx context.Context, x Transaction) error {
	if q.counts == nil {
		return errUncounted
	}
	was, err := q.updateTransactionRow(ctx, x)
	if err != nil || was.status == x.Status {
		return err
	}
	if err := q.countTransaction(x.Tenant, was.customerID, was.kind, was.status, -1); err != nil {
		return err
	}
	return q.countTransaction(x.Tenant, was.customerID, was.kind, x.Status, 1)
}

// countedAs is what a transaction's counters know it by besides its tenant.
type countedAs struct{ customerID, kind, status string }

// updateTransactionRow writes UpdateTransaction's fields and answers what
// the row was counted as before: on PostgreSQL from the same statement,
// which locks the row before reading its status; on SQLite, whose one
// writer holds the database, read just before.
func (q Q) updateTransactionRow(ctx context.Context, x Transaction) (countedAs, error) {
	const set = `status = ?, failure_reason = ?, settled_at = ?, payment_rail = ?, source = ?, destination = ?,
		refund = ?, hold_id = ?, ledger_transfer_id = ?, pending_reason = ?, payment_instructions = ?,
		card_details = ?, updated_at = ?`
	args := []any{x.Status, x.FailureReason, nullMicros(x.SettledAt), x.PaymentRail, string(x.Source),
		string(x.Destination), string(x.Refund), x.HoldID, iaNullString(x.LedgerTransferID), x.PendingReason,
		string(x.PaymentInstructions), string(x.CardDetails), toMicros(x.UpdatedAt),
		x.Tenant.PlatformID, x.Tenant.Env, x.ID}
	var was countedAs
	var customer sql.NullString
	scan := func(r row) error {
		err := r.Scan(&was.status, &was.kind, &customer)
		was.customerID = customer.String
		return classify(err)
	}
	if q.engine == Postgres {
		return was, scan(q.queryRow(ctx, `UPDATE transactions t SET `+set+` FROM (SELECT id, status FROM transactions
			WHERE platform_id = ? AND env = ? AND id = ? FOR UPDATE) o WHERE t.id = o.id
			RETURNING o.status, t.transaction_type, t.customer_id`, args...))
	}
	if err := scan(q.queryRow(ctx, `SELECT status, transaction_type, customer_id FROM transactions
		WHERE platform_id = ? AND env = ? AND id = ?`, args[len(args)-3:]...)); err != nil {
		return was, err
	}
	_, err := q.exec(ctx, `UPDATE transactions SET `+set+` WHERE platform_id = ? AND env = ? AND id = ?`, args...)
	return was, err
}

// SetTransactionAgent records the agent that initiated a transaction
// (R-TXN-38). ErrNotFound when the row is not the tenant's.
func (q Q) SetTransactionAgent(ctx context.Context, t Tenant, id, agentID string) error {
	res, err := q.exec(ctx, `UPDATE transactions SET agent_id = ? WHERE platform_id = ? AND env = ? AND id = ?`,
		agentID, t.PlatformID, t.Env, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return ErrNotFound
	}
	return nil
}

// GetTransactionForUpdate is GetTransaction, locking the row on PostgreSQL
// until the end of the transaction.
func (q Q) GetTransactionForUpdate(ctx context.Context, t Tenant, id string) (Transaction, error) {
	if q.engine != Postgres {
		return q.GetTransaction(ctx, t, id)
	}
	// Lock the transactions row only, not the joined customer.
	return scanTransaction(q.queryRow(ctx, `SELECT `+transactionCols+transactionFrom+`
		WHERE t.platform_id = ? AND t.env = ? AND t.id = ? FOR UPDATE OF t`, t.PlatformID, t.Env, id))
}

// GetTransaction returns one transaction of the tenant.
func (q Q) GetTransaction(ctx context.Context, t Tenant, id string) (Transaction, error) {
	return scanTransaction(q.queryRow(ctx, `SELECT `+transactionCols+transactionFrom+`
		WHERE t.platform_id = ? AND t.env = ? AND t.id = ?`, t.PlatformID, t.Env, id))
}

// TransactionsByID returns those of ids that are transactions of the tenant.
func (q Q) TransactionsByID(ctx context.Context, t Tenant, ids []string) (map[string]Transaction, error) {
	return collectByID(ctx, q, ledgerDedupe(ids), func(in string) (string, []any) {
		return `SELECT ` + transactionCols + transactionFrom + ` WHERE t.platform_id = ? AND t.env = ?
			AND t.id IN (` + in + `)`, []any{t.PlatformID, t.Env}
	}, scanTransaction, func(x Transaction) string { return x.ID })
}

// TransactionFilter narrows ListTransactions. Empty fields do not filter;
// time bounds are inclusive.
type TransactionFilter struct {
	CustomerID string
	// PlatformOnly keeps the transactions of the platform's own accounts.
	PlatformOnly       bool
	PlatformCustomerID string
	// AccountIdentifier matches either side's account id.
	AccountIdentifier           string
	SenderAccountIdentifier     string
	ReceiverAccountIdentifier   string
	Type                        string
	Status                      string
	CardID                      string
	RuleBasedAccountID          string
	Reference                   string
	CreatedAfter, CreatedBefore *time.Time
	Descending                  bool
}

// ListTransactions returns up to limit transactions after the id `after`
// (keyset, in id order, newest first when Descending) and how many match in
// all: read from transaction_counts when countedScope allows, else COUNT(*).
func (q Q) ListTransactions(ctx context.Context, t Tenant, f TransactionFilter, after string, limit int) ([]Transaction, int, error) {
	if f.PlatformCustomerID != "" {
		// As a customer id, the page is read from transactions_by_customer
		// and the total from the customer's counter.
		var id string
		err := q.queryRow(ctx, `SELECT id FROM customers WHERE platform_id = ? AND env = ? AND platform_customer_id = ?
			AND deleted_at IS NULL`, t.PlatformID, t.Env, f.PlatformCustomerID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && f.CustomerID != "" && f.CustomerID != id) {
			return nil, 0, nil
		}
		if err != nil {
			return nil, 0, err
		}
		f.PlatformCustomerID, f.CustomerID = "", id
	}
	w := where{}
	w.add("t.platform_id = ?", t.PlatformID)
	w.add("t.env = ?", t.Env)
	if f.CustomerID != "" {
		w.add("t.customer_id = ?", f.CustomerID)
	}
	if f.PlatformOnly {
		w.add("t.customer_id IS NULL")
	}
	if f.AccountIdentifier != "" {
		w.add("(t.source_account_id = ? OR t.destination_account_id = ?)", f.AccountIdentifier, f.AccountIdentifier)
	}
	if f.SenderAccountIdentifier != "" {
		w.add("t.source_account_id = ?", f.SenderAccountIdentifier)
	}
	if f.ReceiverAccountIdentifier != "" {
		w.add("t.destination_account_id = ?", f.ReceiverAccountIdentifier)
	}
	if f.Type != "" {
		w.add("t.transaction_type = ?", f.Type)
	}
	if f.Status != "" {
		w.add("t.status = ?", f.Status)
	}
	if f.CardID != "" {
		w.add("t.card_id = ?", f.CardID)
	}
	if f.RuleBasedAccountID != "" {
		w.add("t.rule_based_account_id = ?", f.RuleBasedAccountID)
	}
	if f.Reference != "" {
		w.add("t.reference = ?", f.Reference)
	}
	var total int
	var err error
	if f.CreatedAfter != nil || f.CreatedBefore != nil {
		if total, err = q.transactionWindow(ctx, &w, f.CreatedAfter, f.CreatedBefore); err != nil || total == 0 {
			return nil, 0, err
		}
	} else if total, err = q.countTransactions(ctx, t, f, w); err != nil {
		return nil, 0, err
	}
	order := " ORDER BY t.id"
	if f.Descending {
		order += " DESC"
	}
	if after != "" {
		if f.Descending {
			w.add("t.id < ?", after)
		} else {
			w.add("t.id > ?", after)
		}
	}
	rows, err := q.query(ctx, `SELECT `+transactionCols+transactionFrom+w.sql()+order+` LIMIT ?`, append(w.args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	var out []Transaction
	err = ledgerEachRow(rows, func(r *sql.Rows) error {
		x, err := scanTransaction(r)
		out = append(out, x)
		return err
	})
	return out, total, err
}

// transactionWindow counts the transactions w selects created within
// [from, to], and narrows w to them for the page: one read of
// transactions_by_created (migration 0067) counts them and finds their
// lowest and highest ids when the window is all w asks, and the page walks
// the tenant's ids between those, not every id from the newest or the oldest
// until the window's rows are found. The page's created_at conditions are
// written `t.created_at + 0` so no plan reads the window from
// transactions_by_created and sorts it instead (a generic plan did: 62 ms for
// 33,000 rows against 2 ms; docs/benchmarks.md, "Twenty-ninth session").
func (q Q) transactionWindow(ctx context.Context, w *where, from, to *time.Time) (int, error) {
	win := where{conds: slices.Clone(w.conds), args: slices.Clone(w.args)}
	win.timeRange("t.created_at", from, to)
	var total int
	var lo, hi sql.NullString
	err := q.queryRow(ctx, `SELECT COUNT(*), MIN(t.id), MAX(t.id) FROM transactions t`+win.sql(), win.args...).Scan(&total, &lo, &hi)
	if err != nil || total == 0 {
		return 0, classify(err)
	}
	w.timeRange("t.created_at + 0", from, to)
	w.add("t.id >= ?", lo.String)
	w.add("t.id <= ?", hi.String)
	return total, nil
}

// LedgerTransferReferences returns the reference of each of transferIDs that
// is a transfer of the tenant (statements link postings to transactions
// through it).
func (q Q) LedgerTransferReferences(ctx context.Context, t Tenant, transferIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(transferIDs))
	err := q.eachInChunks(ctx, ledgerDedupe(transferIDs), func(in string) (string, []any) {
		// By primary key only, the tenant checked here (see
		// LedgerTransfersByIDAnyTenant).
		return `SELECT id, platform_id, env, reference FROM ledger_transfers WHERE id IN (` +
			in + `)`, nil
	}, func(r *sql.Rows) error {
		var id, ref string
		var tn Tenant
		if err := r.Scan(&id, &tn.PlatformID, &tn.Env, &ref); err != nil {
			return err
		}
		if tn == t {
			out[id] = ref
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
