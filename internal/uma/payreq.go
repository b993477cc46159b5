package uma

import (
	"context"
	"encoding/json"
	"math"

	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// invoiceCreator is the SDK's InvoiceCreator over the simulator: it stores
// the invoice with the receiving amount it stands for.
type invoiceCreator struct {
	ctx       context.Context
	s         *Service
	r         Receiver
	acct      store.InternalAccount
	mult      float64
	receiving *int64 // set when the sender locked the receiving amount
	sender    string
	err       error
}

func (c *invoiceCreator) CreateInvoice(msat int64, _ string, _ *string) (*string, error) {
	recv := int64(math.Round(float64(msat) / c.mult))
	if c.receiving != nil {
		recv = *c.receiving
	}
	if recv < minReceive || recv > maxReceive {
		c.err = apierr.Newf("AMOUNT_OUT_OF_RANGE", "%s receives between %d and %d %s (smallest unit); this payment is %d",
			c.r.Address, minReceive, maxReceive, c.acct.Currency, recv)
		return nil, c.err
	}
	inv, err := c.s.newInvoice(c.ctx, c.r, c.acct, recv, msat, c.sender)
	if err != nil {
		c.err = err
		return nil, err
	}
	return &inv, nil
}

// PayRequest answers a signed UMA pay request to $user@host: the sender's
// signature is checked, the receiving currency priced at our multiplier, and
// an invoice issued; the signed answer carries it with the amount the
// receiver will be credited when it is paid.
func (s *Service) PayRequest(ctx context.Context, host, user string, body []byte) (*protocol.PayReqResponse, error) {
	r, err := s.receiver(ctx, host, user)
	if err != nil {
		return nil, err
	}
	if err := sandboxOnly(r.Tenant.Env); err != nil {
		return nil, err
	}
	req, err := umasdk.ParsePayRequest(body)
	if err != nil {
		return nil, apierr.Newf("INVALID_REQUEST_FORMAT", "Not a UMA pay request: %v", err)
	}
	if !req.IsUmaRequest() || req.ReceivingCurrencyCode == nil {
		return nil, apierr.New("MISSING_REQUIRED_UMA_PARAMETERS", "A UMA pay request needs convert, payerData.identifier and payerData.compliance")
	}
	payer := *req.PayerData.Identifier()
	from, err := ParseAddress(payer)
	if err != nil {
		return nil, apierr.Newf("SENDER_NOT_ACCEPTED", "The payer identifier %q is not a UMA address", payer)
	}
	if err := s.verifySender(ctx, r.Tenant.Env, from.Domain, func(pk protocol.PubKeyResponse) error {
		return umasdk.VerifyPayReqSignature(req, pk, s.nonceCache())
	}); err != nil {
		return nil, err
	}
	return s.answerPayRequest(ctx, r, req, from)
}

func (s *Service) answerPayRequest(ctx context.Context, r Receiver, req *protocol.PayRequest, from Address) (*protocol.PayReqResponse, error) {
	code := *req.ReceivingCurrencyCode
	c := &invoiceCreator{ctx: ctx, s: s, r: r, sender: from.String()}
	for _, a := range r.Accounts {
		if a.Currency == code {
			c.acct = a
		}
	}
	cur, ok := currency.Lookup(code)
	if c.acct.ID == "" || !ok {
		return nil, apierr.Newf("INVALID_CURRENCY", "%s does not receive %s", r.Address, code)
	}
	if req.SendingAmountCurrencyCode != nil {
		if *req.SendingAmountCurrencyCode != code {
			return nil, apierr.New("INVALID_CURRENCY", "An amount is either in millisatoshis or in the receiving currency")
		}
		amount := req.Amount
		c.receiving = &amount
	}
	m, err := s.MsatsPerUnit(ctx, r.Tenant.Env, code)
	if err != nil {
		return nil, err
	}
	c.mult, _ = m.Float64()
	keys, err := s.Keys(ctx, r.Tenant)
	if err != nil {
		return nil, err
	}
	metadata, _ := json.Marshal([][]string{{"text/plain", "Pay " + r.Address.String()}, {"text/identifier", r.Address.String()}})
	priv, payee := keys.Signing.Serialize(), r.Address.String()
	node := "lnsim:" + r.Address.Domain
	var fees int64
	decimals := cur.Decimals
	resp, err := umasdk.GetPayReqResponse(*req, c, string(metadata), &code, &decimals, &c.mult, &fees, nil, &node, nil,
		nil, &priv, &payee, nil, nil)
	if c.err != nil {
		return nil, c.err
	}
	if err != nil {
		return nil, apierr.Newf("INVALID_REQUEST_FORMAT", "The pay request cannot be answered: %v", err)
	}
	return resp, nil
}
