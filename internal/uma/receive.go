package uma

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	umasdk "github.com/uma-universal-money-address/uma-go-sdk/uma"
	"github.com/uma-universal-money-address/uma-go-sdk/uma/protocol"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Receiving bounds, in the receiving currency's smallest unit.
const (
	minReceive = 1
	maxReceive = 10_000_000 // 100,000.00 of a 2-decimal currency
)

// msatsPerBTC: 1 BTC = 10^11 millisatoshis.
var msatsPerBTC = decimal.New(1, 11)

// Receiver is a customer of ours that a public UMA request names.
type Receiver struct {
	Tenant     store.Tenant
	Address    Address
	CustomerID string
	Accounts   []store.InternalAccount // active fiat/crypto accounts, one per currency
}

// receiver resolves $user@host to our customer and the accounts it can
// receive into; 404 UMA_NOT_FOUND when there is none.
func (s *Service) receiver(ctx context.Context, host, user string) (Receiver, error) {
	a, err := ParseAddress("$" + strings.TrimPrefix(user, "$") + "@" + host)
	if err != nil {
		return Receiver{}, apierr.New("UMA_NOT_FOUND", "No such UMA address")
	}
	row, err := s.DB.Read().GetUmaAddress(ctx, a.Domain, a.Local)
	if errors.Is(err, store.ErrNotFound) {
		return Receiver{}, apierr.Newf("UMA_NOT_FOUND", "No receiver %s here", a)
	}
	if err != nil {
		return Receiver{}, err
	}
	if d, err := s.Domain(ctx, row.Tenant); err != nil || d != a.Domain {
		return Receiver{}, apierr.Newf("UMA_NOT_FOUND", "No receiver %s here", a)
	}
	owned, err := s.DB.Read().InternalAccountsOfOwner(ctx, row.Tenant, row.CustomerID)
	if err != nil {
		return Receiver{}, err
	}
	r := Receiver{Tenant: row.Tenant, Address: a, CustomerID: row.CustomerID}
	for _, acct := range owned {
		if acct.Status == "ACTIVE" && !acct.Suspense && (acct.Type == "INTERNAL_FIAT" || acct.Type == "INTERNAL_CRYPTO") &&
			!slices.ContainsFunc(r.Accounts, func(x store.InternalAccount) bool { return x.Currency == acct.Currency }) {
			r.Accounts = append(r.Accounts, acct)
		}
	}
	if len(r.Accounts) == 0 {
		return Receiver{}, apierr.Newf("UMA_NOT_FOUND", "%s cannot receive payments now", a)
	}
	return r, nil
}

// MsatsPerUnit is how many millisatoshis one smallest unit of code is worth
// at t's rates (the UMA "multiplier").
func (s *Service) MsatsPerUnit(ctx context.Context, env, code string) (decimal.Decimal, error) {
	c, ok := currency.Lookup(code)
	if !ok {
		return decimal.Zero, apierr.Newf("INVALID_CURRENCY", "Unknown currency %s", code)
	}
	if code == "BTC" {
		return decimal.New(1000, 0), nil
	}
	perBTC, err := s.Rate(ctx, env, code, "BTC") // units of code per 1 BTC
	if err != nil {
		return decimal.Zero, err
	}
	return msatsPerBTC.Div(perBTC.Shift(int32(c.Decimals))), nil
}

// nonces is the replay guard of signed UMA messages: every accepted nonce is
// recorded in the database for nonceWindow, so that a message replayed to any
// node sharing the database is refused; a message signed outside the window
// is refused outright. It is the SDK's NonceCache, whose calls carry no
// context.
type nonces struct{ db *store.DB }

const nonceWindow = time.Hour

// nonceTimeout bounds one nonce check (the SDK passes no context).
const nonceTimeout = 5 * time.Second

func (s *Service) nonceCache() nonces { return nonces{db: s.DB} }

// CheckAndSaveNonce makes nonces an umasdk.NonceCache.
func (n nonces) CheckAndSaveNonce(nonce string, ts time.Time) error {
	now := time.Now() // the SDK signs with the wall clock, not the store's
	if now.Sub(ts) > nonceWindow || ts.Sub(now) > 5*time.Minute {
		return errors.New("signature timestamp outside the accepted window")
	}
	ctx, cancel := context.WithTimeout(context.Background(), nonceTimeout)
	defer cancel()
	err := n.db.Write().UseUmaNonce(ctx, nonce, ts, now.Add(-nonceWindow))
	if errors.Is(err, store.ErrConflict) {
		return errors.New("nonce already used: the message is a replay")
	}
	return err
}

// PurgeNoncesOlderThan completes the umasdk.NonceCache interface.
func (n nonces) PurgeNoncesOlderThan(ts time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), nonceTimeout)
	defer cancel()
	_ = n.db.Write().PurgeUmaNonces(ctx, ts)
}

