package wallets

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

func renderSession(s store.WalletSession, c store.WalletCredential) AuthSession {
	return AuthSession{ID: s.ID, AccountID: s.AccountID, AuthMethodID: c.ID, Type: c.Type, Nickname: c.Nickname,
		PublicKey: s.PublicKey, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, ExpiresAt: s.ExpiresAt}
}

// newSessionTx opens a session of a credential bound to a client key. A
// compressed key is the client-held-key model: the client keeps the private
// key. An uncompressed key is the deprecated legacy flow: the service
// generates the session key and returns it sealed to the client's key
// (encryptedSessionSigningKey, HPKE with InfoLegacy).
func (s *Service) newSessionTx(ctx context.Context, tx *store.Tx, c *store.WalletCredential, clientKey string) (AuthSession, error) {
	pub, compressed, err := ParsePublicKey(clientKey)
	if err != nil {
		return AuthSession{}, err
	}
	sessionKey, sealed := strings.ToLower(clientKey), ""
	if !compressed {
		k, err := NewKey()
		if err != nil {
			return AuthSession{}, err
		}
		to, err := ecdhKey(pub)
		if err != nil {
			return AuthSession{}, err
		}
		if sealed, err = hpkeSeal(to, InfoLegacy, scalar(k)); err != nil {
			return AuthSession{}, err
		}
		sessionKey = CompressedHex(&k.PublicKey)
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	row := store.WalletSession{ID: id.New(id.Session), Tenant: c.Tenant, AccountID: c.AccountID, CredentialID: c.ID,
		PublicKey: sessionKey, ExpiresAt: now.Add(SessionTTL), CreatedAt: now, UpdatedAt: now}
	if c.VerifiedAt == nil {
		c.VerifiedAt, c.UpdatedAt = &now, now
		if err := tx.UpdateWalletCredential(ctx, *c); err != nil {
			return AuthSession{}, err
		}
	}
	if err := tx.InsertWalletSession(ctx, row); err != nil {
		return AuthSession{}, err
	}
	out := renderSession(row, *c)
	out.EncryptedSessionSigningKey = sealed
	return out, nil
}

// otpLogin is what an OTP_LOGIN request keeps for its completion.
type otpLogin struct {
	CredentialID string `json:"credentialId"`
	PublicKey    string `json:"publicKey"`
}

// VerifyCredential verifies a credential and opens a session. OTP: the
// first call opens the sealed attempt, checks the code (attempts limited)
// and answers with a payload binding the attempt's public key (R-EWA-06);
// the signed retry, stamped with that key, opens the session (R-EWA-07).
func (s *Service) VerifyCredential(ctx context.Context, t store.Tenant, in signedretry.Incoming, credID string, req VerifyRequest) (Outcome[AuthSession], error) {
	if err := req.Validate(); err != nil {
		return Outcome[AuthSession]{}, err
	}
	switch *req.Type {
	case TypeOAuth:
		return s.verifyOAuth(ctx, t, credID, req)
	case TypePasskey:
		return s.verifyPasskey(ctx, t, in, credID, req)
	}
	var out Outcome[AuthSession]
	var refusal error
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out, refusal = Outcome[AuthSession]{}, nil
		c, err := liveCredential(ctx, tx.Q, t, credID, true)
		if err != nil {
			return err
		}
		if c.Type != *req.Type {
			return typeMismatch(c.Type)
		}
		if in.Retry() {
			return s.completeOTPLogin(ctx, tx, t, in, &c, &out)
		}
		if _, _, err := ParseSealedBundle(*req.EncryptedOtpBundle); err != nil {
			return errBundle("must be the JSON {encappedPublic, ciphertext} an HPKE library produces: " + err.Error())
		}
		if c.OTPHash == "" || c.OTPTargetSealed == "" {
			return apierr.New("AUTH_CREDENTIAL_VERIFICATION_REQUIRED", "No code is outstanding for this credential; request one with POST /auth/credentials/{id}/challenge")
		}
		code, pub, err := s.openAttempt(c, *req.EncryptedOtpBundle)
		if err != nil {
			return err
		}
		refusal = checkCode(&c, code, tx.Now())
		if err := tx.UpdateWalletCredential(ctx, c); err != nil || refusal != nil {
			return err // a refusal still commits the attempt
		}
		token := make([]byte, 32)
		if _, err := rand.Read(token); err != nil {
			return err
		}
		ch, err := signedretry.Issue(ctx, tx, t, in, signedretry.Op{AccountID: c.AccountID, Operation: OpOTPLogin,
			Parameters: map[string]string{"credentialId": c.ID, "publicKey": pub, "verificationToken": hex.EncodeToString(token)},
			Params:     otpLogin{CredentialID: c.ID, PublicKey: pub}})
		out.Challenge = &AuthChallenge{Challenge: ch, Type: c.Type}
		return err
	})
	if err == nil {
		err = refusal
	}
	return out, err
}

