package wallets

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

// OpContactUpdate is the signed operation of a customer contact change.
const OpContactUpdate = "CONTACT_UPDATE"

// contactParams is what a contact change's first step keeps: the tied
// credentials it will change, to detect a set that changed meanwhile.
type contactParams struct {
	Credentials []string `json:"credentials"`
}

// ContactChange is the customers service's hook: changing the email
// (phone number) of a customer whose embedded wallets hold EMAIL_OTP
// (SMS_OTP) credentials is a signed retry, signed by a session of that
// wallet; on the retry the tied credentials change in the update's
// transaction, so they and the customer change together (R-AUTH-13).
// Changing both in one request is refused.
func (s *Service) ContactChange(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, email, phone *string) (any, error) {
	tied, accountID, err := tiedCredentials(ctx, tx, t, customerID, email != nil, phone != nil)
	if err != nil || len(tied) == 0 {
		return nil, err
	}
	if email != nil && phone != nil {
		return nil, apierr.InvalidInput("email and phoneNumber cannot change in one request while the customer's embedded wallets hold OTP credentials; send two requests")
	}
	typ, value := TypeEmailOTP, email
	if phone != nil {
		typ, value = TypeSMSOTP, phone
	}
	identity := strings.ToLower(*value)
	if taken, err := tx.WalletCredentialIdentityTaken(ctx, t, typ, identity); err != nil || taken {
		if err == nil {
			err = identityTaken(typ)
		}
		return nil, err
	}
	ids := make([]string, len(tied))
	for i, c := range tied {
		ids[i] = c.ID
	}
	in, _ := signedretry.FromContext(ctx)
	ch, claimed, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: accountID, Operation: OpContactUpdate,
		Parameters: map[string]string{"type": typ, "value": *value, "credentials": strings.Join(ids, ",")},
		Params:     contactParams{Credentials: ids}}, typ, keyPolicy{})
	if err != nil || ch != nil {
		return ch, err
	}
	var p contactParams
	if err := signedretry.Params(claimed.Request, &p); err != nil || !slices.Equal(p.Credentials, ids) {
		return nil, apierr.Newf(typ+"_CREDENTIAL_SET_CHANGED", "The customer's %s credentials changed since the first request; start again", typ)
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	for _, c := range tied {
		c.Nickname, c.Identity, c.UpdatedAt = *value, identity, now
		if err := tx.UpdateWalletCredential(ctx, c); err != nil {
			return nil, err
		}
	}
	return nil, signedretry.Complete(ctx, tx, claimed)
}

// tiedCredentials returns the live EMAIL_OTP (email) and SMS_OTP (phone)
// credentials of the customer's wallets, and the wallet that signs.
func tiedCredentials(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, email, phone bool) ([]store.WalletCredential, string, error) {
	accts, err := tx.InternalAccountsOfOwner(ctx, t, customerID)
	if err != nil {
		return nil, "", err
	}
	var out []store.WalletCredential
	signer := ""
	for _, a := range accts {
		if a.Type != typeEmbeddedWallet {
			continue
		}
		creds, err := tx.WalletCredentials(ctx, t, a.ID)
		if err != nil {
			return nil, "", err
		}
		for _, c := range creds {
			if (email && c.Type == TypeEmailOTP) || (phone && c.Type == TypeSMSOTP) {
				out = append(out, c)
				if signer == "" {
					signer = a.ID
				}
			}
		}
	}
	return out, signer, nil
}
