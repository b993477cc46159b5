package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

// effects registers POST /effects: a stand-in for any state-changing POST. It
// stores a platform row (the effect) and records its response in the same
// transaction, as real services do. Body {"name": ..., "fail": "400"|"500"}.
// POST /effects-intx is the same route declared recordsInTx (optimistic
// claims).
func (e *env) effects() {
	e.effectsRoute("/effects", false)
	e.effectsRoute("/effects-intx", true)
}

func (e *env) effectsRoute(path string, inTx bool) {
	e.srv.handle(route{pattern: "POST " + path, need: 1, idempotent: true, recordsInTx: inTx, h: func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Name  string        `json:"name"`
			Fail  string        `json:"fail"`
			Sleep time.Duration `json:"sleep"`
		}
		if err := jsonx.Decode(bodyOf(r), &req); err != nil {
			return err
		}
		switch req.Fail {
		case "400":
			return apierr.InvalidInput("fail on request")
		case "500":
			return errors.New("transient")
		}
		time.Sleep(req.Sleep)
		out := map[string]string{"id": id.New(id.Platform), "name": req.Name}
		if c := idempotency.FromContext(r.Context()); c != nil {
			c.Status = http.StatusCreated
		}
		err := e.db.InTx(r.Context(), func(tx *store.Tx) error {
			if err := tx.InsertPlatform(r.Context(), store.Platform{ID: out["id"], Name: req.Name, CreatedAt: tx.Now()}); err != nil {
				return err
			}
			return idempotency.Record(r.Context(), tx, out)
		})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusCreated, out)
		return nil
	}})
	e.undocumented["/"+Version+path] = true
}

func (e *env) countEffects(t *testing.T, name string) int {
	t.Helper()
	ps, err := e.db.Read().ListPlatforms(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range ps {
		if p.Name == name {
			n++
		}
	}
	return n
}

func key(k string) reqOpt { return withHeader("Idempotency-Key", k) }

// R-IDEM-02: a replay returns the first status and body; one effect.
func TestIdempotency_Replay_R_IDEM_02(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		first := e.do("POST", "/effects", `{"name":"a"}`, key("k-1"))
		expect(t, first, http.StatusCreated, "")
		second := e.do("POST", "/effects", `{"name":"a"}`, key("k-1"))
		if second.Status != first.Status || string(second.Body) != string(first.Body) {
			t.Fatalf("replay %d %s, first %d %s", second.Status, second.Body, first.Status, first.Body)
		}
		if second.Header.Get("Idempotent-Replayed") != "true" {
			t.Error("replays are marked")
		}
		if n := e.countEffects(t, "a"); n != 1 {
			t.Fatalf("%d effects", n)
		}
		// Without a key every request is its own.
		e.do("POST", "/effects", `{"name":"b"}`)
		e.do("POST", "/effects", `{"name":"b"}`)
		if n := e.countEffects(t, "b"); n != 2 {
			t.Fatalf("%d effects without key", n)
		}
		// Keys are per environment: the production token's k-1 is another key.
		expect(t, e.do("POST", "/effects", `{"name":"a"}`, key("k-1"), withCreds(e.production)), http.StatusCreated, "")
	})
}

// The same key with a different request is refused with 409 and no effect.
func TestIdempotency_DifferentRequestSameKey(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		expect(t, e.do("POST", "/effects", `{"name":"a"}`, key("k")), http.StatusCreated, "")
		expect(t, e.do("POST", "/effects", `{"name":"other"}`, key("k")), http.StatusConflict, "CONFLICT")
		if n := e.countEffects(t, "other"); n != 0 {
			t.Fatal("refused request had an effect")
		}
	})
}

// R-IDEM-01: at most 255 characters.
func TestIdempotency_KeyLength_R_IDEM_01(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		r := e.do("POST", "/effects", `{"name":"long"}`, key(strings.Repeat("k", 256)))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["Idempotency-Key"] != "maxLength" {
			t.Fatalf("%s", r.Body)
		}
		if n := e.countEffects(t, "long"); n != 0 {
			t.Fatal("a refused key had an effect")
		}
		expect(t, e.do("POST", "/effects", `{"name":"ok"}`, key(strings.Repeat("k", 255))), http.StatusCreated, "")
		// Characters, not bytes: 255 two-byte characters (510 bytes) are a
		// valid key, 256 are not.
		expect(t, e.do("POST", "/effects", `{"name":"wide"}`, key(strings.Repeat("é", 255))), http.StatusCreated, "")
		replayed := e.do("POST", "/effects", `{"name":"wide"}`, key(strings.Repeat("é", 255)))
		if replayed.Header.Get("Idempotent-Replayed") != "true" || e.countEffects(t, "wide") != 1 {
			t.Fatalf("a multi-byte key was not kept whole: %d %s", replayed.Status, replayed.Body)
		}
		r = e.do("POST", "/effects", `{"name":"wider"}`, key(strings.Repeat("é", 256)))
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		if fieldErrors(t, r)["Idempotency-Key"] != "maxLength" {
			t.Fatalf("%s", r.Body)
		}
		// Routes that do not replay still refuse a malformed key.
		before := e.snapshot()
		expect(t, e.do("POST", "/tokens", `{"name":"x","permissions":["VIEW"]}`, key(strings.Repeat("k", 256))), http.StatusBadRequest, "INVALID_INPUT")
		if e.snapshot() != before {
			t.Fatal("a request with a malformed key changed data")
		}
	})
}