// completeOTPLogin is the signed retry of an OTP verification: the stamp
// must be made with the key sealed in the attempt.
func (s *Service) completeOTPLogin(ctx context.Context, tx *store.Tx, t store.Tenant, in signedretry.Incoming, c *store.WalletCredential, out *Outcome[AuthSession]) error {
	var login otpLogin
	claimed, err := signedretry.Claim(ctx, tx, t, in, func(req store.SignedRequest, stamp signedretry.Stamp) error {
		if err := signedretry.Params(req, &login); err != nil || req.Operation != OpOTPLogin || login.CredentialID != c.ID {
			return apierr.NotFound("REQUEST_NOT_FOUND", "Signed request for this verification")
		}
		if stamp.PublicKey != login.PublicKey {
			return apierr.New("WALLET_SIGNATURE_INVALID", "The stamp must be made with the key sealed in encryptedOtpBundle")
		}
		return nil
	})
	if err != nil {
		return err
	}
	sess, err := s.newSessionTx(ctx, tx, c, login.PublicKey)
	if err != nil {
		return err
	}
	out.Result = sess
	return signedretry.Complete(ctx, tx, claimed)
}

// activeSession reads a session that is neither revoked nor expired, else
// SESSION_NOT_FOUND (R-EWA-18).
func activeSession(ctx context.Context, tx *store.Tx, t store.Tenant, sessionID string) (store.WalletSession, store.WalletCredential, error) {
	if !id.Valid(id.Session, sessionID) {
		return store.WalletSession{}, store.WalletCredential{}, sessionNotFound(sessionID)
	}
	sess, err := tx.GetWalletSession(ctx, t, sessionID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sess.RevokedAt != nil || !tx.Now().Before(sess.ExpiresAt))) {
		return store.WalletSession{}, store.WalletCredential{}, sessionNotFound(sessionID)
	}
	if err != nil {
		return store.WalletSession{}, store.WalletCredential{}, err
	}
	c, err := tx.GetWalletCredential(ctx, t, sess.CredentialID, false)
	if err == nil && c.RevokedAt != nil {
		return store.WalletSession{}, store.WalletCredential{}, sessionNotFound(sessionID)
	}
	return sess, c, err
}

// ListSessions returns a wallet's active sessions.
func (s *Service) ListSessions(ctx context.Context, t store.Tenant, accountID string) ([]AuthSession, error) {
	q := s.DB.Read()
	if _, err := wallet(ctx, q, t, accountID); err != nil {
		return nil, err
	}
	list, err := q.ActiveWalletSessions(ctx, t, accountID, "", q.Now())
	if err != nil {
		return nil, err
	}
	out := make([]AuthSession, 0, len(list))
	for _, sess := range list {
		c, err := q.GetWalletCredential(ctx, t, sess.CredentialID, false)
		if err != nil {
			return nil, err
		}
		out = append(out, renderSession(sess, c))
	}
	return out, nil
}

// RevokeSession revokes a session by signed retry signed by any active
// session of the wallet, itself included (R-EWA-17, R-EWA-18).
func (s *Service) RevokeSession(ctx context.Context, t store.Tenant, in signedretry.Incoming, sessionID string) (Outcome[struct{}], error) {
	var out Outcome[struct{}]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[struct{}]{}
		sess, c, err := activeSession(ctx, tx, t, sessionID)
		if err != nil {
			return err
		}
		ch, claimed, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: sess.AccountID, Operation: OpSessionRevoke,
			Parameters: map[string]string{"sessionId": sess.ID}}, c.Type, keyPolicy{})
		if err != nil || ch != nil {
			out.Challenge = ch
			return err
		}
		if _, err := tx.RevokeWalletSessions(ctx, t, sess.AccountID, "", sess.ID, tx.Now()); err != nil {
			return err
		}
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}

// RefreshSession replaces an active session by a new one bound to
// clientPublicKey, by signed retry signed with the current session's key
// (R-EWA-15, R-EWA-16). The old session is revoked with it.
func (s *Service) RefreshSession(ctx context.Context, t store.Tenant, in signedretry.Incoming, sessionID string, req ClientKeyRequest) (Outcome[AuthSession], error) {
	if err := req.ValidateRequired(); err != nil {
		return Outcome[AuthSession]{}, err
	}
	var out Outcome[AuthSession]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[AuthSession]{}
		sess, c, err := activeSession(ctx, tx, t, sessionID)
		if err != nil {
			return err
		}
		ch, claimed, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: sess.AccountID, Operation: OpSessionRefresh,
			Parameters: map[string]string{"sessionId": sess.ID, "clientPublicKey": strings.ToLower(*req.ClientPublicKey)}}, c.Type, keyPolicy{OnlySession: sess.ID})
		if err != nil || ch != nil {
			out.Challenge = ch
			return err
		}
		if _, err := tx.RevokeWalletSessions(ctx, t, sess.AccountID, "", sess.ID, tx.Now()); err != nil {
			return err
		}
		if out.Result, err = s.newSessionTx(ctx, tx, &c, *req.ClientPublicKey); err != nil {
			return err
		}
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}

// typeMismatch refuses a verify whose type is not the credential's.
func typeMismatch(credType string) error {
	var f apierr.Fields
	f.Add("type", apierr.Enum, "must be the credential's type, %s", credType)
	return f.Err()
}
