package uma

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/shopspring/decimal"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// QuoteRequest asks the receiver's institution for a pay-request quote.
type QuoteRequest struct {
	LookupID, Receiver, Currency, SendingCurrency string
	// ReceivingSide: Amount is in the receiving currency's smallest unit;
	// otherwise in the sending currency's.
	ReceivingSide bool
	Amount        int64
}

// Quoted is the counterparty's quote: the invoice to pay and the amounts.
type Quoted struct {
	SenderCustomerID string
	SendingAmount    int64 // smallest sending unit
	ReceivingAmount  int64 // smallest receiving unit, as the receiver will credit
	ExchangeRate     decimal.Decimal
	Invoice          string
	PaymentHash      string
	AmountMsat       int64
}

// QuotePayment sends the signed UMA pay request of a lookup (R-RATE-13) to
// the receiver's institution and checks its signed answer and invoice.
func (s *Service) QuotePayment(ctx context.Context, t store.Tenant, req QuoteRequest) (Quoted, error) {
	if err := sandboxOnly(t.Env); err != nil {
		return Quoted{}, err
	}
	l, lnurlp, pk, err := s.loadLookup(ctx, t, req)
	if err != nil {
		return Quoted{}, err
	}
	offer, err := offered(lnurlp, req.Currency)
	if err != nil {
		return Quoted{}, err
	}
	sendMsats, err := s.MsatsPerUnit(ctx, t.Env, req.SendingCurrency)
	if err != nil {
		return Quoted{}, err
	}
	amount := req.Amount
	receiving := amount
	if !req.ReceivingSide {
		amount = decimal.NewFromInt(req.Amount).Mul(sendMsats).Floor().IntPart()
		receiving = decimal.NewFromInt(amount).Div(decimal.NewFromFloat(offer.MillisatoshiPerUnit)).Round(0).IntPart()
	}
	if receiving < offer.Convertible.MinSendable || receiving > offer.Convertible.MaxSendable {
		return Quoted{}, apierr.Newf("AMOUNT_OUT_OF_RANGE", "%s receives between %d and %d %s (smallest unit); this payment is about %d",
			l.ReceiverAddress, offer.Convertible.MinSendable, offer.Convertible.MaxSendable, req.Currency, receiving)
	}
	resp, err := s.payRequest(ctx, t, l, lnurlp, pk, req.Currency, amount, req.ReceivingSide)
	if err != nil {
		return Quoted{}, err
	}
	return s.quoted(l, resp, req, sendMsats)
}

// loadLookup reads the lookup a quote names: it must be t's, for this
// receiver.
func (s *Service) loadLookup(ctx context.Context, t store.Tenant, req QuoteRequest) (store.UmaLookup, *protocol.UmaLnurlpResponse, *protocol.PubKeyResponse, error) {
	l, err := s.DB.Read().GetUmaLookup(ctx, t, req.LookupID)
	if errors.Is(err, store.ErrNotFound) {
		return l, nil, nil, apierr.NotFound("LOOKUP_REQUEST_NOT_FOUND", "Lookup "+truncate(req.LookupID, 64))
	}
	if err != nil {
		return l, nil, nil, err
	}
	recv, err := ParseAddress(req.Receiver)
	if err != nil {
		return l, nil, nil, err
	}
	if recv.String() != l.ReceiverAddress {
		var f apierr.Fields
		f.Add("destination.umaAddress", apierr.Enum, "must be the address of the lookup %s (%s)", l.ID, l.ReceiverAddress)
		return l, nil, nil, f.Err()
	}
	var lnurlp protocol.UmaLnurlpResponse
	var pk protocol.PubKeyResponse
	if err := json.Unmarshal([]byte(l.LnurlpResponse), &lnurlp); err != nil {
		return l, nil, nil, err
	}
	if err := json.Unmarshal([]byte(l.PubKeyResponse), &pk); err != nil {
		return l, nil, nil, err
	}
	return l, &lnurlp, &pk, nil
}

func offered(lnurlp *protocol.UmaLnurlpResponse, code string) (protocol.Currency, error) {
	for _, c := range lnurlp.Currencies {
		if c.Code == code {
			return c, nil
		}
	}
	return protocol.Currency{}, apierr.Newf("INVALID_CURRENCY", "The receiver does not accept %s", code)
}