// R-IDEM-12: a 400 is replayed for the same key; R-IDEM-11 spirit: a 5xx is
// not stored, so a retry with the same key runs again.
func TestIdempotency_ErrorsReplayedOrRerun_R_IDEM_12(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		first := e.do("POST", "/effects", `{"name":"x","fail":"400"}`, key("k400"))
		expect(t, first, http.StatusBadRequest, "INVALID_INPUT")
		again := e.do("POST", "/effects", `{"name":"x","fail":"400"}`, key("k400"))
		if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
			t.Fatal("a 400 is replayed under the same key")
		}
		// Even a corrected request gets the stored error: the key is spent.
		fixed := e.do("POST", "/effects", `{"name":"x"}`, key("k400"))
		if fixed.Header.Get("Idempotent-Replayed") != "true" || string(fixed.Body) != string(first.Body) || e.countEffects(t, "x") != 0 {
			t.Fatal("a corrected request under a spent key must replay the stored error and have no effect")
		}
		expect(t, e.do("POST", "/effects", `{"name":"y","fail":"500"}`, key("k500")), http.StatusInternalServerError, "INTERNAL_ERROR")
		r := e.do("POST", "/effects", `{"name":"y","fail":"500"}`, key("k500"))
		if r.Header.Get("Idempotent-Replayed") == "true" {
			t.Fatal("a 500 must not be replayed")
		}
	})
}

// Concurrent duplicates have exactly one effect, and every caller gets the
// same response.
func TestIdempotency_ConcurrentDuplicates(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.effects()
		sameAnswers(t, 20, func() resp {
			return e.do("POST", "/effects", `{"name":"conc","sleep":20000000}`, key("same"))
		})
		if n := e.countEffects(t, "conc"); n != 1 {
			t.Fatalf("%d effects from 20 concurrent duplicates", n)
		}
	})
}

// Duplicates of a request in flight wait for it by reading, not by claiming
// the key again and again: on SQLite every claim is a write transaction
// that takes the one writer while the duplicates wait. Each duplicate claims
// once, and all replay the first's response when it finishes.
func TestIdempotency_WaitingDuplicatesDoNotWrite(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.driveByHand() // the node's background work writes too; count only the requests'
		e.effects()
		first := make(chan resp)
		go func() { first <- e.do("POST", "/effects", `{"name":"slow","sleep":400000000}`, key("slow")) }()
		// Wait until the first request holds its claim.
		tn := store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}
		for {
			if _, err := e.db.Read().GetIdempotencyKey(context.Background(), tn, "slow"); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		before := e.db.WriteTransactions()
		const dups = 5
		answers := make(chan resp, dups)
		for range dups {
			go func() { answers <- e.do("POST", "/effects", `{"name":"slow","sleep":400000000}`, key("slow")) }()
		}
		want := <-first
		for range dups {
			got := <-answers
			if got.Status != want.Status || string(got.Body) != string(want.Body) {
				t.Fatalf("duplicate got %d %s, first %d %s", got.Status, got.Body, want.Status, want.Body)
			}
		}
		// The first request's effect transaction, plus one claim per duplicate.
		if n := e.db.WriteTransactions() - before; n > dups+1 {
			t.Fatalf("%d write transactions while %d duplicates waited 400 ms; want at most %d", n, dups, dups+1)
		}
		if n := e.countEffects(t, "slow"); n != 1 {
			t.Fatalf("%d effects", n)
		}
	})
}

// Keys hold across a restart: a new server over the same database replays.
func TestIdempotency_SurvivesRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{})
		e.effects()
		first := e.do("POST", "/effects", `{"name":"r"}`, key("restart"))
		restarted, err := New(context.Background(), db, nil, Options{RateLimit: -1})
		if err != nil {
			t.Fatal(err)
		}
		e.srv = restarted
		e.effects()
		again := e.do("POST", "/effects", `{"name":"r"}`, key("restart"))
		if string(again.Body) != string(first.Body) || e.countEffects(t, "r") != 1 {
			t.Fatal("replay after restart differs or repeated the effect")
		}
	})
}

// A request whose holder died after committing its effect is replayed from
// the response recorded with the effect; one whose holder died before
// committing is run again once its lock expires.
func TestIdempotency_CrashRecovery(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, Options{IdempotencyLock: 50 * time.Millisecond})
		e.effects()
		ctx := context.Background()
		tn := store.Tenant{PlatformID: e.platformID, Env: store.EnvSandbox}
		// Simulate a crash before commit: a claim exists, no response, lock expired.
		hash := hashFor(t, "POST", "/"+Version+"/effects", `{"name":"c1"}`)
		if _, claimed, err := db.ClaimIdempotencyKey(ctx, tn, "crashed", hash, "dead", db.Now().Add(-time.Second)); !claimed || err != nil {
			t.Fatal(err)
		}
		r := e.do("POST", "/effects", `{"name":"c1"}`, key("crashed"))
		expect(t, r, http.StatusCreated, "")
		if e.countEffects(t, "c1") != 1 {
			t.Fatal("the retry after a crash before commit must run once")
		}
	})
}

func hashFor(t *testing.T, method, path, body string) string {
	t.Helper()
	req, _ := http.NewRequest(method, path, nil)
	req = req.WithContext(context.WithValue(context.Background(), bodyKey{}, []byte(body)))
	return requestHash(req)
}
