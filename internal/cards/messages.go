package cards

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/transactions"
)

// The sandbox card network is asynchronous, like the issuer processor it
// stands for: a simulate/* call checks the message (its shape, the card,
// the card transaction it names, and, when nothing of the card is still
// queued, whether that transaction can take it at all), records it PENDING
// in the transaction that answers 202 (with the idempotency record), and the
// card runner applies it later. A card's messages apply one at a time in
// arrival order; each is applied in one database transaction with its
// ledger moves, card transaction and CARD_TRANSACTION.* event, or, refused
// then, marked FAILED with the refusal and nothing moved.

// IDCardMessage prefixes a card network message's id.
const IDCardMessage = "CardNetworkMessage"

// Message operations: the simulate/* path names.
const (
	OpAuthorization                = "authorization"
	OpFinancialAuthorization       = "financial_authorization"
	OpCreditAuthorization          = "credit_authorization"
	OpCreditAuthorizationAdvice    = "credit_authorization_advice"
	OpFinancialCreditAuthorization = "financial_credit_authorization"
	OpAuthorizationAdvice          = "authorization_advice"
	OpClearing                     = "clearing"
	OpReversal                     = "reversal"
	OpReturn                       = "return"
	OpReturnReversal               = "return_reversal"
)

// authOps maps the authorization-family operations to the kind of card
// transaction they create.
var authOps = map[string]string{
	OpAuthorization:                KindAuthorization,
	OpFinancialAuthorization:       KindFinancial,
	OpCreditAuthorization:          KindCredit,
	OpCreditAuthorizationAdvice:    KindCredit,
	OpFinancialCreditAuthorization: KindFinancialCredit,
}

// txOp is an operation on an existing card transaction: how its amount is
// validated, whether it creates a card transaction of its own (a return),
// what makes it impossible on the transaction, and its effect.
type txOp struct {
	amount  string // "required", "optional", "none"
	zero    bool   // an amount of 0 is allowed
	creates bool
	check   func(ct cardTx, req SimOnTransaction) error
	apply   func(s *Service, ctx context.Context, tx *store.Tx, c store.Card, ct *cardTx, req SimOnTransaction, txID string) error
}

var txOps = map[string]txOp{
	OpAuthorizationAdvice: {amount: "required", check: checkAdvice, apply: (*Service).advise},
	OpClearing:            {amount: "required", zero: true, check: checkOpen("a clearing"), apply: (*Service).clearing},
	OpReversal:            {amount: "optional", check: checkOpen("a reversal"), apply: (*Service).reversal},
	OpReturn:              {amount: "required", creates: true, check: checkReturn, apply: (*Service).returning},
	OpReturnReversal:      {amount: "none", check: checkReturnReversal, apply: (*Service).returnReversal},
}

// Message is a card network message as GET /sandbox/cards/{id}/messages/{messageId}
// shows it: PENDING until the runner applies it, then APPLIED or FAILED
// (with the refusal's code and reason).
type Message struct {
	ID                     string          `json:"id"`
	CardID                 string          `json:"cardId"`
	Type                   string          `json:"type"`
	Status                 string          `json:"status"`
	CardTransactionID      string          `json:"cardTransactionId"`
	IssuerTransactionToken string          `json:"issuerTransactionToken"`
	Failure                *MessageFailure `json:"failure,omitempty"`
	CreatedAt              time.Time       `json:"createdAt"`
	AppliedAt              *time.Time      `json:"appliedAt,omitempty"`
}

// MessageFailure is why a message was refused when applied.
type MessageFailure struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

func renderMessage(m store.CardMessage) *Message {
	out := &Message{ID: m.ID, CardID: m.CardID, Type: m.Kind, Status: m.Status, CardTransactionID: m.TransactionID,
		IssuerTransactionToken: m.Token, CreatedAt: m.CreatedAt, AppliedAt: m.AppliedAt}
	if m.Status == store.CardMessageFailed {
		out.Failure = &MessageFailure{Code: m.FailureCode, Reason: m.FailureMessage}
	}
	return out
}

