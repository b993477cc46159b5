package uma

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/store"
)

// SandboxDomain is the simulated sending institution of POST
// /sandbox/uma/receive. It lives in this process: its keys and certificate
// chain are made at first use, and it speaks the protocol through the same
// receiving code as any other institution (signed discovery, signed pay
// request, invoice, HTLC), only without the network hop.
const SandboxDomain = "sandbox-vasp.paymentsd.invalid"

type sandboxVASP struct {
	once sync.Once
	key  *secp256k1.PrivateKey
	pk   *protocol.PubKeyResponse
	err  error
}

func (v *sandboxVASP) init() error {
	v.once.Do(func() {
		now := time.Now()
		caKey, ca, err := newCA("sandbox VASP", now)
		if err != nil {
			v.err = err
			return
		}
		if v.key, v.err = secp256k1.GeneratePrivateKey(); v.err != nil {
			return
		}
		chain, err := issueLeaf(caKey, ca, v.key.PubKey(), "sandbox VASP", now.Add(-time.Minute), now.Add(certLifetime))
		if err != nil {
			v.err = err
			return
		}
		v.pk, v.err = umasdk.GetPubKeyResponse(chain, chain, nil)
	})
	return v.err
}

// ReceiveRequest is POST /sandbox/uma/receive.
type ReceiveRequest struct {
	SenderUmaAddress        *string `json:"senderUmaAddress"`
	ReceiverUmaAddress      *string `json:"receiverUmaAddress"`
	CustomerID              *string `json:"customerId"`
	ReceivingCurrencyCode   *string `json:"receivingCurrencyCode"`
	ReceivingCurrencyAmount *int64  `json:"receivingCurrencyAmount"`
}

// Validate checks the request's own fields.
func (r ReceiveRequest) Validate() error {
	var f apierr.Fields
	if r.SenderUmaAddress == nil {
		f.Add("senderUmaAddress", apierr.Required, "is required: a sandbox address such as $alice@%s", SandboxDomain)
	}
	if r.ReceiverUmaAddress == nil && r.CustomerID == nil {
		f.Add("receiverUmaAddress", apierr.Required, "or customerId is required")
	}
	if r.ReceivingCurrencyCode == nil {
		f.Add("receivingCurrencyCode", apierr.Required, "is required")
	}
	if r.ReceivingCurrencyAmount == nil || *r.ReceivingCurrencyAmount < 1 {
		f.Add("receivingCurrencyAmount", apierr.Minimum, "is required and must be positive (smallest unit)")
	}
	return f.Err()
}

// SandboxReceive simulates a UMA payment from the sandbox institution to a
// customer of t; it returns the id of the INCOMING transaction that credited
// the customer.
func (s *Service) SandboxReceive(ctx context.Context, t store.Tenant, req ReceiveRequest) (string, error) {
	if err := req.Validate(); err != nil {
		return "", err
	}
	if err := sandboxOnly(t.Env); err != nil {
		return "", err
	}
	from, err := ParseAddress(*req.SenderUmaAddress)
	if err != nil {
		return "", err
	}
	if from.Domain != SandboxDomain {
		return "", apierr.Newf("INVALID_UMA_ADDRESS", "The sender must be a sandbox address, $user@%s", SandboxDomain)
	}
	to, err := s.sandboxReceiver(ctx, t, req)
	if err != nil {
		return "", err
	}
	if err := s.sandbox.init(); err != nil {
		return "", err
	}
	lnurlp, err := s.sandboxDiscover(ctx, t, from, to)
	if err != nil {
		return "", err
	}
	pay, err := s.sandboxPayRequest(ctx, t, from, to, lnurlp, *req.ReceivingCurrencyCode, *req.ReceivingCurrencyAmount)
	if err != nil {
		return "", err
	}
	inv, err := ParseInvoice(pay.EncodedInvoice)
	if err != nil {
		return "", err
	}
	if _, err := s.SettleHTLC(ctx, HTLC{PaymentHash: inv.PaymentHash, AmountMsat: inv.AmountMsat}); err != nil {
		return "", err
	}
	row, err := s.DB.Read().GetUmaInvoice(ctx, inv.PaymentHash, false)
	return row.TransactionID, err
}

