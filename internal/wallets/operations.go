package wallets

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Operations of signed requests on the wallet itself.
const (
	OpPrivacyUpdate = "PRIVACY_UPDATE"
	OpExport        = "WALLET_EXPORT"
)

// PrivacyRequest is the body of PATCH /internal-accounts/{id}.
type PrivacyRequest struct {
	PrivateEnabled *bool `json:"privateEnabled"`
}

// Validate checks the request on its own.
func (r *PrivacyRequest) Validate() error {
	var f apierr.Fields
	if r.PrivateEnabled == nil {
		f.Add("privateEnabled", apierr.Required, "is required: the only field an internal account update changes")
	}
	return f.Err()
}

// patchableWallet reads the account a PATCH names: unknown ids are
// ACCOUNT_NOT_FOUND (R-IACCT-17); accounts other than wallets have nothing
// to update.
func patchableWallet(ctx context.Context, q store.Q, t store.Tenant, accountID string) (store.InternalAccount, error) {
	if !id.Valid(id.InternalAccount, accountID) {
		return store.InternalAccount{}, accountNotFound(accountID)
	}
	a, err := q.GetInternalAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return store.InternalAccount{}, accountNotFound(accountID)
	}
	if err == nil && a.Type != typeEmbeddedWallet {
		var f apierr.Fields
		f.Add("privateEnabled", apierr.Enum, "applies to EMBEDDED_WALLET accounts only; this account is %s", a.Type)
		return store.InternalAccount{}, f.Err()
	}
	return a, err
}

// SetPrivacy changes a wallet's privateEnabled by signed retry (R-IACCT-08,
// R-IACCT-09). The caller renders the updated account.
func (s *Service) SetPrivacy(ctx context.Context, t store.Tenant, in signedretry.Incoming, accountID string, req PrivacyRequest) (Outcome[struct{}], error) {
	if err := req.Validate(); err != nil {
		return Outcome[struct{}]{}, err
	}
	var out Outcome[struct{}]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[struct{}]{}
		a, err := patchableWallet(ctx, tx.Q, t, accountID)
		if err != nil {
			return err
		}
		on := "false"
		if *req.PrivateEnabled {
			on = "true"
		}
		ch, claimed, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: a.ID, Operation: OpPrivacyUpdate,
			Parameters: map[string]string{"privateEnabled": on}}, "", keyPolicy{})
		if err != nil || ch != nil {
			out.Challenge = ch
			return err
		}
		if _, err := tx.SetInternalAccountPrivate(ctx, t, a.ID, *req.PrivateEnabled, tx.Now().UTC().Truncate(time.Microsecond)); err != nil {
			return err
		}
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}

// ExportResult is the answer of a completed export.
type ExportResult struct {
	ID                         string `json:"id"`
	EncryptedWalletCredentials string `json:"encryptedWalletCredentials,omitempty"`
	// Status is PROCESSING while an approval gates the export.
	Status string `json:"status,omitempty"`
}

// exportedCredentials is the plaintext of encryptedWalletCredentials.
type exportedCredentials struct {
	AccountID  string `json:"accountId"`
	PublicKey  string `json:"publicKey"`
	PrivateKey string `json:"privateKey"`
}

// Export hands the wallet's signing key to the customer, HPKE-sealed to the
// ephemeral clientPublicKey of the request (R-IACCT-10, R-IACCT-11). The
// key is bound into the payload and the body, so a retry with another key
// is refused (R-IACCT-14); a delivered export burns its Request-Id
// (R-IACCT-13). When the platform requires approval of exports, the first
// valid retry leaves the request PROCESSING and answers status PROCESSING;
// the byte-identical retry answers the same until the platform approves
// (ApproveExport), then delivers (R-IACCT-12).
func (s *Service) Export(ctx context.Context, t store.Tenant, in signedretry.Incoming, accountID string, req ClientKeyRequest) (Outcome[ExportResult], error) {
	if err := req.ValidateRequired(); err != nil {
		return Outcome[ExportResult]{}, err
	}
	var out Outcome[ExportResult]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[ExportResult]{}
		a, err := wallet(ctx, tx.Q, t, accountID)
		if err != nil {
			return err
		}
		ch, claimed, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: a.ID, Operation: OpExport,
			Parameters: map[string]string{"clientPublicKey": strings.ToLower(*req.ClientPublicKey)}}, "", keyPolicy{})
		if err != nil || ch != nil {
			out.Challenge = ch
			return err
		}
		if waiting, err := exportWaits(ctx, tx, t, claimed); err != nil || waiting {
			out.Result = ExportResult{ID: a.ID, Status: signedretry.StatusProcessing}
			return err
		}
		sealed, err := s.sealExport(ctx, tx.Q, t, a.ID, *req.ClientPublicKey)
		if err != nil {
			return err
		}
		out.Result = ExportResult{ID: a.ID, EncryptedWalletCredentials: sealed}
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}

