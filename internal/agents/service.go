// Package agents holds agents: programs a platform lets act for one of its
// customers, inside a policy (permissions, execution mode, approval
// thresholds, account restrictions, spending limits). It owns the agent
// record and policy, installation by device code and the agent's access
// token, and agent actions: every money-moving operation an agent submits,
// executed at once or sent to the platform for approval as the policy
// decides. Money moves only through package quotes (and so the ledger);
// spending counts against the policy in the execution's own transaction
// (store.AddAgentUsage), so no number of concurrent requests passes a limit.
// It knows nothing about HTTP.
package agents

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/cards"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/quotes"
	"github.com/paymentsd/paymentsd/internal/ratelimit"
	"github.com/paymentsd/paymentsd/internal/store"
)

// MaxName bounds an agent's name.
const MaxName = 256

// Signer signs and verifies embedded-wallet payloads with an agent's
// delegated key (wallets.Service).
type Signer interface {
	SignAsAgent(ctx context.Context, tx *store.Tx, t store.Tenant, agentID, accountID, payload string) (string, error)
	VerifyAgentStamp(agentID string) func(ctx context.Context, tx *store.Tx, t store.Tenant, accountID, stamp, payload string) error
}

// Service implements agents.
type Service struct {
	DB     *store.DB
	Quotes *quotes.Service
	Signer Signer
	// Cards issues and runs agents' purchase cards (R-AGENT-37..43).
	Cards *cards.Service
	// Convert converts an amount between currencies at the current rate,
	// rounding up (amounts are compared against limits).
	Convert func(ctx context.Context, env string, amount int64, from, to string) (int64, error)
	// External returns the id of the customer's SPARK_WALLET external
	// account in currency at address, creating it when there is none (the
	// CHAIN_ADDRESS destination of agent quotes).
	External func(ctx context.Context, t store.Tenant, customerID, currency, address string) (string, error)
	// Guesses limits device-code attempts per caller (nil: a default of
	// 1 attempt per second, bursts of 10).
	Guesses *ratelimit.Limiter
	Log     *slog.Logger
}

// New returns a service over db.
func New(db *store.DB, q *quotes.Service, signer Signer, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{DB: db, Quotes: q, Signer: signer, Log: log, Guesses: ratelimit.New(1, 10)}
}

// Usage is what the agent spent against its limits (policy currency).
type Usage struct {
	DailyTransactionCount int64  `json:"dailyTransactionCount"`
	DailySpend            int64  `json:"dailySpend"`
	DailyResetDate        string `json:"dailyResetDate"`
	MonthlySpend          int64  `json:"monthlySpend"`
	MonthlyResetMonth     string `json:"monthlyResetMonth"`
}