// payRequest signs, sends and verifies the pay request.
func (s *Service) payRequest(ctx context.Context, t store.Tenant, l store.UmaLookup, lnurlp *protocol.UmaLnurlpResponse, pk *protocol.PubKeyResponse, code string, amount int64, inReceiving bool) (*protocol.PayReqResponse, error) {
	recv, _ := ParseAddress(l.ReceiverAddress)
	cb, err := url.Parse(lnurlp.Callback)
	if err != nil || !strings.EqualFold(cb.Host, recv.Domain) {
		return nil, apierr.Newf("INVALID_PAYREQ_RESPONSE", "The receiver's callback %q is not on its domain %s", truncate(lnurlp.Callback, 100), recv.Domain)
	}
	keys, err := s.Keys(ctx, t)
	if err != nil {
		return nil, err
	}
	enc, err := pk.EncryptionPubKey()
	if err != nil {
		return nil, apierr.New("INVALID_PUBKEY_FORMAT", "The receiver's encryption key does not parse")
	}
	pr, err := umasdk.GetUmaPayRequest(amount, enc, keys.Signing.Serialize(), code, inReceiving, l.SenderAddress,
		umasdk.MAJOR_VERSION, nil, nil, nil, nil, protocol.KycStatusVerified, nil, nil, "", nil, nil)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(pr)
	if err != nil {
		return nil, err
	}
	httpReq, err := http.NewRequest(http.MethodPost, cb.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	httpReq.Header.Set("Content-Type", "application/json")
	out, err := s.call(ctx, t.Env, payPhase, httpReq)
	if err != nil {
		return nil, err
	}
	resp, err := umasdk.ParsePayReqResponse(out)
	if err != nil {
		return nil, apierr.Newf("PARSE_PAYREQ_RESPONSE_ERROR", "The pay-request answer of %s does not parse: %v", recv.Domain, err)
	}
	if !resp.IsUmaResponse() {
		return nil, apierr.Newf("INVALID_PAYREQ_RESPONSE", "The pay-request answer of %s is not a UMA answer", recv.Domain)
	}
	if err := umasdk.VerifyPayReqResponseSignature(resp, *pk, s.nonceCache(), l.SenderAddress, l.ReceiverAddress); err != nil {
		return nil, apierr.Newf("INVALID_PAYREQ_RESPONSE", "The signature of %s on its pay-request answer does not verify: %v", recv.Domain, err)
	}
	return resp, nil
}

// quoted checks the answer's amounts and invoice.
func (s *Service) quoted(l store.UmaLookup, resp *protocol.PayReqResponse, req QuoteRequest, sendMsats decimal.Decimal) (Quoted, error) {
	recv, _ := ParseAddress(l.ReceiverAddress)
	bad := func(why string) (Quoted, error) {
		return Quoted{}, apierr.Newf("INVALID_PAYREQ_RESPONSE", "The pay-request answer of %s %s", recv.Domain, why)
	}
	info := resp.PaymentInfo
	if info.CurrencyCode != req.Currency || info.Amount == nil || *info.Amount <= 0 {
		return bad("does not quote the receiving currency")
	}
	if req.ReceivingSide && *info.Amount != req.Amount {
		return bad("quotes another receiving amount")
	}
	inv, err := ParseInvoice(resp.EncodedInvoice)
	if err != nil || !strings.EqualFold(inv.Node, recv.Domain) {
		return bad("carries no invoice of its node")
	}
	q := Quoted{SenderCustomerID: l.CustomerID, ReceivingAmount: *info.Amount, Invoice: resp.EncodedInvoice,
		PaymentHash: inv.PaymentHash, AmountMsat: inv.AmountMsat, SendingAmount: req.Amount}
	if req.ReceivingSide {
		q.SendingAmount = decimal.NewFromInt(inv.AmountMsat).Div(sendMsats).Ceil().IntPart()
	}
	sc, _ := currency.Lookup(req.SendingCurrency)
	rc, _ := currency.Lookup(req.Currency)
	q.ExchangeRate = decimal.NewFromInt(q.SendingAmount).Shift(-int32(sc.Decimals)).
		Div(decimal.NewFromInt(q.ReceivingAmount).Shift(-int32(rc.Decimals))).Round(8)
	return q, nil
}