// SubmitAuthorization accepts an authorization-family message (op one of
// the authOps): the decision is the runner's.
func (s *Service) SubmitAuthorization(ctx context.Context, t store.Tenant, cardID, op string, req SimAuthorization) (SimResult, error) {
	if _, ok := authOps[op]; !ok {
		return SimResult{}, errors.New("cards: unknown authorization operation " + op)
	}
	if err := req.Validate(false); err != nil {
		return SimResult{}, err
	}
	var out SimResult
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := lockCard(ctx, tx, t, cardID)
		if err != nil {
			return err
		}
		txID := id.New(id.Transaction)
		m, err := s.record(ctx, tx, c, op, req, txID, true)
		if err != nil {
			return err
		}
		out = SimResult{IssuerTransactionToken: m.Token, Message: renderMessage(m)}
		return idempotency.Record(ctx, tx, out)
	})
	return out, err
}

// SubmitOnTransaction accepts a message on an existing card transaction
// (op one of the txOps). The transaction must be the card's, or be created
// by a message of the card not yet applied. When nothing of the card is
// queued, the transaction's current state is the one the message will meet,
// so a message it cannot take is refused at once.
func (s *Service) SubmitOnTransaction(ctx context.Context, t store.Tenant, cardID, op string, req SimOnTransaction) (SimResult, error) {
	o, ok := txOps[op]
	if !ok {
		return SimResult{}, errors.New("cards: unknown operation " + op)
	}
	if err := req.Validate(o.amount, o.zero); err != nil {
		return SimResult{}, err
	}
	var out SimResult
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		c, err := lockCard(ctx, tx, t, cardID)
		if err != nil {
			return err
		}
		ct, exists, err := target(ctx, tx, c, *req.CardTransactionID)
		if err != nil {
			return err
		}
		queued, err := tx.CardPendingMessages(ctx, t, c.ID)
		if err != nil {
			return err
		}
		if exists && queued == 0 {
			if err := o.check(ct, req); err != nil {
				return err
			}
		}
		txID := *req.CardTransactionID
		if o.creates {
			txID = id.New(id.Transaction)
		}
		m, err := s.record(ctx, tx, c, op, req, txID, o.creates)
		if err != nil {
			return err
		}
		out = SimResult{IssuerTransactionToken: m.Token, Message: renderMessage(m)}
		if exists && !o.creates {
			if out, err = withTransaction(out, ct.row); err != nil {
				return err
			}
		}
		return idempotency.Record(ctx, tx, out)
	})
	return out, err
}

// withTransaction adds the card transaction, as it is now, to an answer.
func withTransaction(out SimResult, row store.Transaction) (SimResult, error) {
	r, err := transactions.Render(row)
	out.Transaction = &r
	return out, err
}

// target finds the card transaction a message names: its row (exists), or
// a message of the card that will create it and has not failed.
func target(ctx context.Context, tx *store.Tx, c store.Card, txID string) (cardTx, bool, error) {
	ct, err := loadTx(ctx, tx, c, txID)
	if err == nil {
		return ct, true, nil
	}
	if _, ok := apierr.From(err); !ok {
		return ct, false, err
	}
	m, merr := tx.CardMessageCreating(ctx, c.Tenant, c.ID, txID)
	if errors.Is(merr, store.ErrNotFound) || (merr == nil && m.Status == store.CardMessageFailed) {
		return ct, false, err
	}
	return ct, false, merr
}

// record queues a message at the end of the card's queue.
func (s *Service) record(ctx context.Context, tx *store.Tx, c store.Card, op string, body any, txID string, creates bool) (store.CardMessage, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return store.CardMessage{}, err
	}
	m := store.CardMessage{ID: id.New(IDCardMessage), Tenant: c.Tenant, CardID: c.ID, Kind: op, Body: raw,
		TransactionID: txID, Creates: creates, Token: newToken(txID), Status: store.CardMessagePending, CreatedAt: now(tx)}
	return m, tx.InsertCardMessage(ctx, &m)
}

// GetMessage returns a message of the tenant's card.
func (s *Service) GetMessage(ctx context.Context, t store.Tenant, cardID, messageID string) (*Message, error) {
	if !id.Valid(id.Card, cardID) || !id.Valid(IDCardMessage, messageID) {
		return nil, apierr.NotFound("NOT_FOUND", "Card network message "+messageID)
	}
	m, err := s.DB.Read().GetCardMessage(ctx, t, cardID, messageID, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound("NOT_FOUND", "Card network message "+messageID)
	}
	if err != nil {
		return nil, err
	}
	return renderMessage(m), nil
}
