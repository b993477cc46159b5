package uma

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/shopspring/decimal"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// SupportedCurrency is one currency the receiver accepts (Part A "Receiver
// lookup result"): min and max in the receiving smallest unit, the sending
// bounds in the sending smallest unit, approximate.
type SupportedCurrency struct {
	Currency              currency.Currency `json:"currency"`
	EstimatedExchangeRate json.Number       `json:"estimatedExchangeRate"`
	Min                   int64             `json:"min"`
	Max                   int64             `json:"max"`
	MinSendingAmount      int64             `json:"minSendingAmount,omitempty"`
	MaxSendingAmount      int64             `json:"maxSendingAmount,omitempty"`
}

// Lookup is the answer of GET /receiver/uma/{receiverUmaAddress}.
type Lookup struct {
	ReceiverUmaAddress      string                             `json:"receiverUmaAddress"`
	LookupID                string                             `json:"lookupId"`
	SendingCurrency         string                             `json:"sendingCurrency"`
	SupportedCurrencies     []SupportedCurrency                `json:"supportedCurrencies"`
	RequiredPayerDataFields []platformconfig.CounterpartyField `json:"requiredPayerDataFields"`
}

// LookupRequest names the receiver and the sender (a customer of ours with
// a UMA address: customerId, or senderUmaAddress).
type LookupRequest struct {
	Receiver, CustomerID, SenderUmaAddress, SendingCurrency string
}

// sender resolves who sends: our customer and its address.
func (s *Service) sender(ctx context.Context, t store.Tenant, req LookupRequest) (string, Address, error) {
	var f apierr.Fields
	if req.CustomerID == "" && req.SenderUmaAddress == "" {
		f.Add("customerId", apierr.Required, "or senderUmaAddress is required: the customer who sends")
		return "", Address{}, f.Err()
	}
	var row store.UmaAddress
	var err error
	if req.SenderUmaAddress != "" {
		a, perr := ParseAddress(req.SenderUmaAddress)
		if perr != nil {
			return "", Address{}, perr
		}
		row, err = s.DB.Read().GetUmaAddress(ctx, a.Domain, a.Local)
		if err == nil && (row.Tenant != t || (req.CustomerID != "" && row.CustomerID != req.CustomerID)) {
			err = store.ErrNotFound
		}
	} else {
		row, err = s.DB.Read().UmaAddressOf(ctx, t, req.CustomerID)
	}
	if errors.Is(err, store.ErrNotFound) {
		f.Add("customerId", apierr.Enum, "must be a customer of this platform with a UMA address (set the platform's umaDomain first)")
		return "", Address{}, f.Err()
	}
	if err != nil {
		return "", Address{}, err
	}
	return row.CustomerID, Address{Local: row.LocalPart, Domain: row.Domain}, nil
}

// LookupReceiver makes a signed UMA discovery request to the receiver's
// institution, checks its keys, certificate chains and signature, and keeps
// the answer under a new lookupId for POST /quotes (R-RATE-09, R-RATE-13).
func (s *Service) LookupReceiver(ctx context.Context, t store.Tenant, req LookupRequest) (Lookup, error) {
	recv, err := ParseAddress(req.Receiver)
	if err != nil {
		return Lookup{}, err
	}
	customerID, from, err := s.sender(ctx, t, req)
	if err != nil {
		return Lookup{}, err
	}
	sending := strings.ToUpper(req.SendingCurrency)
	if sending == "" {
		sending = "USD"
	}
	sendMsats, err := s.MsatsPerUnit(ctx, t.Env, sending)
	if err != nil {
		return Lookup{}, err
	}
	resp, pk, err := s.discover(ctx, t, from, recv)
	if err != nil {
		return Lookup{}, err
	}
	l := Lookup{ReceiverUmaAddress: recv.String(), LookupID: id.New(id.Lookup), SendingCurrency: sending,
		SupportedCurrencies: supported(resp, sendMsats, sending), RequiredPayerDataFields: payerFields(resp)}
	if len(l.SupportedCurrencies) == 0 {
		return Lookup{}, apierr.Newf("PARSE_LNURLP_RESPONSE_ERROR", "%s offers no currency", recv)
	}
	rb, _ := json.Marshal(resp)
	pb, _ := pk.MarshalJSON()
	err = s.DB.Write().InsertUmaLookup(ctx, store.UmaLookup{ID: l.LookupID, Tenant: t, CustomerID: customerID,
		SenderAddress: from.String(), ReceiverAddress: recv.String(), SendingCurrency: sending,
		LnurlpResponse: string(rb), PubKeyResponse: string(pb), CreatedAt: s.now()})
	return l, err
}

