package store_test

import (
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// Agents' purchase cards in the store, on both engines: the agent columns
// round-trip (the lock is written by UpdateCard), the agent filter lists
// only its cards, active agent keys are found by agent, the cards an agent
// key funds are found by agent and wallet, and the reveal audit is kept
// per card and tenant.
func TestAgentCards_ColumnsKeysAndAudit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		tn, a := mustAgent(t, db)
		c := mustCard(t, db, tn, a.CustomerID, "4000000000000002", nil)
		other := mustCard(t, db, tn, a.CustomerID, "4000000000000010", nil)
		wallet, _ := mustWallet(t, db, tn, a.CustomerID)
		// The agent fields are set at insert.
		agentCard := c
		agentCard.ID, agentCard.FundingBindingID = id.New(id.Card), id.New(id.CardFundingSource)
		agentCard.AgentID, agentCard.AgentKind, agentCard.FundingSource = a.ID, "MERCHANT_LOCKED", wallet
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCard(ctx, agentCard, "4000000000000028") }); err != nil {
			t.Fatal(err)
		}
		agentCard.LockedMerchant = "HARDWARE CO"
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateCard(ctx, agentCard) }); err != nil {
			t.Fatal(err)
		}
		got, err := db.Read().GetCard(ctx, tn, agentCard.ID, false)
		if err != nil || got.AgentID != a.ID || got.AgentKind != "MERCHANT_LOCKED" || got.LockedMerchant != "HARDWARE CO" {
			t.Fatalf("agent card %+v %v", got, err)
		}
		list, total, err := db.Read().ListCards(ctx, tn, store.CardFilter{AgentID: a.ID}, "", 10)
		if err != nil || total != 1 || len(list) != 1 || list[0].ID != agentCard.ID {
			t.Fatalf("agent filter: %d %v %v (others: %s)", total, list, err, other.ID)
		}
		// Active agent keys.
		now := db.Now().UTC().Truncate(time.Microsecond)
		k := store.DelegatedKey{ID: id.New(id.DelegatedKey), Tenant: tn, AccountID: wallet, AgentID: a.ID,
			PublicKey: "pk", SealedPrivateKey: "s", Nickname: "n", Status: "ACTIVE", CreatedAt: now, UpdatedAt: now}
		has := func() bool {
			ok, err := db.Read().HasActiveAgentKey(ctx, tn, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if has() {
			t.Fatal("a key before any was made")
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertDelegatedKey(ctx, k) }); err != nil {
			t.Fatal(err)
		}
		if !has() {
			t.Fatal("the ACTIVE key is not found")
		}
		var funded []store.Card
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			funded, err = tx.CardsOfAgentWallet(ctx, tn, a.ID, wallet)
			return err
		}); err != nil || len(funded) != 1 || funded[0].ID != agentCard.ID {
			t.Fatalf("cards of the agent's wallet: %v %v", funded, err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetDelegatedKeyStatus(ctx, tn, k.ID, "REVOKED", now) }); err != nil {
			t.Fatal(err)
		}
		if has() {
			t.Fatal("a revoked key counts")
		}
		// The audit.
		exp := now.Add(5 * time.Minute)
		e := store.AgentCardAudit{ID: id.New("AgentCardAudit"), Tenant: tn, CardID: agentCard.ID, ActorType: "AGENT",
			ActorID: a.ID, Action: "REVEAL", ExpiresAt: &exp, CreatedAt: now}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.InsertAgentCardAudit(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Read().AgentCardAudits(ctx, tn, agentCard.ID)
		if err != nil || len(rows) != 1 || rows[0].ActorID != a.ID || rows[0].Action != "REVEAL" || !rows[0].ExpiresAt.Equal(exp) ||
			!rows[0].CreatedAt.Equal(now) {
			t.Fatalf("audit %+v %v", rows, err)
		}
		elsewhere := store.Tenant{PlatformID: tn.PlatformID, Env: store.EnvProduction}
		if rows, err := db.Read().AgentCardAudits(ctx, elsewhere, agentCard.ID); err != nil || len(rows) != 0 {
			t.Fatalf("audit seen from another tenant: %v %v", rows, err)
		}
	})
}
