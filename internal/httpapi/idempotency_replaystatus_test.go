package httpapi

import (
	"net/http"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
)

// replayEffects registers POST /replay-effects: like POST /effects, but
// with replayStatus 200 (as POST /internal-accounts): its effect is recorded
// in-transaction with status 201.
func (e *env) replayEffects() {
	e.srv.handle(route{pattern: "POST /replay-effects", need: 1, idempotent: true, replayStatus: http.StatusOK, h: func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Name string `json:"name"`
			Fail bool   `json:"fail"`
		}
		if err := jsonx.Decode(bodyOf(r), &req); err != nil {
			return err
		}
		if req.Fail {
			return apierr.InvalidInput("fail on request")
		}
		out := map[string]string{"id": id.New(id.Platform), "name": req.Name}
		recordIdemStatus(r, http.StatusCreated)
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
	e.undocumented["/"+Version+"/replay-effects"] = true
}

// R-IDEM-08: a route with replayStatus answers its first success with the
// recorded status and replays it with replayStatus, same body, one effect;
// a stored error replays as it was.
func TestIdempotency_ReplayStatus_R_IDEM_08(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.replayEffects()
		first := e.do("POST", "/replay-effects", `{"name":"rs"}`, key("rs-1"))
		expect(t, first, http.StatusCreated, "")
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatal("the first response is marked as a replay")
		}
		second := e.do("POST", "/replay-effects", `{"name":"rs"}`, key("rs-1"))
		expect(t, second, http.StatusOK, "")
		if string(second.Body) != string(first.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %s, first %s", second.Body, first.Body)
		}
		if n := e.countEffects(t, "rs"); n != 1 {
			t.Fatalf("%d effects", n)
		}
		// Different body, same key: 409 as on every idempotent route.
		expect(t, e.do("POST", "/replay-effects", `{"name":"other"}`, key("rs-1")), http.StatusConflict, "CONFLICT")

		// A stored 400 replays as 400.
		expect(t, e.do("POST", "/replay-effects", `{"fail":true}`, key("rs-2")), http.StatusBadRequest, "INVALID_INPUT")
		expect(t, e.do("POST", "/replay-effects", `{"fail":true}`, key("rs-2")), http.StatusBadRequest, "INVALID_INPUT")

		// Routes without replayStatus replay the stored status.
		e.effects()
		expect(t, e.do("POST", "/effects", `{"name":"plain"}`, key("rs-3")), http.StatusCreated, "")
		expect(t, e.do("POST", "/effects", `{"name":"plain"}`, key("rs-3")), http.StatusCreated, "")
	})
}
