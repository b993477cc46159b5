package agents

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/paymentsd/paymentsd/internal/accounts"
	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/rails"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// Deposit target types (R-AGENT-35) and statuses.
const (
	TargetLightningInvoice = "LIGHTNING_INVOICE"
	TargetChainAddress     = "CHAIN_ADDRESS"

	DepositPending   = "PENDING"
	DepositCompleted = "COMPLETED"
	DepositExpired   = "EXPIRED"
)

// DepositCurrency is the asset both targets receive: a Lightning invoice
// and a Bitcoin address pay bitcoin, into the customer's BTC account.
const DepositCurrency = "BTC"

// Deposit lifetimes: a Lightning invoice an hour (the BOLT 11 default), a
// chain address a day.
const (
	invoiceLifetime = time.Hour
	addressLifetime = 24 * time.Hour
)

// depositMoves is the deposit's one transition table:
//
//	PENDING → COMPLETED  the target is paid (the account is credited)
//	PENDING → EXPIRED    paid after expiresAt (nothing credited)
var depositMoves = []struct{ From, To string }{
	{DepositPending, DepositCompleted},
	{DepositPending, DepositExpired},
}

func depositMove(from, to string) error {
	for _, m := range depositMoves {
		if m.From == from && m.To == to {
			return nil
		}
	}
	return apierr.Conflict(fmt.Sprintf("The deposit is %s and cannot become %s", from, to))
}

// DepositRequest is the body of POST /agents/me/deposits.
type DepositRequest struct {
	AccountID  *string `json:"accountId"`
	TargetType *string `json:"targetType"`
	Amount     *int64  `json:"amount"`
}

// Validate checks the request on its own: an invoice needs its amount
// (satoshis), an address takes any.
func (r DepositRequest) Validate() error {
	var f apierr.Fields
	if r.AccountID == nil || !strings.HasPrefix(*r.AccountID, id.InternalAccount+":") {
		f.Add("accountId", apierr.Required, "is required: the BTC internal account of the agent's customer that receives the deposit")
	}
	switch {
	case r.TargetType == nil:
		f.Add("targetType", apierr.Required, "is required: %s or %s", TargetLightningInvoice, TargetChainAddress)
	case *r.TargetType != TargetLightningInvoice && *r.TargetType != TargetChainAddress:
		f.Add("targetType", apierr.Enum, "must be %s or %s", TargetLightningInvoice, TargetChainAddress)
	case *r.TargetType == TargetLightningInvoice && r.Amount == nil:
		f.Add("amount", apierr.Required, "is required for a Lightning invoice, in satoshis")
	}
	if r.Amount != nil && (*r.Amount < 1 || *r.Amount > 21e14) {
		f.Add("amount", apierr.Minimum, "must be between 1 and 2100000000000000 satoshis")
	}
	return f.Err()
}

// Deposit is the API's agent deposit.
type Deposit struct {
	ID               string    `json:"id"`
	AgentID          string    `json:"agentId"`
	CustomerID       string    `json:"customerId"`
	AccountID        string    `json:"accountId"`
	TargetType       string    `json:"targetType"`
	LightningInvoice string    `json:"lightningInvoice,omitempty"`
	Address          string    `json:"address,omitempty"`
	Network          string    `json:"network,omitempty"`
	Amount           *int64    `json:"amount,omitempty"`
	Currency         string    `json:"currency"`
	Status           string    `json:"status"`
	TransactionID    string    `json:"transactionId,omitempty"`
	ExpiresAt        time.Time `json:"expiresAt"`
	CreatedAt        time.Time `json:"createdAt"`
	UpdatedAt        time.Time `json:"updatedAt"`
}

