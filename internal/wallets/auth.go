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

// keyPolicy narrows who may sign an operation (see sessionKey).
type keyPolicy struct {
	// ExcludeCredential's sessions may not sign (a credential's own
	// revocation, R-EWA-13).
	ExcludeCredential string
	// OnlySession, when set, is the one session that may sign (refresh).
	OnlySession string
}

// gate is the signed-retry gate of every wallet operation, in the
// operation's transaction. A first step records op and returns its
// challenge (the caller answers 202 with it; credType is the credential
// type the answer names, if any). A retry is claimed: the stamp's session
// and its credential are loaded and checked under the key policy
// (sessionKey). When err is nil exactly one of the challenge and the claim
// is set; the caller completes the claim with the operation's effect.
func gate(ctx context.Context, tx *store.Tx, t store.Tenant, in signedretry.Incoming, op signedretry.Op, credType string, p keyPolicy) (*AuthChallenge, signedretry.Claimed, error) {
	if !in.Retry() {
		ch, err := signedretry.Issue(ctx, tx, t, in, op)
		if err != nil {
			return nil, signedretry.Claimed{}, err
		}
		return &AuthChallenge{Challenge: ch, Type: credType}, signedretry.Claimed{}, nil
	}
	claimed, err := signedretry.Claim(ctx, tx, t, in, sessionKey(ctx, tx, t, p.ExcludeCredential, p.OnlySession))
	return nil, claimed, err
}

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
