package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// account is a funded customer account the load moves money between; with
// -fx the customer's EUR account too, and with -payout the customer's
// external US bank account.
type account struct {
	CustomerID        string
	AccountID         string
	EURAccountID      string
	ExternalAccountID string
}

// mix is the share (0..1) of transfers of each kind besides same-currency
// internal ones.
type mix struct {
	FX     float64 // USD to the other customer's EUR account
	Payout float64 // USD to the sender's own external bank account (ACH)
	// Cards is the share of all operations that are card network
	// messages instead of transfers (cards.go); FX and Payout stay shares
	// of the transfers.
	Cards float64
	// MaxAmount is the largest ordinary amount (-max-amount): the cards'
	// limits follow it. CardWait bounds the wait for a card message's
	// effect to show (-card-wait).
	MaxAmount int64
	CardWait  time.Duration
}

// setupResult is what setup created.
type setupResult struct {
	Accounts    []account
	Currency    string
	TotalFunded int64
	Fundings    int
	Cards       []*benchCard // with -cards: the cards issued at setup, ACTIVE
}

// stall is a receiver's hiccup: every Every, counted from the receiver's
// start, it answers nothing for For (a pause, a deploy).
type stall struct{ Every, For time.Duration }

// wait is how long a delivery that arrives elapsed after the start holds
// its answer: until the end of the hiccup it arrived in, if any.
func (s stall) wait(elapsed time.Duration) time.Duration {
	if s.Every <= 0 || s.For <= 0 {
		return 0
	}
	if in := elapsed % s.Every; in < s.For {
		return s.For - in
	}
	return 0
}

// webhookSink answers every delivery 200 on loopback, after st's hiccups;
// it returns its URL, a count of the requests received so far and a stop
// function.
func webhookSink(st stall) (url string, received func() int64, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	var n atomic.Int64
	start := time.Now()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if d := st.wait(time.Since(start)); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
			}
		}
		w.WriteHeader(http.StatusOK)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // closed by stop
	return "http://" + ln.Addr().String() + "/hook", n.Load, func() { srv.Close() }, nil
}

// setup sets the webhook endpoint, creates n customers who accepted the
// current terms and funds each one's USD account with fund. With cross-currency
// transfers in the mix, the platform supports EUR as well, so every customer
// also gets a EUR account; with payouts, every customer gets an external US
// bank account.
func setup(ctx context.Context, c *client, runID, hook string, n, workers int, fund int64, m mix) (setupResult, error) {
	res := setupResult{Currency: "USD"}
	patch := map[string]any{"webhookEndpoint": hook}
	if m.FX > 0 {
		var list []map[string]any
		for _, code := range []string{"USD", "EUR"} {
			list = append(list, map[string]any{"currencyCode": code, "minAmount": 1, "maxAmount": 100_000_000_000,
				"enabledTransactionTypes": []string{"INCOMING", "OUTGOING"}})
		}
		patch["supportedCurrencies"] = list
	}
	if m.Cards > 0 {
		// Cards are issued to KYC-APPROVED customers only: the sandbox
		// approves at once without the verification paperwork.
		patch["skipVerificationPaperwork"] = true
	}
	if err := c.must(ctx, "PATCH", "/config", patch, http.StatusOK, nil); err != nil {
		return res, fmt.Errorf("configure: %w", err)
	}
	var agreements struct {
		Data []struct {
			Type    string `json:"type"`
			Version string `json:"version"`
		} `json:"data"`
	}
	if err := c.must(ctx, "GET", "/customers/agreements", nil, http.StatusOK, &agreements); err != nil {
		return res, err
	}
	if len(agreements.Data) == 0 {
		return res, fmt.Errorf("no agreements")
	}
	terms := agreements.Data[0]
	accts := make([]account, n)
	errs := make(chan error, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				a, err := setupOne(ctx, c, runID, i, terms.Type, terms.Version, fund, m)
				if err != nil {
					errs <- fmt.Errorf("customer %d: %w", i, err)
					continue
				}
				accts[i] = a
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return res, err
	}
	res.Accounts, res.TotalFunded, res.Fundings = accts, int64(n)*fund, n
	if m.Cards > 0 {
		cards, err := issueCards(ctx, c, runID, accts, workers, m.MaxAmount)
		if err != nil {
			return res, fmt.Errorf("cards: %w", err)
		}
		res.Cards = cards
	}
	return res, nil
}

