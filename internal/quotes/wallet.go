package quotes

import (
	"encoding/json"
	"strconv"
)

// walletPayload is what the customer signs to execute a quote from an
// embedded wallet: the quote and what it moves. Field order is fixed.
type walletPayload struct {
	Operation          string `json:"operation"`
	QuoteID            string `json:"quoteId"`
	AccountID          string `json:"accountId"`
	TotalSendingAmount string `json:"totalSendingAmount"`
	SendingCurrency    string `json:"sendingCurrency"`
	ReceivingAmount    string `json:"totalReceivingAmount"`
	ReceivingCurrency  string `json:"receivingCurrency"`
	ExpiresAt          string `json:"expiresAt"`
}

// walletInstructions builds the paymentInstructions of a quote from an
// EMBEDDED_WALLET: one entry whose accountOrWalletInfo carries the
// payloadToSign (Part A "PaymentInstructions"), and the payload itself.
func walletInstructions(q Quote) (json.RawMessage, string, error) {
	p, err := json.Marshal(walletPayload{Operation: "QUOTE_EXECUTE", QuoteID: q.ID, AccountID: q.Source.AccountID,
		TotalSendingAmount: strconv.FormatInt(q.TotalSendingAmount, 10), SendingCurrency: q.SendingCurrency.Code,
		ReceivingAmount: strconv.FormatInt(q.TotalReceivingAmount, 10), ReceivingCurrency: q.ReceivingCurrency.Code,
		ExpiresAt: q.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z")})
	if err != nil {
		return nil, "", err
	}
	instr, err := json.Marshal([]map[string]any{{
		"instructionsNotes":   "Sign payloadToSign with a session key of the wallet and send the stamp as Service-Wallet-Signature on POST /quotes/{quoteId}/execute.",
		"isPlatformAccount":   false,
		"accountOrWalletInfo": map[string]string{"accountType": "EMBEDDED_WALLET", "payloadToSign": string(p)},
	}})
	return instr, string(p), err
}
