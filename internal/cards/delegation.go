package cards

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Delegation plugs cards into embedded wallets' delegated keys
// (wallets.Delegation): a key is made for a card funded by the wallet, and a
// key's creation or revocation moves the cards it funds between ACTIVE and
// PENDING_AUTH (R-CARD-08, R-CARD-22..24).
type Delegation struct{ S *Service }

// CardFundingSource checks that the card exists, is not closed and is funded
// by the wallet, and returns its funding binding (CardFundingSource:…).
func (d Delegation) CardFundingSource(ctx context.Context, tx *store.Tx, t store.Tenant, cardID string, wallet store.InternalAccount) (string, error) {
	if !id.Valid(id.Card, cardID) {
		return "", notFound(cardID)
	}
	c, err := tx.GetCard(ctx, t, cardID, false)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound(cardID)
	}
	if err != nil {
		return "", err
	}
	if c.FundingSource != wallet.ID {
		var f apierr.Fields
		f.Add("cardId", apierr.Pattern, "the card is not funded by this wallet")
		return "", f.Err()
	}
	return c.FundingBindingID, nil
}

// CheckAgent leaves agent keys to the agents capability: this server has
// none, so the agent id is kept as sent.
func (d Delegation) CheckAgent(context.Context, *store.Tx, store.Tenant, string, store.InternalAccount) error {
	return nil
}

// Delegated runs in the transaction that creates a key: a PENDING_AUTH card
// it funds becomes ACTIVE. FROZEN and CLOSED cards keep their status.
func (d Delegation) Delegated(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error {
	return d.follow(ctx, tx, key)
}

// Revoked runs in the transaction that revokes a key: an ACTIVE card it
// funded waits for delegation (PENDING_AUTH, DELEGATION_REQUIRED).
func (d Delegation) Revoked(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error {
	return d.follow(ctx, tx, key)
}

func (d Delegation) follow(ctx context.Context, tx *store.Tx, key store.DelegatedKey) error {
	var cards []store.Card
	var err error
	switch {
	case key.AgentID != "":
		// An agent's key funds the agent's purchase cards on the wallet.
		cards, err = tx.CardsOfAgentWallet(ctx, key.Tenant, key.AgentID, key.AccountID)
	case key.CardID != "" && key.FundingSourceID != "":
		cards, err = tx.CardsOfBinding(ctx, key.Tenant, key.FundingSourceID)
	}
	if err != nil {
		return err
	}
	for i := range cards {
		if err := d.S.followFunding(ctx, tx, &cards[i]); err != nil {
			return err
		}
	}
	return nil
}
