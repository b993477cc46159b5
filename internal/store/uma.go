package store

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// UmaAddress reserves one customer's UMA address ($local@domain).
type UmaAddress struct {
	Domain     string
	LocalPart  string
	Tenant     Tenant
	CustomerID string
	CreatedAt  time.Time
}

// InsertUmaAddress reserves an address; ErrConflict when it is taken.
func (q Q) InsertUmaAddress(ctx context.Context, a UmaAddress) error {
	_, err := q.exec(ctx, `INSERT INTO uma_addresses (domain, local_part, platform_id, env, customer_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?)`, a.Domain, a.LocalPart, a.Tenant.PlatformID, a.Tenant.Env, a.CustomerID, toMicros(a.CreatedAt))
	return classify(err)
}

// DeleteUmaAddressesOf releases every address of a customer of t.
func (q Q) DeleteUmaAddressesOf(ctx context.Context, t Tenant, customerID string) error {
	_, err := q.exec(ctx, `DELETE FROM uma_addresses WHERE platform_id = ? AND env = ? AND customer_id = ?`,
		t.PlatformID, t.Env, customerID)
	return err
}

// GetUmaAddress resolves an address to its customer and tenant.
func (q Q) GetUmaAddress(ctx context.Context, domain, localPart string) (UmaAddress, error) {
	a := UmaAddress{Domain: domain, LocalPart: localPart}
	var created int64
	err := q.queryRow(ctx, `SELECT platform_id, env, customer_id, created_at FROM uma_addresses WHERE domain = ? AND local_part = ?`,
		domain, localPart).Scan(&a.Tenant.PlatformID, &a.Tenant.Env, &a.CustomerID, &created)
	if err != nil {
		return UmaAddress{}, classify(err)
	}
	a.CreatedAt = fromMicros(created)
	return a, nil
}

// TenantsWithUmaDomain lists the tenants whose configuration names domain as
// their UMA domain (the public endpoints resolve their Host this way).
func (q Q) TenantsWithUmaDomain(ctx context.Context, domain string) ([]Tenant, [][]byte, error) {
	rows, err := q.query(ctx, `SELECT platform_id, env, document FROM platform_configs WHERE document LIKE ?`,
		"%"+strings.NewReplacer("%", "", "_", "").Replace(domain)+"%")
	return configDocuments(rows, err)
}

// UmaKeys is a tenant's UMA key set (private keys sealed).
type UmaKeys struct {
	Tenant              Tenant
	SigningCertChain    string
	EncryptionCertChain string
	SealedSigningKey    string
	SealedEncryptionKey string
	CreatedAt           time.Time
}

