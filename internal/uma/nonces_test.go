package uma

import (
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// The replay guard is the database's, not a process's: a nonce one node
// accepted is refused by another node on the same database, a message
// signed outside the window is refused, and nonces older than the window
// are forgotten.
func TestNonces_SharedBetweenNodes(t *testing.T) {
	storetest.EachReopen(t, func(t *testing.T, open func(store.Options) *store.DB) {
		a, b := (&Service{DB: open(store.Options{})}).nonceCache(), (&Service{DB: open(store.Options{})}).nonceCache()
		now := time.Now()
		if err := a.CheckAndSaveNonce("n-1", now); err != nil {
			t.Fatalf("first use: %v", err)
		}
		if err := b.CheckAndSaveNonce("n-1", now); err == nil {
			t.Fatal("another node accepted a replayed nonce")
		}
		if err := a.CheckAndSaveNonce("n-1", now); err == nil {
			t.Fatal("the same node accepted a replayed nonce")
		}
		if err := b.CheckAndSaveNonce("n-2", now.Add(-2*nonceWindow)); err == nil {
			t.Fatal("a message signed before the window was accepted")
		}
		if err := b.CheckAndSaveNonce("n-3", now.Add(10*time.Minute)); err == nil {
			t.Fatal("a message signed in the future was accepted")
		}
		// A nonce is kept for the window only. ("old" is a minute inside the
		// window: the window is checked against the wall clock, which moves
		// on while the test runs.)
		if err := a.CheckAndSaveNonce("old", now.Add(-nonceWindow+time.Minute)); err != nil {
			t.Fatal(err)
		}
		b.PurgeNoncesOlderThan(now.Add(-nonceWindow + 2*time.Minute))
		if err := a.CheckAndSaveNonce("old", now.Add(-nonceWindow+time.Minute)); err != nil {
			t.Fatalf("a purged nonce is forgotten: %v", err)
		}
		if err := a.CheckAndSaveNonce("n-1", now); err == nil {
			t.Fatal("the purge forgot a nonce inside the window")
		}
	})
}