// sealExport seals the wallet's key pair to the client's key (HPKE,
// InfoExport).
func (s *Service) sealExport(ctx context.Context, q store.Q, t store.Tenant, accountID, clientKey string) (string, error) {
	pub, _, err := ParsePublicKey(clientKey)
	if err != nil {
		return "", err
	}
	to, err := ecdhKey(pub)
	if err != nil {
		return "", err
	}
	k, err := s.walletPrivateKey(ctx, q, t, accountID)
	if err != nil {
		return "", err
	}
	pt := mustJSON(exportedCredentials{AccountID: accountID, PublicKey: CompressedHex(&k.PublicKey),
		PrivateKey: hexString(scalar(k))})
	return hpkeSeal(to, InfoExport, pt)
}

// VerifyQuoteStamp checks, inside a quote execution's transaction, the
// stamp over a quote's payloadToSign: it must verify and be made by an
// active session key of the source wallet (R-AUTH-13). The quote's status
// change in the same transaction makes the execution happen once.
func (s *Service) VerifyQuoteStamp(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, stamp, payload string) error {
	_, err := signedretry.VerifyPayload(stamp, payload, func(st signedretry.Stamp) error {
		_, err := sessionFor(ctx, tx.Q, t, accountID, st.PublicKey, "", "")
		return err
	})
	return err
}

// exportApproved marks, in a PROCESSING export's result, the platform's
// approval.
const exportApproved = "APPROVED"

// exportWaits reports whether a claimed export must wait for approval: one
// already PROCESSING until it is approved; a new one when the platform
// requires approval (it becomes PROCESSING).
func exportWaits(ctx context.Context, tx *store.Tx, t store.Tenant, c signedretry.Claimed) (bool, error) {
	if c.Request.Status == signedretry.StatusProcessing {
		return c.Request.Result != exportApproved, nil
	}
	cfg, err := platformconfig.EmbeddedWallets(ctx, tx.Q, t)
	if err != nil || cfg == nil || cfg.ExportRequiresApproval == nil || !*cfg.ExportRequiresApproval {
		return false, err
	}
	return true, signedretry.Processing(ctx, tx, c)
}

// ExportApproval is the body of POST /internal-accounts/{id}/export/approve.
type ExportApproval struct {
	RequestID *string `json:"requestId"`
}

// Validate checks the request on its own.
func (r *ExportApproval) Validate() error {
	var f apierr.Fields
	if r.RequestID == nil || *r.RequestID == "" {
		f.Add("requestId", apierr.Required, "is required: the requestId of the export waiting for approval")
	}
	return f.Err()
}

// WalletOperation is the data of wallet_operation.completed.
type WalletOperation struct {
	RequestID string `json:"requestId"`
	AccountID string `json:"accountId"`
	Operation string `json:"operation"`
	Status    string `json:"status"`
}

// ApproveExport is the platform's approval of an export waiting for it:
// the client's next identical retry delivers, and wallet_operation.completed
// says so (R-IACCT-15). Approving twice changes nothing more.
func (s *Service) ApproveExport(ctx context.Context, t store.Tenant, accountID string, req ExportApproval) error {
	if err := req.Validate(); err != nil {
		return err
	}
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := wallet(ctx, tx.Q, t, accountID)
		if err != nil {
			return err
		}
		notFound := apierr.NotFound("REQUEST_NOT_FOUND", "Export "+short(*req.RequestID)+" of this wallet")
		if !id.Valid(id.Request, *req.RequestID) {
			return notFound
		}
		r, err := tx.LockSignedRequest(ctx, t, *req.RequestID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (r.AccountID != a.ID || r.Operation != OpExport)) {
			return notFound
		}
		switch {
		case err != nil:
			return err
		case r.Status != signedretry.StatusProcessing:
			return apierr.Conflict("This export is not waiting for approval (it is " + r.Status + ")")
		case r.Result == exportApproved:
			return nil
		}
		if err := tx.FinishSignedRequest(ctx, t, r.ID, signedretry.StatusProcessing, exportApproved, tx.Now()); err != nil {
			return err
		}
		_, err = events.Emit(ctx, tx, t, events.WalletOperationCompleted, a.ID,
			WalletOperation{RequestID: r.ID, AccountID: a.ID, Operation: OpExport, Status: signedretry.StatusCompleted})
		return err
	})
}
