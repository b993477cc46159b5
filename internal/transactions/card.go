package transactions

import (
	"encoding/json"
	"fmt"
	"time"
)

// CardMerchant is the merchant of a card transaction as the network
// reports it (city and state when it does).
type CardMerchant struct {
	Descriptor string `json:"descriptor"`
	Mcc        string `json:"mcc,omitempty"`
	Country    string `json:"country,omitempty"`
	City       string `json:"city,omitempty"`
	State      string `json:"state,omitempty"`
}

// CardDetails are a CARD transaction's card fields as stored
// (transactions.card_details), amounts in the card currency (the
// transaction's sent currency). Package cards owns their meaning.
type CardDetails struct {
	CardID                string       `json:"cardId"`
	Kind                  string       `json:"kind"`
	Merchant              CardMerchant `json:"merchant"`
	AuthorizedAmount      int64        `json:"authorizedAmount"`
	HeldAmount            int64        `json:"heldAmount"`
	SettledAmount         int64        `json:"settledAmount"`
	RefundedAmount        int64        `json:"refundedAmount"`
	Clearings             int          `json:"clearings"`
	DeclinedReason        string       `json:"cardDeclinedReason,omitempty"`
	OriginalTransactionID string       `json:"originalTransactionId,omitempty"`
	IssuerTransactionID   string       `json:"issuerTransactionToken,omitempty"`
	AuthorizedAt          *time.Time   `json:"authorizedAt,omitempty"`
	ExpiresAt             *time.Time   `json:"expiresAt,omitempty"`
}

// CardFields are a CARD transaction's card fields as the API shows them, at
// the top level of the transaction (R-CARD-52).
type CardFields struct {
	CardID                 string         `json:"cardId"`
	Merchant               CardMerchant   `json:"merchant"`
	AuthorizedAmount       CurrencyAmount `json:"authorizedAmount"`
	SettledAmount          CurrencyAmount `json:"settledAmount"`
	RefundedAmount         CurrencyAmount `json:"refundedAmount"`
	CardDeclinedReason     *string        `json:"cardDeclinedReason"`
	OriginalTransactionID  string         `json:"originalTransactionId,omitempty"`
	IssuerTransactionToken string         `json:"issuerTransactionToken,omitempty"`
	AuthorizedAt           *time.Time     `json:"authorizedAt,omitempty"`
	AuthorizationExpiresAt *time.Time     `json:"authorizationExpiresAt,omitempty"`
}

// renderCard fills the card fields of a CARD transaction from its stored
// details.
func renderCard(out *Transaction, raw []byte, cur string) error {
	var d CardDetails
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("transactions: stored card details of %s: %w", out.ID, err)
	}
	f := &CardFields{CardID: d.CardID, Merchant: d.Merchant, AuthorizedAmount: Amount(d.AuthorizedAmount, cur),
		SettledAmount: Amount(d.SettledAmount, cur), RefundedAmount: Amount(d.RefundedAmount, cur),
		OriginalTransactionID: d.OriginalTransactionID, IssuerTransactionToken: d.IssuerTransactionID,
		AuthorizedAt: d.AuthorizedAt, AuthorizationExpiresAt: d.ExpiresAt}
	if d.DeclinedReason != "" {
		f.CardDeclinedReason = &d.DeclinedReason
	}
	out.CardFields = f
	return nil
}