func setupOne(ctx context.Context, c *client, runID string, i int, termsType, termsVersion string, fund int64, m mix) (account, error) {
	body := map[string]any{
		"customerType": "INDIVIDUAL", "fullName": fmt.Sprintf("Bench Customer %d", i), "birthDate": "1990-01-15",
		"nationality": "US", "idType": "SSN", "identifier": "123-45-6789", "countryOfIssuance": "US",
		"address": map[string]any{"line1": "1 Main St", "city": "Springfield", "state": "IL", "postalCode": "62701", "country": "US"},
		"email":   fmt.Sprintf("bench%d@example.com", i), "phoneNumber": "+14155551234",
		"agreementConsents": []any{map[string]any{"type": termsType, "acceptedAt": "2025-10-01T12:00:00Z",
			"ipAddress": "198.51.100.24", "termsVersion": termsVersion, "acceptanceMethod": "CHECKBOX"}},
	}
	custID, err := c.create(ctx, "/customers", body, fmt.Sprintf("%s-customer-%d", runID, i))
	if err != nil {
		return account{}, err
	}
	a := account{CustomerID: custID}
	if a.AccountID, err = customerAccount(ctx, c, custID, "USD"); err != nil {
		return a, err
	}
	if m.FX > 0 {
		if a.EURAccountID, err = customerAccount(ctx, c, custID, "EUR"); err != nil {
			return a, err
		}
	}
	if m.Payout > 0 {
		if a.ExternalAccountID, err = externalAccount(ctx, c, runID, i, custID); err != nil {
			return a, err
		}
	}
	r, _, err := c.doRetry(ctx, "POST", "/sandbox/internal-accounts/"+a.AccountID+"/fund", map[string]any{"amount": fund},
		fmt.Sprintf("%s-fund-%d", runID, i))
	if err != nil {
		return a, err
	}
	if r.Status != http.StatusOK {
		return a, fmt.Errorf("fund: %d %s", r.Status, r.Body)
	}
	return a, nil
}

// externalAccount creates the customer's external US bank account. The
// account number ends in 1: the sandbox holds numbers ending in 0000 for
// validation and fails those ending in 9999 (docs/sandbox.md).
func externalAccount(ctx context.Context, c *client, runID string, i int, customerID string) (string, error) {
	body := map[string]any{"customerId": customerID, "currency": "USD", "accountInfo": map[string]any{
		"accountType": "USD_ACCOUNT", "routingNumber": "021000021", "accountNumber": fmt.Sprintf("55%07d1", i),
		"bankAccountType": "CHECKING", "beneficiary": map[string]any{"beneficiaryType": "INDIVIDUAL", "fullName": fmt.Sprintf("Bench Customer %d", i)},
	}}
	return c.create(ctx, "/customers/external-accounts", body, fmt.Sprintf("%s-external-%d", runID, i))
}