// sandboxReceiver is the receiving customer's address, a customer of t.
func (s *Service) sandboxReceiver(ctx context.Context, t store.Tenant, req ReceiveRequest) (Address, error) {
	if req.ReceiverUmaAddress != nil {
		a, err := ParseAddress(*req.ReceiverUmaAddress)
		if err != nil {
			return Address{}, err
		}
		row, err := s.DB.Read().GetUmaAddress(ctx, a.Domain, a.Local)
		if errors.Is(err, store.ErrNotFound) || (err == nil && row.Tenant != t) {
			return Address{}, apierr.Newf("UMA_NOT_FOUND", "No customer of this platform has the UMA address %s", a)
		}
		return a, err
	}
	row, err := s.DB.Read().UmaAddressOf(ctx, t, *req.CustomerID)
	if errors.Is(err, store.ErrNotFound) {
		return Address{}, apierr.Newf("UMA_NOT_FOUND", "Customer %s has no UMA address", *req.CustomerID)
	}
	return Address{Local: row.LocalPart, Domain: row.Domain}, err
}

// sandboxDiscover: the sandbox institution's signed discovery request,
// answered by this institution and verified as a counterparty would.
func (s *Service) sandboxDiscover(ctx context.Context, t store.Tenant, from, to Address) (*protocol.UmaLnurlpResponse, error) {
	u, err := umasdk.GetSignedLnurlpRequestUrl(s.sandbox.key.Serialize(), to.String(), from.Domain, false, nil)
	if err != nil {
		return nil, err
	}
	resp, err := s.Lnurlp(ctx, to.Domain, strings.TrimPrefix(u.Path, "/.well-known/lnurlp/"), *u)
	if err != nil {
		return nil, err
	}
	ours, err := s.PubKeyResponse(ctx, t)
	if err != nil {
		return nil, err
	}
	uresp := resp.AsUmaResponse()
	if uresp == nil {
		return nil, errors.New("uma: our discovery response is not UMA")
	}
	if err := umasdk.VerifyUmaLnurlpResponseSignature(*uresp, *ours, s.nonceCache()); err != nil {
		return nil, err
	}
	return uresp, nil
}

// sandboxPayRequest: the sandbox institution's signed pay request for an
// amount locked in the receiving currency.
func (s *Service) sandboxPayRequest(ctx context.Context, t store.Tenant, from, to Address, lnurlp *protocol.UmaLnurlpResponse, code string, amount int64) (*protocol.PayReqResponse, error) {
	ours, err := s.PubKeyResponse(ctx, t)
	if err != nil {
		return nil, err
	}
	enc, err := ours.EncryptionPubKey()
	if err != nil {
		return nil, err
	}
	pr, err := umasdk.GetUmaPayRequest(amount, enc, s.sandbox.key.Serialize(), code, true, from.String(), umasdk.MAJOR_VERSION,
		nil, nil, nil, nil, protocol.KycStatusVerified, nil, nil, "", nil, nil)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(pr)
	if err != nil {
		return nil, err
	}
	cb, err := url.Parse(lnurlp.Callback)
	if err != nil {
		return nil, err
	}
	user := strings.TrimSuffix(strings.TrimPrefix(cb.Path, "/.well-known/lnurlp/"), "/payreq")
	resp, err := s.PayRequest(ctx, to.Domain, user, body)
	if err != nil {
		return nil, err
	}
	if err := umasdk.VerifyPayReqResponseSignature(resp, *ours, s.nonceCache(), from.String(), to.String()); err != nil {
		return nil, err
	}
	return resp, nil
}
