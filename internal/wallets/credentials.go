package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Operations of signed requests.
const (
	OpCredentialCreate = "CREDENTIAL_CREATE"
	OpCredentialRevoke = "CREDENTIAL_REVOKE"
	OpOTPLogin         = "OTP_LOGIN"
	OpSessionRevoke    = "SESSION_REVOKE"
	OpSessionRefresh   = "SESSION_REFRESH"
)

func renderCredential(c store.WalletCredential) AuthMethod {
	out := AuthMethod{ID: c.ID, AccountID: c.AccountID, Type: c.Type, Nickname: c.Nickname,
		Verified: c.VerifiedAt != nil, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.Type == TypePasskey {
		out.CredentialID = c.Identity
	}
	return out
}

func anyVerified(creds []store.WalletCredential) bool {
	for _, c := range creds {
		if c.VerifiedAt != nil {
			return true
		}
	}
	return false
}

// CreateCredential adds a credential to a wallet. The first credentials of
// a wallet (while none is verified) are added at once; afterwards adding one
// is a signed retry by a session of a verified credential on the wallet. An
// OTP credential gets its first code, sent after the commit.
func (s *Service) CreateCredential(ctx context.Context, t store.Tenant, in signedretry.Incoming, req CreateCredentialRequest) (Outcome[AuthMethod], error) {
	if err := req.Validate(); err != nil {
		return Outcome[AuthMethod]{}, err
	}
	var oauth *oauthIdentity
	if *req.Type == TypeOAuth {
		// The signed retry repeats the body step 1 checked fresh: the
		// token's signature and identity are checked again, not its age.
		id, err := s.oauthToken(ctx, t, *req.OidcToken, !in.Retry())
		if err != nil {
			return Outcome[AuthMethod]{}, err
		}
		oauth = &id
	}
	var out Outcome[AuthMethod]
	var issued *issuedOTP
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out, issued = Outcome[AuthMethod]{}, nil
		a, err := wallet(ctx, tx.Q, t, *req.AccountID)
		if err != nil {
			return err
		}
		if err := s.canSend(t.Env, *req.Type); err != nil {
			return err
		}
		creds, err := tx.WalletCredentials(ctx, t, a.ID)
		if err != nil {
			return err
		}
		var claimed *signedretry.Claimed
		if anyVerified(creds) {
			ch, c, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: a.ID, Operation: OpCredentialCreate,
				Parameters: map[string]string{"type": *req.Type}}, *req.Type, keyPolicy{})
			if err != nil || ch != nil {
				out.Challenge = ch
				return err
			}
			claimed = &c
		}
		cred, otp, err := s.newCredentialTx(ctx, tx, t, a, creds, req, oauth)
		if err != nil {
			return err
		}
		out.Result, issued = cred, otp
		if claimed != nil {
			return signedretry.Complete(ctx, tx, *claimed)
		}
		return nil
	})
	if err != nil {
		return Outcome[AuthMethod]{}, err
	}
	if issued != nil {
		if err := s.send(ctx, *issued); err != nil {
			return Outcome[AuthMethod]{}, err
		}
		out.Result.OtpEncryptionTargetBundle = issued.bundle
	}
	return out, nil
}

// contact is the customer's email and phone number.
type contact struct {
	Email       *string `json:"email"`
	PhoneNumber *string `json:"phoneNumber"`
}

func customerContact(ctx context.Context, q store.Q, t store.Tenant, customerID string) (contact, error) {
	c, err := q.GetCustomer(ctx, t, customerID, false)
	if err != nil {
		return contact{}, err
	}
	var p contact
	if err := json.Unmarshal(c.Profile, &p); err != nil {
		return contact{}, fmt.Errorf("wallets: customer profile: %w", err)
	}
	return p, nil
}