// discover runs the signed lnurlp exchange and verifies the answer.
func (s *Service) discover(ctx context.Context, t store.Tenant, from, recv Address) (*protocol.UmaLnurlpResponse, *protocol.PubKeyResponse, error) {
	keys, err := s.Keys(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	u, err := umasdk.GetSignedLnurlpRequestUrl(keys.Signing.Serialize(), recv.String(), from.Domain, false, nil)
	if err != nil {
		return nil, nil, err
	}
	httpReq, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	body, err := s.call(ctx, t.Env, lookupPhase, httpReq)
	if err != nil {
		return nil, nil, err
	}
	parsed, err := umasdk.ParseLnurlpResponse(body)
	if err != nil || !parsed.IsUmaResponse() || parsed.Currencies == nil {
		return nil, nil, apierr.Newf("PARSE_LNURLP_RESPONSE_ERROR", "The answer of %s is not a UMA discovery response", recv.Domain)
	}
	resp := parsed.AsUmaResponse()
	pk, err := s.fetchPubKeys(ctx, t.Env, recv.Domain)
	if err != nil {
		return nil, nil, err
	}
	if !strings.EqualFold(resp.Compliance.ReceiverIdentifier, recv.String()) {
		return nil, nil, apierr.Newf("INVALID_RECEIVER", "%s answered for %q, not %s", recv.Domain, resp.Compliance.ReceiverIdentifier, recv)
	}
	if err := umasdk.VerifyUmaLnurlpResponseSignature(*resp, *pk, s.nonceCache()); err != nil {
		return nil, nil, apierr.Newf("INVALID_RECEIVER", "The signature of %s on its discovery response does not verify: %v", recv.Domain, err)
	}
	return resp, pk, nil
}

// supported turns the receiver's currencies into lookup entries, with the
// estimated rate in sending major units per receiving major unit.
func supported(resp *protocol.UmaLnurlpResponse, sendMsats decimal.Decimal, sending string) []SupportedCurrency {
	sc, _ := currency.Lookup(sending)
	var out []SupportedCurrency
	for _, c := range resp.Currencies {
		cur, ok := currency.Lookup(c.Code)
		if !ok || c.MillisatoshiPerUnit <= 0 || c.Decimals != cur.Decimals {
			continue
		}
		mult := decimal.NewFromFloat(c.MillisatoshiPerUnit)
		// one receiving major unit in msats, over one sending major unit.
		rate := mult.Shift(int32(cur.Decimals)).Div(sendMsats.Shift(int32(sc.Decimals))).Round(8)
		toSend := func(units int64) int64 { return decimal.NewFromInt(units).Mul(mult).Div(sendMsats).Ceil().IntPart() }
		out = append(out, SupportedCurrency{Currency: cur, EstimatedExchangeRate: json.Number(rate.String()),
			Min: c.Convertible.MinSendable, Max: c.Convertible.MaxSendable,
			MinSendingAmount: toSend(c.Convertible.MinSendable), MaxSendingAmount: toSend(c.Convertible.MaxSendable)})
	}
	return out
}

// payerFields names what the receiver wants to know about the payer, in
// the API's counterparty field names (compliance data is ours to send).
func payerFields(resp *protocol.UmaLnurlpResponse) []platformconfig.CounterpartyField {
	out := []platformconfig.CounterpartyField{}
	names := map[string]string{"name": "FULL_NAME", "email": "EMAIL", "identifier": "IDENTIFIER",
		"countryOfResidence": "COUNTRY_OF_RESIDENCE", "birthDate": "BIRTH_DATE", "nationality": "NATIONALITY"}
	for k, v := range resp.RequiredPayerData {
		if n, ok := names[k]; ok {
			out = append(out, platformconfig.CounterpartyField{Name: n, Mandatory: v.Mandatory})
		}
	}
	return out
}