// InsertUmaKeys stores a tenant's key set; ErrConflict when it has one.
func (q Q) InsertUmaKeys(ctx context.Context, k UmaKeys) error {
	_, err := q.exec(ctx, `INSERT INTO uma_keys (platform_id, env, signing_cert_chain, encryption_cert_chain,
		sealed_signing_key, sealed_encryption_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		k.Tenant.PlatformID, k.Tenant.Env, k.SigningCertChain, k.EncryptionCertChain, k.SealedSigningKey,
		k.SealedEncryptionKey, toMicros(k.CreatedAt))
	return classify(err)
}

// GetUmaKeys returns a tenant's key set.
func (q Q) GetUmaKeys(ctx context.Context, t Tenant) (UmaKeys, error) {
	k := UmaKeys{Tenant: t}
	var created int64
	err := q.queryRow(ctx, `SELECT signing_cert_chain, encryption_cert_chain, sealed_signing_key, sealed_encryption_key,
		created_at FROM uma_keys WHERE platform_id = ? AND env = ?`, t.PlatformID, t.Env).
		Scan(&k.SigningCertChain, &k.EncryptionCertChain, &k.SealedSigningKey, &k.SealedEncryptionKey, &created)
	if err != nil {
		return UmaKeys{}, classify(err)
	}
	k.CreatedAt = fromMicros(created)
	return k, nil
}

// UmaLookup is one receiver lookup this institution made.
type UmaLookup struct {
	ID              string
	Tenant          Tenant
	CustomerID      string
	SenderAddress   string
	ReceiverAddress string
	SendingCurrency string
	LnurlpResponse  string
	PubKeyResponse  string
	CreatedAt       time.Time
}

// InsertUmaLookup records a lookup.
func (q Q) InsertUmaLookup(ctx context.Context, l UmaLookup) error {
	_, err := q.exec(ctx, `INSERT INTO uma_lookups (id, platform_id, env, customer_id, sender_address, receiver_address,
		sending_currency, lnurlp_response, pubkey_response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		l.ID, l.Tenant.PlatformID, l.Tenant.Env, l.CustomerID, l.SenderAddress, l.ReceiverAddress, l.SendingCurrency,
		l.LnurlpResponse, l.PubKeyResponse, toMicros(l.CreatedAt))
	return classify(err)
}

// GetUmaLookup returns a lookup of t.
func (q Q) GetUmaLookup(ctx context.Context, t Tenant, lookupID string) (UmaLookup, error) {
	l := UmaLookup{ID: lookupID, Tenant: t}
	var created int64
	err := q.queryRow(ctx, `SELECT customer_id, sender_address, receiver_address, sending_currency, lnurlp_response,
		pubkey_response, created_at FROM uma_lookups WHERE platform_id = ? AND env = ? AND id = ?`, t.PlatformID, t.Env, lookupID).
		Scan(&l.CustomerID, &l.SenderAddress, &l.ReceiverAddress, &l.SendingCurrency, &l.LnurlpResponse, &l.PubKeyResponse, &created)
	if err != nil {
		return UmaLookup{}, classify(err)
	}
	l.CreatedAt = fromMicros(created)
	return l, nil
}

// UmaAddressOf returns a customer's address, or ErrNotFound.
func (q Q) UmaAddressOf(ctx context.Context, t Tenant, customerID string) (UmaAddress, error) {
	a := UmaAddress{Tenant: t, CustomerID: customerID}
	var created int64
	err := q.queryRow(ctx, `SELECT domain, local_part, created_at FROM uma_addresses
		WHERE platform_id = ? AND env = ? AND customer_id = ? ORDER BY created_at DESC LIMIT 1`, t.PlatformID, t.Env, customerID).
		Scan(&a.Domain, &a.LocalPart, &created)
	if err != nil {
		return UmaAddress{}, classify(err)
	}
	a.CreatedAt = fromMicros(created)
	return a, nil
}

// UmaInvoice is an invoice this institution issued as a UMA receiver.
type UmaInvoice struct {
	PaymentHash     string
	Tenant          Tenant
	CustomerID      string
	AccountID       string
	Currency        string
	ReceivingAmount int64
	AmountMsat      int64
	SealedPreimage  string
	SenderAddress   string
	ReceiverAddress string
	Status          string
	TransactionID   string
	ExpiresAt       time.Time
	CreatedAt       time.Time
	PaidAt          *time.Time
}

// InsertUmaInvoice stores a new invoice.
func (q Q) InsertUmaInvoice(ctx context.Context, i UmaInvoice) error {
	_, err := q.exec(ctx, `INSERT INTO uma_invoices (payment_hash, platform_id, env, customer_id, account_id, currency,
		receiving_amount, amount_msat, sealed_preimage, sender_address, receiver_address, status, transaction_id,
		expires_at, created_at, paid_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		i.PaymentHash, i.Tenant.PlatformID, i.Tenant.Env, i.CustomerID, i.AccountID, i.Currency, i.ReceivingAmount,
		i.AmountMsat, i.SealedPreimage, i.SenderAddress, i.ReceiverAddress, i.Status, i.TransactionID,
		toMicros(i.ExpiresAt), toMicros(i.CreatedAt), nullMicros(i.PaidAt))
	return classify(err)
}

// GetUmaInvoice returns an invoice by payment hash; lock takes a row lock.
func (q Q) GetUmaInvoice(ctx context.Context, paymentHash string, lock bool) (UmaInvoice, error) {
	query := `SELECT payment_hash, platform_id, env, customer_id, account_id, currency, receiving_amount, amount_msat,
		sealed_preimage, sender_address, receiver_address, status, transaction_id, expires_at, created_at, paid_at
		FROM uma_invoices WHERE payment_hash = ?`
	if lock {
		query += q.forUpdate()
	}
	var i UmaInvoice
	var expires, created int64
	var paid sql.NullInt64
	err := q.queryRow(ctx, query, paymentHash).Scan(&i.PaymentHash, &i.Tenant.PlatformID, &i.Tenant.Env, &i.CustomerID,
		&i.AccountID, &i.Currency, &i.ReceivingAmount, &i.AmountMsat, &i.SealedPreimage, &i.SenderAddress,
		&i.ReceiverAddress, &i.Status, &i.TransactionID, &expires, &created, &paid)
	if err != nil {
		return UmaInvoice{}, classify(err)
	}
	i.ExpiresAt, i.CreatedAt, i.PaidAt = fromMicros(expires), fromMicros(created), timePtr(paid)
	return i, nil
}

// MarkUmaInvoicePaid records the settlement of a PENDING invoice.
func (q Q) MarkUmaInvoicePaid(ctx context.Context, paymentHash, transactionID string, at time.Time) error {
	res, err := q.exec(ctx, `UPDATE uma_invoices SET status = 'PAID', transaction_id = ?, paid_at = ?
		WHERE payment_hash = ? AND status = 'PENDING'`, transactionID, toMicros(at), paymentHash)
	return affectedOne(res, err)
}

// UmaPayment is an executed payment to a UMA address awaiting settlement.
type UmaPayment struct {
	TransactionID   string
	Tenant          Tenant
	HoldID          string
	Invoice         string
	Receiver        string
	Currency        string
	ReceivingAmount int64
	Status          string
	Attempts        int
	DueAt           time.Time
	TransactionHash string
	Failure         string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

const umaPaymentCols = `transaction_id, platform_id, env, hold_id, invoice, receiver, currency, receiving_amount, status,
	attempts, due_at, transaction_hash, failure, created_at, updated_at`

// InsertUmaPayment stores a new payment.
func (q Q) InsertUmaPayment(ctx context.Context, p UmaPayment) error {
	_, err := q.exec(ctx, `INSERT INTO uma_payments (`+umaPaymentCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.TransactionID, p.Tenant.PlatformID, p.Tenant.Env, p.HoldID, p.Invoice, p.Receiver, p.Currency, p.ReceivingAmount,
		p.Status, p.Attempts, toMicros(p.DueAt), p.TransactionHash, p.Failure, toMicros(p.CreatedAt), toMicros(p.UpdatedAt))
	return classify(err)
}

func scanUmaPayment(sc interface{ Scan(...any) error }) (UmaPayment, error) {
	var p UmaPayment
	var due, created, updated int64
	err := sc.Scan(&p.TransactionID, &p.Tenant.PlatformID, &p.Tenant.Env, &p.HoldID, &p.Invoice, &p.Receiver, &p.Currency,
		&p.ReceivingAmount, &p.Status, &p.Attempts, &due, &p.TransactionHash, &p.Failure, &created, &updated)
	p.DueAt, p.CreatedAt, p.UpdatedAt = fromMicros(due), fromMicros(created), fromMicros(updated)
	return p, err
}

// DueUmaPayments lists PENDING payments due at now, oldest first.
func (q Q) DueUmaPayments(ctx context.Context, now time.Time, limit int) ([]UmaPayment, error) {
	rows, err := q.query(ctx, `SELECT `+umaPaymentCols+` FROM uma_payments WHERE status = 'PENDING' AND due_at <= ?
		ORDER BY due_at LIMIT ?`, toMicros(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UmaPayment
	for rows.Next() {
		p, err := scanUmaPayment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// GetUmaPayment returns a payment; lock takes a row lock.
func (q Q) GetUmaPayment(ctx context.Context, transactionID string, lock bool) (UmaPayment, error) {
	query := `SELECT ` + umaPaymentCols + ` FROM uma_payments WHERE transaction_id = ?`
	if lock {
		query += q.forUpdate()
	}
	p, err := scanUmaPayment(q.queryRow(ctx, query, transactionID))
	return p, classify(err)
}

// UpdateUmaPayment writes a payment's state.
func (q Q) UpdateUmaPayment(ctx context.Context, p UmaPayment) error {
	res, err := q.exec(ctx, `UPDATE uma_payments SET status = ?, attempts = ?, due_at = ?, transaction_hash = ?, failure = ?,
		updated_at = ? WHERE transaction_id = ?`, p.Status, p.Attempts, toMicros(p.DueAt), p.TransactionHash, p.Failure,
		toMicros(p.UpdatedAt), p.TransactionID)
	return affectedOne(res, err)
}

// UmaDomains lists, for env, every platform whose configuration names a UMA
// domain, with its configuration document.
func (q Q) UmaDomains(ctx context.Context, env string) ([]Tenant, [][]byte, error) {
	rows, err := q.query(ctx, `SELECT platform_id, env, document FROM platform_configs WHERE env = ? AND document LIKE ?
		ORDER BY platform_id`, env, `%"umaDomain"%`)
	return configDocuments(rows, err)
}

// configDocuments reads rows of (platform_id, env, document) of
// platform_configs.
func configDocuments(rows *sql.Rows, err error) ([]Tenant, [][]byte, error) {
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ts []Tenant
	var docs [][]byte
	for rows.Next() {
		var t Tenant
		var doc string
		if err := rows.Scan(&t.PlatformID, &t.Env, &doc); err != nil {
			return nil, nil, err
		}
		ts, docs = append(ts, t), append(docs, []byte(doc))
	}
	return ts, docs, rows.Err()
}

// UseUmaNonce records the nonce of a signed UMA message, forgetting those
// signed before forgetBefore; a nonce recorded before is ErrConflict.
func (q Q) UseUmaNonce(ctx context.Context, nonce string, signedAt, forgetBefore time.Time) error {
	if _, err := q.exec(ctx, `DELETE FROM uma_nonces WHERE signed_at < ?`, toMicros(forgetBefore)); err != nil {
		return err
	}
	_, err := q.exec(ctx, `INSERT INTO uma_nonces (nonce, signed_at) VALUES (?, ?)`, nonce, toMicros(signedAt))
	return classify(err)
}

// PurgeUmaNonces forgets the nonces of messages signed before t.
func (q Q) PurgeUmaNonces(ctx context.Context, t time.Time) error {
	_, err := q.exec(ctx, `DELETE FROM uma_nonces WHERE signed_at < ?`, toMicros(t))
	return err
}