// customerAccount is the customer's internal account in currency (not a
// rule-based one).
func customerAccount(ctx context.Context, c *client, customerID, currency string) (string, error) {
	var list struct {
		Data []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"data"`
	}
	if err := c.must(ctx, "GET", "/customers/internal-accounts?currency="+currency+"&customerId="+customerID, nil, http.StatusOK, &list); err != nil {
		return "", err
	}
	for _, x := range list.Data {
		if x.Type != "RULE_BASED" {
			return x.ID, nil
		}
	}
	return "", fmt.Errorf("customer %s has no %s account", customerID, currency)
}

// ack is an acknowledged transfer: a 200 with a quote id. Sent and
// Received are the quote's totals; FX marks a USD → EUR transfer, Payout
// one to an external account.
type ack struct {
	Key            string
	QuoteID        string
	TransactionID  string
	Amount         int64
	Sent, Received int64
	FX             bool
	Payout         bool
}

// payoutFails reports whether the sandbox fails a payout of this sending
// amount: the last three digits 901 to 905 fail it, 906 has ACH return it
// after it completed (docs/sandbox.md, "Magic amounts"). The same digits
// mean nothing for internal transfers.
func payoutFails(sent int64) bool {
	r := sent % 1000
	return r >= 901 && r <= 906
}

// finalStatus is the status an acknowledged transfer's OUTGOING transaction
// ends in: internal transfers complete at once; payouts when the rail
// settles them, or fail (and are refunded) on a magic amount.
func (a ack) finalStatus() string {
	if a.Payout && payoutFails(a.Sent) {
		return "FAILED"
	}
	return "COMPLETED"
}

// loadResult is what the load loop observed.
type loadResult struct {
	Attempted  int64
	Retries    int64
	Unresolved int64
	Elapsed    time.Duration
	Latencies  []time.Duration
	Errors     map[string]int
	Acks       []ack
	// Timeline is acknowledged transfers per second in each 5 s slice.
	Timeline []float64
	// Cards is the card traffic (nil without -cards).
	Cards *cardResult
}

// runLoad makes transfers between random accounts at concurrency workers
// for d. Every transfer has its own Idempotency-Key and is retried with it
// until the answer is definitive (or grace after d has passed). A share
// m.FX of them go to the other customer's EUR account: cross-currency,
// priced at the sandbox rate with its FX fees, for 1000 cents more than a
// same-currency one (the fees alone can exceed the smallest amounts). A
// share m.Payout go to the sender's own external bank account, settled
// later by the sandbox's ACH rail, also 1000 cents more for the rail's fees;
// the last three digits stay uniform, so about 0.6% of them hit a magic
// amount and fail or are returned (and refunded), which the checks expect.
//
// With life (deletes during the load), a worker skips senders being retired
// and receivers already deleted.
//
// With cards (-cards), each worker owns the cards i with i % workers == w,
// and a share m.Cards of its operations are card network messages and card
// changes on them (cardWorker.step); at the end each worker clears the
// authorizations it left open (cardWorker.settle).
func runLoad(ctx context.Context, clients []*client, runID string, accts []account, cards []*benchCard, workers int, d, grace time.Duration, maxAmount int64, m mix, life *lifecycle) loadResult {
	var (
		mu        sync.Mutex
		res       = loadResult{Errors: map[string]int{}}
		attempted atomic.Int64
		retries   atomic.Int64
		seq       atomic.Int64
		acked     atomic.Int64
	)
	start := time.Now()
	stopAt := start.Add(d)
	hardCtx, cancel := context.WithDeadline(ctx, stopAt.Add(grace))
	defer cancel()
	tlDone := make(chan struct{})
	go func() {
		defer close(tlDone)
		const slice = 5 * time.Second
		last := int64(0)
		for t := time.NewTicker(slice); ; {
			select {
			case <-hardCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			n := acked.Load()
			mu.Lock()
			res.Timeline = append(res.Timeline, float64(n-last)/slice.Seconds())
			mu.Unlock()
			last = n
			if time.Now().After(stopAt) {
				t.Stop()
				return
			}
		}
	}()
	if m.Cards > 0 && len(cards) > 0 {
		res.Cards = newCardResult()
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w)+1, uint64(start.UnixNano())))
			c := clients[nodeFor(w, len(clients))]
			var cw *cardWorker
			if res.Cards != nil {
				cw = newCardWorker(c, runID, w, workers, cards, m)
			}
			var lat []time.Duration
			var acks []ack
			errs := map[string]int{}
			unresolved := int64(0)
			for time.Now().Before(stopAt) && ctx.Err() == nil {
				i := rng.IntN(len(accts))
				j := rng.IntN(len(accts) - 1)
				if j >= i {
					j++
				}
				if !life.usable(i, j) {
					continue
				}
				if cw != nil && len(cw.cards) > 0 && rng.Float64() < m.Cards {
					cw.step(hardCtx, rng)
					continue
				}
				amount := 1 + rng.Int64N(maxAmount)
				dest, isFX, isPayout := accts[j].AccountID, false, false
				switch x := rng.Float64(); {
				case x < m.FX:
					dest, amount, isFX = accts[j].EURAccountID, 1000+amount, true
				case x < m.FX+m.Payout:
					dest, amount, isPayout = accts[i].ExternalAccountID, 1000+amount, true
				}
				key := fmt.Sprintf("%s-q-%d", runID, seq.Add(1))
				body := map[string]any{
					"source":             map[string]any{"sourceType": "ACCOUNT", "accountId": accts[i].AccountID},
					"destination":        map[string]any{"destinationType": "ACCOUNT", "accountId": dest},
					"lockedCurrencySide": "SENDING", "lockedCurrencyAmount": amount, "immediatelyExecute": true,
				}
				attempted.Add(1)
				t0 := time.Now()
				r, n, err := c.doRetry(hardCtx, "POST", "/quotes", body, key)
				el := time.Since(t0)
				retries.Add(int64(n))
				switch {
				case err != nil:
					unresolved++
					errs["UNRESOLVED"]++
				case r.Status == http.StatusOK:
					var q struct {
						ID                   string `json:"id"`
						TransactionID        string `json:"transactionId"`
						TotalSendingAmount   int64  `json:"totalSendingAmount"`
						TotalReceivingAmount int64  `json:"totalReceivingAmount"`
					}
					if json.Unmarshal(r.Body, &q) != nil || q.ID == "" {
						errs["BAD_RESPONSE"]++
						continue
					}
					acked.Add(1)
					lat = append(lat, el)
					acks = append(acks, ack{Key: key, QuoteID: q.ID, TransactionID: q.TransactionID, Amount: amount,
						Sent: q.TotalSendingAmount, Received: q.TotalReceivingAmount, FX: isFX, Payout: isPayout})
				default:
					errs[r.Code()]++
				}
			}
			if cw != nil {
				cw.settle(hardCtx)
			}
			mu.Lock()
			if cw != nil {
				res.Cards.merge(cw.res)
			}
			res.Latencies = append(res.Latencies, lat...)
			res.Acks = append(res.Acks, acks...)
			for k, v := range errs {
				res.Errors[k] += v
			}
			res.Unresolved += unresolved
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	cancel()
	<-tlDone
	res.Attempted, res.Retries = attempted.Load(), retries.Load()
	return res
}