// Lnurlp answers a signed UMA discovery request for $user@host: the sender
// institution's signature is checked against its published keys
// (SENDER_NOT_ACCEPTED otherwise), and the answer, signed with our key,
// lists the receiver's currencies with our rates and bounds.
func (s *Service) Lnurlp(ctx context.Context, host, user string, u url.URL) (*protocol.LnurlpResponse, error) {
	r, err := s.receiver(ctx, host, user)
	if err != nil {
		return nil, err
	}
	u.Path = "/.well-known/lnurlp/" + user // the SDK reads the user from the path
	req, err := umasdk.ParseLnurlpRequestWithReceiverDomain(u, r.Address.Domain)
	if err != nil || !req.IsUmaRequest() {
		return nil, apierr.New("MISSING_REQUIRED_UMA_PARAMETERS", "A UMA discovery request needs vaspDomain, nonce, timestamp, umaVersion and signature")
	}
	req.ReceiverAddress = r.Address.String()
	if err := s.verifySender(ctx, r.Tenant.Env, *req.VaspDomain, func(pk protocol.PubKeyResponse) error {
		return umasdk.VerifyUmaLnurlpQuerySignature(*req.AsUmaRequest(), pk, s.nonceCache())
	}); err != nil {
		return nil, err
	}
	currencies, err := s.currencies(ctx, r)
	if err != nil {
		return nil, err
	}
	keys, err := s.Keys(ctx, r.Tenant)
	if err != nil {
		return nil, err
	}
	metadata, _ := json.Marshal([][]string{{"text/plain", "Pay " + r.Address.String()}, {"text/identifier", r.Address.String()}})
	minSats, maxSats := satsBounds(currencies)
	priv := keys.Signing.Serialize()
	notTR, kyc := false, protocol.KycStatusVerified
	opts := protocol.CounterPartyDataOptions{"name": {Mandatory: false}, "email": {Mandatory: false}}
	return umasdk.GetLnurlpResponse(*req, s.callback(r), string(metadata), minSats, maxSats, &priv, &notTR, &opts,
		&currencies, &kyc, nil, nil)
}

// callback is where the receiver's pay requests go.
func (s *Service) callback(r Receiver) string {
	return schemeFor(r.Address.Domain) + "://" + r.Address.Domain + "/.well-known/lnurlp/" + r.Address.Local + "/payreq"
}

// verifySender fetches the sending institution's keys and runs verify;
// any failure is 400 SENDER_NOT_ACCEPTED naming why.
func (s *Service) verifySender(ctx context.Context, env, vaspDomain string, verify func(protocol.PubKeyResponse) error) error {
	vaspDomain = strings.ToLower(vaspDomain)
	if !domainRE.MatchString(vaspDomain) {
		return apierr.Newf("SENDER_NOT_ACCEPTED", "vaspDomain %q is not a domain", vaspDomain)
	}
	pk, err := s.fetchPubKeys(ctx, env, vaspDomain)
	if err != nil {
		e, _ := apierr.From(err)
		reason := err.Error()
		if e != nil {
			reason = e.Code + ": " + e.Reason
		}
		return apierr.Newf("SENDER_NOT_ACCEPTED", "The keys of the sending institution %s are not usable (%s)", vaspDomain, reason)
	}
	if err := verify(*pk); err != nil {
		return apierr.Newf("SENDER_NOT_ACCEPTED", "The signature of the sending institution %s does not verify: %v", vaspDomain, err)
	}
	return nil
}

// currencies lists the receiver's currencies for UMA: our multiplier
// (msats per smallest unit) and our receiving bounds.
func (s *Service) currencies(ctx context.Context, r Receiver) ([]protocol.Currency, error) {
	var out []protocol.Currency
	for _, a := range r.Accounts {
		c, ok := currency.Lookup(a.Currency)
		if !ok {
			continue
		}
		m, err := s.MsatsPerUnit(ctx, r.Tenant.Env, a.Currency)
		if err != nil {
			continue // no rate for it now: not offered
		}
		mult, _ := m.Float64()
		out = append(out, protocol.Currency{Code: c.Code, Name: c.Name, Symbol: c.Symbol, MillisatoshiPerUnit: mult,
			Convertible: protocol.ConvertibleCurrency{MinSendable: minReceive, MaxSendable: maxReceive}, Decimals: c.Decimals,
			UmaMajorVersion: umasdk.MAJOR_VERSION})
	}
	if len(out) == 0 {
		return nil, apierr.Newf("UMA_NOT_FOUND", "%s cannot receive payments now: no rate for its currencies", r.Address)
	}
	return out, nil
}

// satsBounds are the LNURL minSendable/maxSendable, in sats, covering every
// currency's bounds.
func satsBounds(cs []protocol.Currency) (int64, int64) {
	var lo, hi int64 = 1, 1
	for i, c := range cs {
		l := int64(float64(c.Convertible.MinSendable)*c.MillisatoshiPerUnit/1000) + 1
		h := int64(float64(c.Convertible.MaxSendable) * c.MillisatoshiPerUnit / 1000)
		if i == 0 || l < lo {
			lo = l
		}
		if h > hi {
			hi = h
		}
	}
	return lo, hi
}