func renderDeposit(d store.AgentDeposit, now time.Time) Deposit {
	out := Deposit{ID: d.ID, AgentID: d.AgentID, CustomerID: d.CustomerID, AccountID: d.AccountID,
		TargetType: d.TargetType, Network: d.Network, Amount: d.Amount, Currency: d.Currency, Status: d.Status,
		TransactionID: d.TransactionID, ExpiresAt: d.ExpiresAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if d.TargetType == TargetLightningInvoice {
		out.LightningInvoice = d.Target
	} else {
		out.Address = d.Target
	}
	if out.Status == DepositPending && !now.Before(d.ExpiresAt) {
		out.Status = DepositExpired // past its time, whether or not anyone tried to pay it
	}
	return out
}

// CreateDeposit makes a deposit target for a BTC account of the agent's
// customer (R-AGENT-35, needs RECEIVE_FUNDS).
func (s *Service) CreateDeposit(ctx context.Context, c Caller, req DepositRequest) (Deposit, error) {
	if err := c.Require(PermReceiveFunds); err != nil {
		return Deposit{}, err
	}
	if err := req.Validate(); err != nil {
		return Deposit{}, err
	}
	acct, err := s.agentAccount(ctx, c, *req.AccountID)
	if err != nil {
		return Deposit{}, err
	}
	now := s.DB.Now().UTC().Truncate(time.Microsecond)
	d := store.AgentDeposit{ID: id.New(id.AgentDeposit), Tenant: c.Agent.Tenant, AgentID: c.Agent.ID,
		CustomerID: c.Agent.CustomerID, AccountID: acct.ID, TargetType: *req.TargetType, Amount: req.Amount,
		Currency: DepositCurrency, Status: DepositPending, CreatedAt: now, UpdatedAt: now}
	if d.TargetType == TargetLightningInvoice {
		d.Target, err = sandboxInvoice(*req.Amount, now)
		d.Network, d.ExpiresAt = "LIGHTNING", now.Add(invoiceLifetime)
	} else {
		d.Target, err = sandboxAddress()
		d.Network, d.ExpiresAt = "BITCOIN", now.Add(addressLifetime)
	}
	if err != nil {
		return Deposit{}, err
	}
	if err := s.DB.InTx(ctx, func(tx *store.Tx) error { return tx.InsertAgentDeposit(ctx, d) }); err != nil {
		return Deposit{}, err
	}
	return renderDeposit(d, now), nil
}

// agentAccount reads a BTC internal account of the agent's customer; any
// other is 404, another currency 400.
func (s *Service) agentAccount(ctx context.Context, c Caller, accountID string) (store.InternalAccount, error) {
	a, err := s.DB.Read().GetInternalAccount(ctx, c.Agent.Tenant, accountID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.CustomerID != c.Agent.CustomerID) {
		return a, apierr.NotFound("ACCOUNT_NOT_FOUND", "Account "+short(accountID))
	}
	if err != nil {
		return a, err
	}
	if a.Currency != DepositCurrency {
		var f apierr.Fields
		f.Add("accountId", apierr.Enum, "must be a %s account: Lightning invoices and Bitcoin addresses pay bitcoin", DepositCurrency)
		return a, f.Err()
	}
	return a, nil
}

// GetDeposit returns a deposit of the agent's customer (R-AGENT-35).
func (s *Service) GetDeposit(ctx context.Context, c Caller, depositID string) (Deposit, error) {
	if err := c.Require(PermReceiveFunds); err != nil {
		return Deposit{}, err
	}
	d, err := s.DB.Read().GetAgentDeposit(ctx, c.Agent.Tenant, depositID, false)
	if errors.Is(err, store.ErrNotFound) || (err == nil && d.CustomerID != c.Agent.CustomerID) {
		return Deposit{}, apierr.NotFound("NOT_FOUND", "Deposit "+short(depositID))
	}
	if err != nil {
		return Deposit{}, err
	}
	return renderDeposit(d, s.DB.Now()), nil
}

// PayDeposit is the sandbox payer paying a deposit's target: the rail
// simulator credits the account (an INCOMING transaction carrying the
// agent) and the deposit completes, in one database transaction. An
// invoice is paid its amount; an address takes amount (required then).
// Past expiresAt the deposit expires and nothing is credited.
func (s *Service) PayDeposit(ctx context.Context, t store.Tenant, r *rails.Service, depositID string, amount *int64) (Deposit, error) {
	var out store.AgentDeposit
	var expired bool
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		d, err := tx.GetAgentDeposit(ctx, t, depositID, true)
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound("NOT_FOUND", "Deposit "+short(depositID))
		}
		if err != nil {
			return err
		}
		paid, err := payAmount(d, amount)
		if err != nil {
			return err
		}
		now := tx.Now().UTC().Truncate(time.Microsecond)
		to := DepositCompleted
		if expired = !now.Before(d.ExpiresAt); expired {
			to = DepositExpired
		}
		if err := depositMove(d.Status, to); err != nil {
			return err
		}
		if !expired {
			rail := rails.Onchain
			if d.TargetType == TargetLightningInvoice {
				rail = rails.Lightning
			}
			if d.TransactionID, err = r.ReceiveCrypto(ctx, tx, t, rails.CryptoDeposit{AccountID: d.AccountID, Amount: paid,
				Rail: rail, Target: d.Target, Reference: d.ID, AgentID: d.AgentID}); err != nil {
				return err
			}
		}
		d.Status, d.UpdatedAt = to, now
		out = d
		return tx.UpdateAgentDeposit(ctx, d)
	})
	if err != nil {
		return Deposit{}, err
	}
	if expired {
		return Deposit{}, apierr.Conflict("Deposit " + depositID + " expired at " + out.ExpiresAt.Format(time.RFC3339) + "; nothing was credited")
	}
	return renderDeposit(out, out.UpdatedAt), nil
}

// payAmount is what a payment of a deposit sends.
func payAmount(d store.AgentDeposit, amount *int64) (int64, error) {
	var f apierr.Fields
	switch {
	case d.Amount != nil && amount != nil && *amount != *d.Amount:
		f.Add("amount", apierr.Enum, "must be the invoice's amount, %d", *d.Amount)
	case d.Amount != nil:
		return *d.Amount, nil
	case amount == nil:
		f.Add("amount", apierr.Required, "is required to pay an address, in satoshis")
	case *amount < 1 || *amount > 21e14:
		f.Add("amount", apierr.Minimum, "must be between 1 and 2100000000000000 satoshis")
	default:
		return *amount, nil
	}
	return 0, f.Err()
}

// sandboxInvoice is a signed regtest BOLT 11 invoice for sats, from a key
// of its own (the sandbox's node), with a random payment hash.
func sandboxInvoice(sats int64, now time.Time) (string, error) {
	key, err := secp256k1.GeneratePrivateKey()
	if err != nil {
		return "", err
	}
	var preimage [32]byte
	if _, err := rand.Read(preimage[:]); err != nil {
		return "", err
	}
	// 1 satoshi is 10 nano-bitcoin ("n").
	return walletsig.MakeBolt11(fmt.Sprintf("lnbcrt%dn", sats*10), key, now.Unix(), sha256.Sum256(preimage[:])), nil
}

// sandboxAddress is a fresh testnet segwit address.
func sandboxAddress() (string, error) {
	var program [20]byte
	if _, err := rand.Read(program[:]); err != nil {
		return "", err
	}
	return accounts.SegwitAddress("tb", program[:]), nil
}