// Agent is the API resource.
type Agent struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	CustomerID  string    `json:"customerId"`
	IsPaused    bool      `json:"isPaused"`
	IsConnected bool      `json:"isConnected"`
	Policy      Policy    `json:"policy"`
	Usage       Usage     `json:"usage"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// CreateRequest is the body of POST /agents.
type CreateRequest struct {
	Name       *string   `json:"name"`
	CustomerID *string   `json:"customerId"`
	Policy     *PolicyIn `json:"policy"`
}

func checkName(f *apierr.Fields, name *string, required bool) {
	switch {
	case name == nil:
		if required {
			f.Add("name", apierr.Required, "is required")
		}
	case utf8.RuneCountInString(*name) < 1:
		f.Add("name", apierr.MinLength, "must not be empty")
	case utf8.RuneCountInString(*name) > MaxName:
		f.Add("name", apierr.MaxLength, "must be at most %d characters", MaxName)
	}
}

// Validate checks the request on its own.
func (r CreateRequest) Validate() error {
	var f apierr.Fields
	checkName(&f, r.Name, true)
	switch {
	case r.CustomerID == nil:
		f.Add("customerId", apierr.Required, "is required: the customer the agent acts for")
	case !id.Valid(id.Customer, *r.CustomerID):
		f.Add("customerId", apierr.Pattern, "must be a customer id such as Customer:0199a1b2-…")
	}
	if r.Policy == nil {
		f.Add("policy", apierr.Required, "is required")
		return f.Err()
	}
	return apierr.MergeFields(f.Err(), r.Policy.Validate("policy.", true))
}

// UpdateRequest is the body of PATCH /agents/{agentId} (R-AGENT-03).
type UpdateRequest struct {
	Name     *string `json:"name"`
	IsPaused *bool   `json:"isPaused"`
}

// Validate checks the request on its own.
func (r UpdateRequest) Validate() error {
	var f apierr.Fields
	checkName(&f, r.Name, false)
	if r.Name == nil && r.IsPaused == nil {
		f.Add("name", apierr.Required, "name or isPaused is required")
	}
	return f.Err()
}

func agentNotFound(agentID string) error {
	return apierr.NotFound("NOT_FOUND", "Agent "+short(agentID))
}

// short keeps a client-sent id printable and short in a reason.
func short(s string) string {
	if len(s) > 80 || !utf8.ValidString(s) {
		return "(given id)"
	}
	return s
}

func decodePolicy(a store.Agent) (Policy, error) {
	var p Policy
	err := json.Unmarshal(a.Policy, &p)
	return p, err
}

func dayPeriod(at time.Time) string   { return "D:" + at.UTC().Format(time.DateOnly) }
func monthPeriod(at time.Time) string { return "M:" + at.UTC().Format("2006-01") }

// render builds the API resource, reading the agent's usage.
func (s *Service) render(ctx context.Context, q store.Q, a store.Agent) (Agent, error) {
	p, err := decodePolicy(a)
	if err != nil {
		return Agent{}, err
	}
	now := q.Now().UTC()
	day, err := q.GetAgentUsage(ctx, a.ID, dayPeriod(now))
	if err != nil {
		return Agent{}, err
	}
	month, err := q.GetAgentUsage(ctx, a.ID, monthPeriod(now))
	if err != nil {
		return Agent{}, err
	}
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	return Agent{ID: a.ID, Name: a.Name, CustomerID: a.CustomerID, IsPaused: a.Paused, IsConnected: a.ConnectedAt != nil,
		Policy: p, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Usage: Usage{DailyTransactionCount: day.Count, DailySpend: day.Spent,
			DailyResetDate: now.AddDate(0, 0, 1).Format(time.DateOnly), MonthlySpend: month.Spent,
			MonthlyResetMonth: first.AddDate(0, 1, 0).Format("2006-01")}}, nil
}

// Created is the answer of POST /agents (R-AGENT-01).
type Created struct {
	Agent      Agent      `json:"agent"`
	DeviceCode DeviceCode `json:"deviceCode"`
}

// Create creates an agent for a customer of the tenant, with its first
// device code.
func (s *Service) Create(ctx context.Context, t store.Tenant, req CreateRequest) (Created, error) {
	if err := req.Validate(); err != nil {
		return Created{}, err
	}
	var p Policy
	if err := req.Policy.apply(&p, true); err != nil {
		return Created{}, err
	}
	doc, err := json.Marshal(p)
	if err != nil {
		return Created{}, err
	}
	key, err := s.codeKey(ctx)
	if err != nil {
		return Created{}, err
	}
	var out Created
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.GetCustomer(ctx, t, *req.CustomerID, false); errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+*req.CustomerID)
		} else if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		row := store.Agent{ID: id.New(id.Agent), Tenant: t, CustomerID: *req.CustomerID, Name: *req.Name,
			Policy: doc, CreatedAt: now, UpdatedAt: now}
		if err := tx.InsertAgent(ctx, row); err != nil {
			return err
		}
		if out.DeviceCode, err = newDeviceCode(ctx, tx, key, row); err != nil {
			return err
		}
		out.Agent, err = s.render(ctx, tx.Q, row)
		return err
	})
	return out, err
}

// Get returns an agent of the tenant (R-AGENT-02).
func (s *Service) Get(ctx context.Context, t store.Tenant, agentID string) (Agent, error) {
	if !id.Valid(id.Agent, agentID) {
		return Agent{}, agentNotFound(agentID)
	}
	a, err := s.DB.Read().GetAgent(ctx, t, agentID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Agent{}, agentNotFound(agentID)
	}
	if err != nil {
		return Agent{}, err
	}
	return s.render(ctx, s.DB.Read(), a)
}

// List lists the tenant's agents.
func (s *Service) List(ctx context.Context, t store.Tenant, f store.AgentFilter, after string, limit int) ([]Agent, int, error) {
	rows, total, err := s.DB.Read().ListAgents(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]Agent, 0, len(rows))
	for _, a := range rows {
		r, err := s.render(ctx, s.DB.Read(), a)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, total, nil
}

// change runs fn on the locked agent and stores what it changed.
func (s *Service) change(ctx context.Context, t store.Tenant, agentID string, fn func(a *store.Agent) error) (Agent, error) {
	if !id.Valid(id.Agent, agentID) {
		return Agent{}, agentNotFound(agentID)
	}
	var out Agent
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.GetAgent(ctx, t, agentID, true)
		if errors.Is(err, store.ErrNotFound) {
			return agentNotFound(agentID)
		}
		if err != nil {
			return err
		}
		if err := fn(&a); err != nil {
			return err
		}
		a.UpdatedAt = tx.Now().UTC().Truncate(time.Microsecond)
		if err := tx.UpdateAgent(ctx, a); err != nil {
			return err
		}
		out, err = s.render(ctx, tx.Q, a)
		return err
	})
	return out, err
}

// Update renames, pauses or resumes an agent (R-AGENT-03). A paused agent
// can do nothing until resumed.
func (s *Service) Update(ctx context.Context, t store.Tenant, agentID string, req UpdateRequest) (Agent, error) {
	if err := req.Validate(); err != nil {
		return Agent{}, err
	}
	return s.change(ctx, t, agentID, func(a *store.Agent) error {
		if req.Name != nil {
			a.Name = *req.Name
		}
		if req.IsPaused != nil {
			a.Paused = *req.IsPaused
		}
		return nil
	})
}

// UpdatePolicy changes the fields the request names, effective on the
// agent's next request (R-AGENT-05); the currency cannot change
// (R-AGENT-06).
func (s *Service) UpdatePolicy(ctx context.Context, t store.Tenant, agentID string, req PolicyIn) (Agent, error) {
	if err := req.Validate("", false); err != nil {
		return Agent{}, err
	}
	return s.change(ctx, t, agentID, func(a *store.Agent) error {
		p, err := decodePolicy(*a)
		if err != nil {
			return err
		}
		if err := req.apply(&p, false); err != nil {
			return err
		}
		a.Policy, err = json.Marshal(p)
		return err
	})
}

// Delete deletes an agent: its token stops working at once and its
// unredeemed codes with it; its actions stay for the record, and its
// pending ones can no longer be approved.
func (s *Service) Delete(ctx context.Context, t store.Tenant, agentID string) error {
	_, err := s.change(ctx, t, agentID, func(a *store.Agent) error {
		now := s.DB.Now().UTC().Truncate(time.Microsecond)
		a.DeletedAt, a.TokenHash = &now, ""
		return nil
	})
	if err != nil {
		return err
	}
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		return tx.InvalidateAgentDeviceCodes(ctx, agentID, tx.Now())
	})
}

// CheckAgentKey checks a new agent delegated key (the wallets Delegation
// seam): the agent is live in the tenant and the wallet belongs to its
// customer (R-EWA-22).
func (s *Service) CheckAgentKey(ctx context.Context, tx *store.Tx, t store.Tenant, agentID string, wallet store.InternalAccount) error {
	a, err := tx.GetAgent(ctx, t, agentID, false)
	if errors.Is(err, store.ErrNotFound) {
		return agentNotFound(agentID)
	}
	if err != nil {
		return err
	}
	if wallet.CustomerID != a.CustomerID {
		var f apierr.Fields
		f.Add("internalAccountId", apierr.Enum, "must be an embedded wallet of the agent's customer %s", a.CustomerID)
		return f.Err()
	}
	return nil
}
