package wallets

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

const typeEmbeddedWallet = "EMBEDDED_WALLET"

func accountNotFound(accountID string) error {
	return apierr.NotFound("ACCOUNT_NOT_FOUND", "Embedded wallet "+short(accountID))
}

func credentialNotFound(credID string) error {
	return apierr.NotFound("AUTH_METHOD_NOT_FOUND", "Credential "+short(credID))
}

func sessionNotFound(sessionID string) error {
	return apierr.NotFound("SESSION_NOT_FOUND", "Active session "+short(sessionID))
}

// short keeps client-sent ids short in reasons.
func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// wallet reads an EMBEDDED_WALLET account of the tenant through q; any other
// account, or another tenant's, is ACCOUNT_NOT_FOUND.
func wallet(ctx context.Context, q store.Q, t store.Tenant, accountID string) (store.InternalAccount, error) {
	if !id.Valid(id.InternalAccount, accountID) {
		return store.InternalAccount{}, accountNotFound(accountID)
	}
	a, err := q.GetInternalAccount(ctx, t, accountID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Type != typeEmbeddedWallet) {
		return store.InternalAccount{}, accountNotFound(accountID)
	}
	return a, err
}

// liveCredential reads a credential of the tenant that is not revoked (lock:
// row lock on PostgreSQL).
func liveCredential(ctx context.Context, q store.Q, t store.Tenant, credID string, lock bool) (store.WalletCredential, error) {
	if !id.Valid(id.AuthMethod, credID) {
		return store.WalletCredential{}, credentialNotFound(credID)
	}
	c, err := q.GetWalletCredential(ctx, t, credID, lock)
	if errors.Is(err, store.ErrNotFound) || (err == nil && c.RevokedAt != nil) {
		return store.WalletCredential{}, credentialNotFound(credID)
	}
	return c, err
}

var errNotSessionKey = apierr.New("WALLET_SIGNATURE_INVALID",
	"The stamp's key is not the key of an active session of a verified credential on this wallet")

// sessionKey is the key policy of wallet operations (R-AUTH-12): the stamp's
// key must be that of an active session, of a live verified credential, on
// the request's wallet; not of excludeCredential (credential revocation
// must be signed by another credential, R-EWA-13); and, when onlySession is
// set, of that session (refresh signs with the current session key).
func sessionKey(ctx context.Context, tx *store.Tx, t store.Tenant, excludeCredential, onlySession string) signedretry.Authorize {
	return func(req store.SignedRequest, stamp signedretry.Stamp) error {
		_, err := sessionFor(ctx, tx.Q, t, req.AccountID, stamp.PublicKey, excludeCredential, onlySession)
		return err
	}
}

// sessionFor finds the active session of the wallet bound to publicKey
// under the policy of sessionKey.
func sessionFor(ctx context.Context, q store.Q, t store.Tenant, accountID, publicKey, excludeCredential, onlySession string) (store.WalletSession, error) {
	list, err := q.ActiveWalletSessions(ctx, t, accountID, publicKey, q.Now())
	if err != nil {
		return store.WalletSession{}, err
	}
	excluded := false
	for _, s := range list {
		switch {
		case s.CredentialID == excludeCredential:
			excluded = true
		case onlySession != "" && s.ID != onlySession:
		default:
			return s, nil
		}
	}
	if excluded {
		return store.WalletSession{}, apierr.New("WALLET_SIGNATURE_INVALID",
			"A credential cannot sign its own revocation; sign with a session of another verified credential on this wallet")
	}
	if onlySession != "" {
		return store.WalletSession{}, apierr.New("WALLET_SIGNATURE_INVALID",
			"A session refresh must be signed with the key of the session being refreshed")
	}
	return store.WalletSession{}, errNotSessionKey
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("wallets: " + err.Error())
	}
	return b
}
