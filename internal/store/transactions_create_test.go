package store_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// CreateTransaction answers the row exactly as GetTransaction reads it back
// (the transactions service renders the API object from it without a second
// read): with and without a customer, with every optional column empty and
// set. So does CreateTransactionAtCommit, whose row is inserted with the
// commit and built from the caller's platformCustomerId (ignored without a
// customer); both count the row.
func TestCreateTransaction_AnswersTheStoredRow(t *testing.T) {
	creates := map[string]func(tx *store.Tx, x store.Transaction) (store.Transaction, error){
		"at once": func(tx *store.Tx, x store.Transaction) (store.Transaction, error) {
			x.PlatformCustomerID = "" // read from the customer
			return tx.CreateTransaction(ctx, x)
		},
		"at commit": func(tx *store.Tx, x store.Transaction) (store.Transaction, error) {
			return tx.CreateTransactionAtCommit(ctx, x)
		},
	}
	for how, create := range creates {
		t.Run(how, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) { createdAsStored(t, db, create) })
		})
	}
}

func createdAsStored(t *testing.T, db *store.DB, create func(tx *store.Tx, x store.Transaction) (store.Transaction, error)) {
	tn := store.Tenant{PlatformID: mustPlatform(t, db, true).ID, Env: store.EnvSandbox}
	now := db.Now().UTC().Truncate(time.Microsecond)
	cust := mustCustomers(t, db, tn, "pc-create")[0]
	full := txnRow(tn, cust, "OUTGOING", "COMPLETED", now)
	received := int64(7)
	full.ReceivedAmount, full.ReceivedCurrency, full.SettledAt = &received, "EUR", &now
	full.HoldID, full.QuoteID, full.PaymentRail = "LedgerTransfer:2", "Quote:1", "SEPA"
	full.RateDetails, full.PaymentInstructions, full.CounterpartyInformation = []byte(`{"r":1}`), []byte(`[1]`), []byte(`{"c":"x"}`)
	full.Fees, full.PlatformFees, full.ExchangeRate, full.AgentID = 3, 1, "0.9", "Agent:1"
	full.PlatformCustomerID = "pc-create"
	platforms := txnRow(tn, "", "INCOMING", "PENDING", now)
	platforms.PlatformCustomerID = "ignored: no customer"
	for name, x := range map[string]store.Transaction{
		"platform's, optional columns empty": platforms,
		"customer's, optional columns set":   full,
	} {
		var created store.Transaction
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			created, err = create(tx, x)
			return err
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		read, err := db.Read().GetTransaction(ctx, tn, x.ID)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(created, read) {
			t.Fatalf("%s:\ncreated %+v\nread    %+v", name, created, read)
		}
		if x.CustomerID != "" && created.PlatformCustomerID != "pc-create" {
			t.Fatalf("%s: platformCustomerId %q", name, created.PlatformCustomerID)
		}
	}
	checkCounters(t, db)
}