// newCredentialTx checks and stores a credential of req's type (an OAUTH
// one bound to the identity of its verified token).
func (s *Service) newCredentialTx(ctx context.Context, tx *store.Tx, t store.Tenant, a store.InternalAccount, creds []store.WalletCredential, req CreateCredentialRequest, oauth *oauthIdentity) (AuthMethod, *issuedOTP, error) {
	typ := *req.Type
	for _, c := range creds {
		if c.Type == typ && (typ == TypeEmailOTP || typ == TypeSMSOTP) {
			return AuthMethod{}, nil, apierr.Newf(typ+"_CREDENTIAL_ALREADY_EXISTS",
				"This wallet already has a %s credential (%s); one per wallet", typ, c.ID)
		}
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	c := store.WalletCredential{ID: id.New(id.AuthMethod), Tenant: t, AccountID: a.ID, Type: typ, Details: []byte(`{}`),
		CreatedAt: now, UpdatedAt: now}
	switch typ {
	case TypeEmailOTP, TypeSMSOTP:
		p, err := customerContact(ctx, tx.Q, t, a.CustomerID)
		if err != nil {
			return AuthMethod{}, nil, err
		}
		field, value := "email", p.Email
		if typ == TypeSMSOTP {
			field, value = "phoneNumber", p.PhoneNumber
		}
		if value == nil || *value == "" {
			return AuthMethod{}, nil, apierr.Newf(apierr.CodeInvalidInput,
				"The wallet's customer has no %s; set it with PATCH /customers/{customerId} first", field)
		}
		c.Nickname, c.Identity = *value, strings.ToLower(*value)
	case TypeOAuth:
		c.Nickname, c.Identity, c.Details = oauth.nickname(), oauth.identity(), mustJSON(oauth)
	case TypePasskey:
		if err := registerPasskey(ctx, tx, &c, req); err != nil {
			return AuthMethod{}, nil, err
		}
	default:
		return AuthMethod{}, nil, apierr.InvalidInput("Unsupported credential type " + typ)
	}
	taken, err := tx.WalletCredentialIdentityTaken(ctx, t, typ, c.Identity)
	if err != nil {
		return AuthMethod{}, nil, err
	}
	if taken {
		return AuthMethod{}, nil, identityTaken(typ)
	}
	var issued *issuedOTP
	if typ == TypeEmailOTP || typ == TypeSMSOTP {
		o, err := s.issueOTPTx(ctx, tx, &c)
		if err != nil {
			return AuthMethod{}, nil, err
		}
		issued = &o
	}
	if err := tx.InsertWalletCredential(ctx, c); errors.Is(err, store.ErrConflict) {
		return AuthMethod{}, nil, identityTaken(typ)
	} else if err != nil {
		return AuthMethod{}, nil, err
	}
	return renderCredential(c), issued, nil
}

func identityTaken(typ string) error {
	switch typ {
	case TypeEmailOTP:
		return apierr.New("EMAIL_OTP_EMAIL_ALREADY_EXISTS", "This email address is already the EMAIL_OTP credential of a wallet")
	case TypeSMSOTP:
		return apierr.New("SMS_OTP_PHONE_NUMBER_ALREADY_EXISTS", "This phone number is already the SMS_OTP credential of a wallet")
	case TypePasskey:
		return apierr.New("PASSKEY_CREDENTIAL_ALREADY_EXISTS", "A passkey with this credentialId is already registered")
	case TypeOAuth:
		return apierr.Conflict("This identity (the token's iss and sub) is already the OAUTH credential of a wallet")
	}
	return apierr.Conflict("This " + typ + " identity is already registered on a wallet")
}

// ListCredentials returns a wallet's live credentials.
func (s *Service) ListCredentials(ctx context.Context, t store.Tenant, accountID string) ([]AuthMethod, error) {
	q := s.DB.Read()
	if _, err := wallet(ctx, q, t, accountID); err != nil {
		return nil, err
	}
	creds, err := q.WalletCredentials(ctx, t, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]AuthMethod, len(creds))
	for i, c := range creds {
		out[i] = renderCredential(c)
	}
	return out, nil
}

// ChallengeCredential issues a new code to an OTP credential (R-EWA-01), or
// a passkey login challenge bound to clientPublicKey (R-EWA-03). OAUTH
// credentials have no challenge step (R-EWA-02).
func (s *Service) ChallengeCredential(ctx context.Context, t store.Tenant, in signedretry.Incoming, credID string, req ClientKeyRequest) (any, error) {
	if err := req.ValidateOptional(); err != nil {
		return nil, err
	}
	var out any
	var issued issuedOTP
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := liveCredential(ctx, tx.Q, t, credID, true)
		if err != nil {
			return err
		}
		switch c.Type {
		case TypeOAuth:
			return apierr.InvalidInput("OAUTH credentials have no challenge step: verify with a fresh OIDC token")
		case TypePasskey:
			if err := req.ValidateRequired(); err != nil {
				return err
			}
			out, err = passkeyChallenge(ctx, tx, t, in, c, *req.ClientPublicKey)
			return err
		}
		if err := s.canSend(t.Env, c.Type); err != nil {
			return err
		}
		if issued, err = s.issueOTPTx(ctx, tx, &c); err != nil {
			return err
		}
		out = renderCredential(c)
		return tx.UpdateWalletCredential(ctx, c)
	})
	if err != nil || issued.bundle == "" {
		return out, err
	}
	if err := s.send(ctx, issued); err != nil {
		return nil, err
	}
	m := out.(AuthMethod)
	m.OtpEncryptionTargetBundle = issued.bundle
	return m, nil
}

// RevokeCredential revokes a credential and its sessions by signed retry
// signed with a session of another verified credential on the wallet
// (R-EWA-12, R-EWA-13); a wallet keeps at least one credential (R-EWA-14).
func (s *Service) RevokeCredential(ctx context.Context, t store.Tenant, in signedretry.Incoming, credID string) (Outcome[struct{}], error) {
	var out Outcome[struct{}]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[struct{}]{}
		c, err := liveCredential(ctx, tx.Q, t, credID, true)
		if err != nil {
			return err
		}
		creds, err := tx.WalletCredentials(ctx, t, c.AccountID)
		if err != nil {
			return err
		}
		if len(creds) <= 1 {
			return apierr.InvalidInput("A wallet must keep at least one credential; add another before revoking this one")
		}
		ch, claimed, err := gate(ctx, tx, t, in, signedretry.Op{AccountID: c.AccountID, Operation: OpCredentialRevoke,
			Parameters: map[string]string{"credentialId": c.ID}}, c.Type, keyPolicy{ExcludeCredential: c.ID})
		if err != nil || ch != nil {
			out.Challenge = ch
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		c.RevokedAt, c.UpdatedAt, c.OTPHash, c.OTPTargetSealed = &now, now, "", ""
		if err := tx.UpdateWalletCredential(ctx, c); err != nil {
			return err
		}
		if _, err := tx.RevokeWalletSessions(ctx, t, c.AccountID, c.ID, "", now); err != nil {
			return err
		}
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}
