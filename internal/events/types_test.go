package events

import (
	"context"
	"errors"
	"testing"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The constants are the names Part B gives, and the builders make the same
// names, so a capability may use either.
func TestTypes_FollowTheSpecForms(t *testing.T) {
	for got, want := range map[string]string{
		OutgoingPayment("PROCESSING"):            "OUTGOING_PAYMENT.PROCESSING",
		OutgoingPayment("COMPLETED"):             OutgoingPaymentCompleted,
		OutgoingPayment("FAILED"):                OutgoingPaymentFailed,
		OutgoingPayment("REFUND_COMPLETED"):      OutgoingPaymentRefundCompleted,
		IncomingPayment("FAILED"):                "INCOMING_PAYMENT.FAILED",
		IncomingPayment("REFUND_PENDING"):        IncomingPaymentRefundPending,
		CardTransaction("SETTLED"):               "CARD_TRANSACTION.SETTLED",
		CardTransaction("DECLINED"):              CardTransactionDeclined,
		CardTransaction("VOIDED"):                CardTransactionVoided,
		CustomerKYC("APPROVED"):                  "CUSTOMER.KYC_APPROVED",
		CustomerKYC("UNVERIFIED"):                CustomerKYCUnverified,
		CustomerKYB("REJECTED"):                  "CUSTOMER.KYB_REJECTED",
		CustomerKYB("PENDING"):                   CustomerKYBPending,
		CardStatusChange:                         "card.status_change",
		ExternalAccountStatusUpdated:             "EXTERNAL_ACCOUNT.STATUS_UPDATED",
		InvitationClaimed:                        "INVITATION_CLAIMED",
		WalletOperationCompleted:                 "wallet_operation.completed",
		Test:                                     "TEST",
		OutgoingPayment("PENDING_AUTHORIZATION"): OutgoingPaymentPendingAuthorization,
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// The delivery is queued with the event, in the same transaction.
func TestEmit_QueuesDeliveryInTheSameTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		tn := store.Tenant{PlatformID: "Platform:p", Env: store.EnvSandbox}
		var kept, dropped Envelope
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			kept, err = Emit(ctx, tx, tn, Test, "Thing:1", nil)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			dropped, _ = Emit(ctx, tx, tn, Test, "Thing:2", nil)
			return errors.New("roll back")
		})
		d, err := db.Read().GetDelivery(ctx, tn, kept.ID, false)
		if err != nil || d.State != store.DeliveryPending || !d.NextAttemptAt.Equal(kept.Timestamp) || d.Attempts != 0 {
			t.Fatalf("delivery %+v %v", d, err)
		}
		if _, err := db.Read().GetDelivery(ctx, tn, dropped.ID, false); !errors.Is(err, store.ErrNotFound) {
			t.Fatal("a rolled-back event left a delivery behind")
		}
	})
}
