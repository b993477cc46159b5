package uma

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// The sandbox Lightning simulator ("lnsim") is the settlement adapter of
// UMA payments in sandbox: the network both installations trust. An invoice
// names the receiving node (the receiving institution's UMA domain), a
// payment hash (sha256 of a preimage only the receiver knows), an amount in
// millisatoshis and an expiry. Paying it is one HTLC: the payer's node
// POSTs {paymentHash, amountMsat} to the receiver's node, which settles the
// invoice (crediting its customer in its own ledger) and answers the
// preimage; the payer checks sha256(preimage) = paymentHash, the proof of
// payment, and reports the hash as the settlement leg's transactionHash.
// Production has no Lightning partner configured: both sides refuse.

// InvoicePrefix starts every simulator invoice.
const InvoicePrefix = "lnsim1"

// invoiceLifetime is how long an invoice can be paid.
const invoiceLifetime = 10 * time.Minute

// Invoice is a decoded simulator invoice.
type Invoice struct {
	Node        string `json:"node"` // the receiving node's domain
	PaymentHash string `json:"hash"`
	AmountMsat  int64  `json:"msat"`
	ExpiresAt   int64  `json:"exp"` // unix seconds
}

// Encode is the invoice string.
func (i Invoice) Encode() string {
	b, _ := json.Marshal(i)
	return InvoicePrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ParseInvoice decodes and checks an invoice string.
func ParseInvoice(s string) (Invoice, error) {
	body, ok := strings.CutPrefix(s, InvoicePrefix)
	if !ok || len(s) > 2048 {
		return Invoice{}, errors.New("not a sandbox Lightning invoice")
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return Invoice{}, errors.New("invoice encoding")
	}
	var i Invoice
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&i); err != nil {
		return Invoice{}, errors.New("invoice body")
	}
	h, err := hex.DecodeString(i.PaymentHash)
	if err != nil || len(h) != sha256.Size || i.AmountMsat <= 0 || i.ExpiresAt <= 0 || !domainRE.MatchString(i.Node) {
		return Invoice{}, errors.New("invoice fields")
	}
	return i, nil
}

// sandboxOnly refuses settlement outside sandbox.
func sandboxOnly(env string) error {
	if env != store.EnvSandbox {
		return apierr.New("SENDER_NOT_ACCEPTED", "UMA payments settle over Lightning, and this production environment has no Lightning partner configured")
	}
	return nil
}

// newInvoice makes and stores an invoice for a pay request to r.
func (s *Service) newInvoice(ctx context.Context, r Receiver, acct store.InternalAccount, receiving, msat int64, sender string) (string, error) {
	preimage := make([]byte, 32)
	if _, err := rand.Read(preimage); err != nil {
		return "", err
	}
	sum := sha256.Sum256(preimage)
	hash := hex.EncodeToString(sum[:])
	sealed, err := s.Sealer.Seal(preimage, []byte("uma-preimage|"+hash))
	if err != nil {
		return "", err
	}
	now := s.now()
	inv := Invoice{Node: r.Address.Domain, PaymentHash: hash, AmountMsat: msat, ExpiresAt: now.Add(invoiceLifetime).Unix()}
	err = s.DB.Write().InsertUmaInvoice(ctx, store.UmaInvoice{PaymentHash: hash, Tenant: r.Tenant, CustomerID: r.CustomerID,
		AccountID: acct.ID, Currency: acct.Currency, ReceivingAmount: receiving, AmountMsat: msat,
		SealedPreimage: base64.StdEncoding.EncodeToString(sealed), SenderAddress: sender, ReceiverAddress: r.Address.String(),
		Status: "PENDING", ExpiresAt: time.Unix(inv.ExpiresAt, 0), CreatedAt: now})
	return inv.Encode(), err
}

// HTLC is what a paying node sends to the receiving node.
type HTLC struct {
	PaymentHash string `json:"paymentHash"`
	AmountMsat  int64  `json:"amountMsat"`
}

// HTLCResult is the receiving node's answer: the preimage.
type HTLCResult struct {
	Preimage string `json:"preimage"`
}

// PayInvoice pays an invoice from env over the simulator: one HTLC to the
// receiving node; the answer must carry the preimage of the payment hash.
// It returns the payment hash (the settlement leg's transactionHash).
func (s *Service) PayInvoice(ctx context.Context, env, invoice string) (string, error) {
	if err := sandboxOnly(env); err != nil {
		return "", err
	}
	inv, err := ParseInvoice(invoice)
	if err != nil {
		return "", apierr.Newf("INVALID_PAYREQ_RESPONSE", "The invoice does not decode: %v", err)
	}
	if time.Now().Unix() >= inv.ExpiresAt {
		return "", apierr.New("QUOTE_EXPIRED", "The counterparty's invoice expired")
	}
	body, _ := json.Marshal(HTLC{PaymentHash: inv.PaymentHash, AmountMsat: inv.AmountMsat})
	req, err := http.NewRequest(http.MethodPost, schemeFor(inv.Node)+"://"+inv.Node+"/.well-known/lnsim/htlc", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	out, err := s.call(ctx, env, payPhase, req)
	if err != nil {
		return "", err
	}
	var res HTLCResult
	if json.Unmarshal(out, &res) != nil {
		return "", apierr.New("INVALID_PAYREQ_RESPONSE", "The receiving node's HTLC answer does not parse")
	}
	pre, derr := hex.DecodeString(res.Preimage)
	sum := sha256.Sum256(pre)
	if derr != nil || hex.EncodeToString(sum[:]) != inv.PaymentHash {
		return "", apierr.New("INVALID_PAYREQ_RESPONSE", "The receiving node answered a preimage that does not match the payment hash")
	}
	return inv.PaymentHash, nil
}
