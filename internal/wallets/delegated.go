package wallets

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Delegated key statuses (R-EWA-23).
const (
	KeyPending = "PENDING"
	KeyActive  = "ACTIVE"
	KeyRevoked = "REVOKED"
)

// OpDelegatedKeyCreate is the signed operation of POST /auth/delegated-keys.
const OpDelegatedKeyCreate = "DELEGATED_KEY_CREATE"

// MaxNickname bounds a delegated key's nickname (R-EWA-19).
const MaxNickname = 256

// DelegatedKey is a delegated key as the API shows it: never its private
// key (R-EWA-25).
type DelegatedKey struct {
	ID              string    `json:"id"`
	AccountID       string    `json:"accountId"`
	CardID          string    `json:"cardId,omitempty"`
	FundingSourceID string    `json:"fundingSourceId,omitempty"`
	AgentID         string    `json:"agentId,omitempty"`
	PublicKey       string    `json:"publicKey"`
	Nickname        string    `json:"nickname"`
	Status          string    `json:"status"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// DelegatedKeyRequest is the body of POST /auth/delegated-keys.
type DelegatedKeyRequest struct {
	InternalAccountID *string `json:"internalAccountId"`
	Nickname          *string `json:"nickname"`
	CardID            *string `json:"cardId"`
	AgentID           *string `json:"agentId"`
}

// Validate checks the request on its own (R-EWA-19, R-EWA-20).
func (r *DelegatedKeyRequest) Validate() error {
	var f apierr.Fields
	switch {
	case r.InternalAccountID == nil:
		f.Add("internalAccountId", apierr.Required, "is required: the EMBEDDED_WALLET internal account")
	case !id.Valid(id.InternalAccount, *r.InternalAccountID):
		f.Add("internalAccountId", apierr.Pattern, "must be an internal account id such as InternalAccount:0199a1b2-…")
	}
	switch {
	case r.Nickname == nil:
		f.Add("nickname", apierr.Required, "is required: a label of 1 to %d characters", MaxNickname)
	case utf8.RuneCountInString(*r.Nickname) < 1:
		f.Add("nickname", apierr.MinLength, "must not be empty")
	case utf8.RuneCountInString(*r.Nickname) > MaxNickname:
		f.Add("nickname", apierr.MaxLength, "must be at most %d characters", MaxNickname)
	}
	switch {
	case (r.CardID == nil) == (r.AgentID == nil):
		f.Add("cardId", apierr.Required, "exactly one of cardId and agentId is required")
	case r.CardID != nil && !id.Valid(id.Card, *r.CardID):
		f.Add("cardId", apierr.Pattern, "must be a card id such as Card:0199a1b2-…")
	case r.AgentID != nil && !id.Valid(id.Agent, *r.AgentID):
		f.Add("agentId", apierr.Pattern, "must be an agent id such as Agent:0199a1b2-…")
	}
	return f.Err()
}

// Delegation is where the cards and agents capabilities plug in.
type Delegation interface {
	// CardFundingSource checks that the card is funded by the wallet and
	// returns the funding source the key is for.
	CardFundingSource(ctx context.Context, tx *store.Tx, t store.Tenant, cardID string, wallet store.InternalAccount) (string, error)
	// CheckAgent checks that the wallet belongs to the agent's customer
	// (R-EWA-22).
	CheckAgent(ctx context.Context, tx *store.Tx, t store.Tenant, agentID string, wallet store.InternalAccount) error
	// Delegated runs in the transaction that creates a key: cards waiting
	// for delegation on its funding source become ACTIVE (R-CARD-23).
	Delegated(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error
	// Revoked runs in the transaction that revokes a key: cards using it
	// move to PENDING_AUTH (R-EWA-30).
	Revoked(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error
}

func delegatedKeyAD(keyID string) []byte { return []byte("delegated-key|" + keyID) }

func renderDelegated(k store.DelegatedKey) DelegatedKey {
	return DelegatedKey{ID: k.ID, AccountID: k.AccountID, CardID: k.CardID, FundingSourceID: k.FundingSourceID,
		AgentID: k.AgentID, PublicKey: k.PublicKey, Nickname: k.Nickname, Status: k.Status,
		CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt}
}

// CreateDelegatedKey creates an ACTIVE delegated key by signed retry signed
// by a session of the wallet (R-EWA-21). The service generates the key pair
// and keeps the private key sealed (R-EWA-24, R-EWA-25).
func (s *Service) CreateDelegatedKey(ctx context.Context, t store.Tenant, in signedretry.Incoming, req DelegatedKeyRequest) (Outcome[DelegatedKey], error) {
	if err := req.Validate(); err != nil {
		return Outcome[DelegatedKey]{}, err
	}
	var out Outcome[DelegatedKey]
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		out = Outcome[DelegatedKey]{}
		a, err := wallet(ctx, tx.Q, t, *req.InternalAccountID)
		if err != nil {
			return err
		}
		row := store.DelegatedKey{ID: id.New(id.DelegatedKey), Tenant: t, AccountID: a.ID, Nickname: *req.Nickname, Status: KeyActive}
		if err := s.bindDelegation(ctx, tx, t, a, req, &row); err != nil {
			return err
		}
		if !in.Retry() {
			target := map[string]string{"nickname": row.Nickname, "cardId": row.CardID, "agentId": row.AgentID}
			ch, err := signedretry.Issue(ctx, tx, t, in, signedretry.Op{AccountID: a.ID, Operation: OpDelegatedKeyCreate, Parameters: target})
			out.Challenge = &AuthChallenge{Challenge: ch}
			return err
		}
		claimed, err := signedretry.Claim(ctx, tx, t, in, sessionKey(ctx, tx, t, "", ""))
		if err != nil {
			return err
		}
		k, err := NewKey()
		if err != nil {
			return err
		}
		if row.SealedPrivateKey, err = s.sealKey(k, delegatedKeyAD(row.ID)); err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		row.PublicKey, row.CreatedAt, row.UpdatedAt = CompressedHex(&k.PublicKey), now, now
		if err := tx.InsertDelegatedKey(ctx, row); err != nil {
			return err
		}
		if s.Delegation != nil {
			if err := s.Delegation.Delegated(ctx, tx, row); err != nil {
				return err
			}
		}
		out.Result = renderDelegated(row)
		return signedretry.Complete(ctx, tx, claimed)
	})
	return out, err
}

// bindDelegation fills the card or agent of a new key, checked by the
// Delegation seam when one is configured. Without it (no cards or agents
// capability on this server) the ids are kept as sent, format-checked.
func (s *Service) bindDelegation(ctx context.Context, tx *store.Tx, t store.Tenant, a store.InternalAccount, req DelegatedKeyRequest, row *store.DelegatedKey) error {
	if req.CardID != nil {
		row.CardID = *req.CardID
		if s.Delegation != nil {
			fs, err := s.Delegation.CardFundingSource(ctx, tx, t, row.CardID, a)
			row.FundingSourceID = fs
			return err
		}
		return nil
	}
	row.AgentID = *req.AgentID
	if s.Delegation != nil {
		return s.Delegation.CheckAgent(ctx, tx, t, row.AgentID, a)
	}
	return nil
}

func delegatedNotFound(keyID string) error {
	return apierr.NotFound("NOT_FOUND", "Delegated key "+short(keyID))
}

// GetDelegatedKey returns one key (R-EWA-28).
func (s *Service) GetDelegatedKey(ctx context.Context, t store.Tenant, keyID string) (DelegatedKey, error) {
	if !id.Valid(id.DelegatedKey, keyID) {
		return DelegatedKey{}, delegatedNotFound(keyID)
	}
	k, err := s.DB.Read().GetDelegatedKey(ctx, t, keyID, false)
	if errors.Is(err, store.ErrNotFound) {
		return DelegatedKey{}, delegatedNotFound(keyID)
	}
	return renderDelegated(k), err
}

// ListDelegatedKeys lists keys of an account or a funding source, every
// status (R-EWA-26, R-EWA-27).
func (s *Service) ListDelegatedKeys(ctx context.Context, t store.Tenant, accountID, fundingSourceID string) ([]DelegatedKey, error) {
	if accountID == "" && fundingSourceID == "" {
		var f apierr.Fields
		f.Add("accountId", apierr.Required, "accountId or fundingSourceId is required")
		return nil, f.Err()
	}
	rows, err := s.DB.Read().ListDelegatedKeys(ctx, t, accountID, fundingSourceID)
	if err != nil {
		return nil, err
	}
	out := make([]DelegatedKey, len(rows))
	for i, k := range rows {
		out[i] = renderDelegated(k)
	}
	return out, nil
}

// RevokeDelegatedKey revokes a key (R-EWA-29): it can sign no more, and the
// Delegation seam moves cards using it to PENDING_AUTH in the same
// transaction. Revoking a revoked key changes nothing.
func (s *Service) RevokeDelegatedKey(ctx context.Context, t store.Tenant, keyID string) error {
	if !id.Valid(id.DelegatedKey, keyID) {
		return delegatedNotFound(keyID)
	}
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		k, err := tx.GetDelegatedKey(ctx, t, keyID, true)
		if errors.Is(err, store.ErrNotFound) {
			return delegatedNotFound(keyID)
		}
		if err != nil || k.Status == KeyRevoked {
			return err
		}
		if err := tx.SetDelegatedKeyStatus(ctx, t, k.ID, KeyRevoked, tx.Now().UTC().Truncate(time.Microsecond)); err != nil {
			return err
		}
		k.Status = KeyRevoked
		if s.Delegation != nil {
			return s.Delegation.Revoked(ctx, tx, k)
		}
		return nil
	})
}

// ActiveDelegatedKey returns a key that may sign for the wallet: ACTIVE
// (R-EWA-31), of that wallet, matching publicKey. Agents' quote executions
// use it.
func (s *Service) ActiveDelegatedKey(ctx context.Context, q store.Q, t store.Tenant, keyID, accountID, publicKey string) (store.DelegatedKey, error) {
	k, err := q.GetDelegatedKey(ctx, t, keyID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (k.Status != KeyActive || k.AccountID != accountID || k.PublicKey != publicKey)) {
		return store.DelegatedKey{}, apierr.New("WALLET_SIGNATURE_INVALID", "The delegated key is not an active key of this wallet")
	}
	return k, err
}
