package wallets

import (
	"context"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"github.com/paymentsd/paymentsd/internal/store"
)

// agentKey returns the agent's ACTIVE delegated key on the wallet.
func agentKey(ctx context.Context, q store.Q, t store.Tenant, agentID, accountID string) (store.DelegatedKey, error) {
	keys, err := q.ListDelegatedKeys(ctx, t, accountID, "")
	if err != nil {
		return store.DelegatedKey{}, err
	}
	for _, k := range keys {
		if k.AgentID == agentID && k.Status == KeyActive {
			return k, nil
		}
	}
	return store.DelegatedKey{}, apierr.Forbidden("The agent has no ACTIVE delegated key on embedded wallet " + accountID +
		": create one with POST /auth/delegated-keys (agentId) before the agent executes from it")
}

// SignAsAgent stamps an embedded wallet's payloadToSign with the agent's
// ACTIVE delegated key on that wallet, inside the execution's transaction
// (R-AGENT-33). The private key is opened only here and never leaves.
func (s *Service) SignAsAgent(ctx context.Context, tx *store.Tx, t store.Tenant, agentID, accountID, payload string) (string, error) {
	k, err := agentKey(ctx, tx.Q, t, agentID, accountID)
	if err != nil {
		return "", err
	}
	priv, err := s.openKey(k.SealedPrivateKey, delegatedKeyAD(k.ID))
	if err != nil {
		return "", err
	}
	return signedretry.Sign(priv, payload)
}

// VerifyAgentStamp checks a stamp over a payload: it must verify and be
// made by the agent's ACTIVE delegated key of the wallet (R-EWA-31).
func (s *Service) VerifyAgentStamp(agentID string) func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, stamp, payload string) error {
	return func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, stamp, payload string) error {
		_, err := signedretry.VerifyPayload(stamp, payload, func(st signedretry.Stamp) error {
			k, err := agentKey(ctx, tx.Q, t, agentID, accountID)
			if err != nil {
				return err
			}
			_, err = s.ActiveDelegatedKey(ctx, tx.Q, t, k.ID, accountID, st.PublicKey)
			return err
		})
		return err
	}
}
