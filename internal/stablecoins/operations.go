package stablecoins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// MintFunding is a mint's fundingSource.
type MintFunding struct {
	Type                  *string `json:"type"`
	ExternalAccountID     *string `json:"externalAccountId"`
	AccountID             *string `json:"accountId"`
	SourceTokenIdentifier *string `json:"sourceTokenIdentifier"`
	CryptoNetwork         *string `json:"cryptoNetwork"`
}

// MintDestination is a mint's destination.
type MintDestination struct {
	AccountID *string `json:"accountId"`
}

// MintRequest is the body of POST /stablecoins/{id}/mints.
type MintRequest struct {
	Amount        *string          `json:"amount"`
	FundingSource *MintFunding     `json:"fundingSource"`
	Destination   *MintDestination `json:"destination"`
	Description   *string          `json:"description"`
}

// Validate checks the request's shape.
func (r MintRequest) Validate() error {
	var f apierr.Fields
	if r.Amount == nil {
		f.Add("amount", apierr.Required, "is required")
	}
	switch {
	case r.FundingSource == nil || r.FundingSource.Type == nil:
		f.Add("fundingSource.type", apierr.Required, "is required")
	case !oneOf(*r.FundingSource.Type, SourceWire, SourceACHDebit, SourceSameDayACHDebit, SourceGridInternalAccount, SourceProviderInternalBalance):
		f.Add("fundingSource.type", apierr.Enum, "must be WIRE, ACH_DEBIT, SAME_DAY_ACH_DEBIT, GRID_INTERNAL_ACCOUNT or PROVIDER_INTERNAL_BALANCE")
	case (*r.FundingSource.Type == SourceACHDebit || *r.FundingSource.Type == SourceSameDayACHDebit) && r.FundingSource.ExternalAccountID == nil:
		f.Add("fundingSource.externalAccountId", apierr.Required, "is required for ACH debit funding")
	case *r.FundingSource.Type == SourceGridInternalAccount && r.FundingSource.AccountID == nil:
		f.Add("fundingSource.accountId", apierr.Required, "is required for GRID_INTERNAL_ACCOUNT funding")
	}
	if r.Destination == nil || r.Destination.AccountID == nil {
		f.Add("destination.accountId", apierr.Required, "is required")
	}
	textField(&f, "description", r.Description, false, 1024)
	return f.Err()
}

// BurnSource is a burn's source.
type BurnSource struct {
	Type              *string `json:"type"`
	ExternalAccountID *string `json:"externalAccountId"`
	AccountID         *string `json:"accountId"`
}

// BurnDestination is a burn's fiat destination.
type BurnDestination struct {
	Type              *string `json:"type"`
	ExternalAccountID *string `json:"externalAccountId"`
	Rail              *string `json:"rail"`
}

// BurnRequest is the body of POST /stablecoins/{id}/burns.
type BurnRequest struct {
	Amount      *string          `json:"amount"`
	Source      *BurnSource      `json:"source"`
	Destination *BurnDestination `json:"destination"`
	Description *string          `json:"description"`
}

// Validate checks the request's shape.
func (r BurnRequest) Validate() error {
	var f apierr.Fields
	if r.Amount == nil {
		f.Add("amount", apierr.Required, "is required")
	}
	switch {
	case r.Source == nil || r.Source.Type == nil:
		f.Add("source.type", apierr.Required, "is required")
	case !oneOf(*r.Source.Type, SourceExternalAccount, SourceGridInternalAccount, SourceProviderInternalBalance):
		f.Add("source.type", apierr.Enum, "must be EXTERNAL_ACCOUNT, GRID_INTERNAL_ACCOUNT or PROVIDER_INTERNAL_BALANCE")
	case *r.Source.Type == SourceExternalAccount && r.Source.ExternalAccountID == nil:
		f.Add("source.externalAccountId", apierr.Required, "is required for an EXTERNAL_ACCOUNT source: the wallet the tokens come from")
	case *r.Source.Type == SourceGridInternalAccount && r.Source.AccountID == nil:
		f.Add("source.accountId", apierr.Required, "is required for a GRID_INTERNAL_ACCOUNT source")
	}
	d := r.Destination
	if d == nil {
		d = &BurnDestination{}
	}
	switch {
	case d.Type == nil:
		f.Add("destination.type", apierr.Required, "is required")
	case *d.Type != SourceExternalAccount:
		f.Add("destination.type", apierr.Enum, "must be EXTERNAL_ACCOUNT")
	}
	if d.ExternalAccountID == nil {
		f.Add("destination.externalAccountId", apierr.Required, "is required")
	}
	switch {
	case d.Rail == nil:
		f.Add("destination.rail", apierr.Required, "is required")
	case !oneOf(*d.Rail, RailWire, RailACHCredit, RailSameDayCredit, RailRTPCredit):
		f.Add("destination.rail", apierr.Enum, "must be WIRE, ACH_CREDIT, SAME_DAY_ACH_CREDIT or RTP_CREDIT")
	}
	textField(&f, "description", r.Description, false, 1024)
	return f.Err()
}

func oneOf(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// prepared is an operation checked and ordered with the provider, ready to
// be written.
type prepared struct {
	coin     store.Stablecoin
	link     store.StablecoinProviderAccount
	op       store.StablecoinOperation
	newLinks []store.StablecoinLink
}

// issuer loads the stablecoin and its provider account link and refuses
// what cannot operate (R-STBL-01, R-STBL-05).
func (s *Service) issuer(ctx context.Context, t store.Tenant, coinID string) (store.Stablecoin, store.StablecoinProviderAccount, Credentials, error) {
	q := s.DB.Read()
	c, err := q.GetStablecoin(ctx, t, coinID, false)
	if errors.Is(err, store.ErrNotFound) {
		return c, store.StablecoinProviderAccount{}, Credentials{}, coinNotFound(coinID)
	}
	if err != nil {
		return c, store.StablecoinProviderAccount{}, Credentials{}, err
	}
	link, err := q.GetStablecoinProviderAccount(ctx, t, c.ProviderAccountID, false)
	if err != nil {
		return c, link, Credentials{}, err
	}
	if err := usable(link); err != nil {
		return c, link, Credentials{}, err
	}
	if c.IssuanceStatus != IssuanceProvisioned {
		return c, link, Credentials{}, apierr.New("STABLECOIN_NOT_PROVISIONED",
			"Stablecoin "+c.ID+" is "+c.IssuanceStatus+" at the provider; it can be minted or burned once PROVISIONED")
	}
	creds, err := s.credentials(link)
	return c, link, creds, err
}

// Mint creates a mint: the provider returns wire funding instructions and
// the operation waits PENDING_FUNDING for the wire (R-STBL-03, R-STBL-04).
func (s *Service) Mint(ctx context.Context, t store.Tenant, coinID string, req MintRequest) (Operation, error) {
	if err := req.Validate(); err != nil {
		return Operation{}, err
	}
	amount, err := ParseAmount(*req.Amount)
	if err != nil {
		return Operation{}, err
	}
	c, link, creds, err := s.issuer(ctx, t, coinID)
	if err != nil {
		return Operation{}, err
	}
	fiat, err := ToFiat(amount, c.Decimals, c.BaseCurrency)
	if err != nil {
		return Operation{}, err
	}
	if err := s.mintFunding(ctx, t, c, *req.FundingSource); err != nil {
		return Operation{}, err
	}
	dest, newLink, err := s.linked(ctx, t, link, creds, *req.Destination.AccountID, walletOn(c.Network))
	if err != nil {
		return Operation{}, err
	}
	p := prepared{coin: c, link: link, newLinks: newLink}
	p.op = s.newOperation(t, c, link, TypeMint, amount, fiat, deref(req.Description))
	p.op.Source = mustJSON(OperationSource{Type: SourceWire})
	p.op.Destination = mustJSON(OperationDestination{AccountID: *req.Destination.AccountID})
	order := Order{OperationID: p.op.ID, Type: TypeMint, ValueType: c.ProviderTokenIdentifier, Amount: amount,
		FiatAmount: fiat, Currency: c.BaseCurrency, Funding: SourceWire, Network: c.Network, DestID: dest}
	return s.submit(ctx, t, creds, order, p)
}

// mintFunding refuses every funding source but WIRE with the code that
// says why.
func (s *Service) mintFunding(ctx context.Context, t store.Tenant, c store.Stablecoin, f MintFunding) error {
	switch *f.Type {
	case SourceACHDebit, SourceSameDayACHDebit:
		ea, err := s.externalAccount(ctx, t, *f.ExternalAccountID)
		if err != nil {
			return err
		}
		if ea.AccountType != "USD_ACCOUNT" || ea.Currency != c.BaseCurrency {
			return apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_NOT_SUPPORTED",
				"External account "+ea.ID+" ("+ea.AccountType+") cannot be debited by ACH; a "+c.BaseCurrency+" US bank account is needed")
		}
		return apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_LINK_METHOD_REQUIRED",
			"ACH debit needs external account "+ea.ID+" linked with a debit authorization (account aggregation); it was added by account and routing number only: fund the mint by WIRE")
	case SourceGridInternalAccount:
		if c.GridOperationsStatus != GridEnabled {
			return apierr.New("STABLECOIN_GRID_OPERATIONS_NOT_ENABLED",
				"Stablecoin "+c.ID+" is not enabled for the service's operations ("+c.GridOperationsStatus+"); internal-account funding needs it ENABLED")
		}
		return apierr.New("STABLECOIN_OPERATION_NOT_SUPPORTED", "Minting from an internal account is not supported yet; fund the mint by WIRE")
	case SourceProviderInternalBalance:
		return apierr.New("STABLECOIN_PROVIDER_SOURCE_NOT_LINKED",
			"The provider account holds no linked internal balance to fund the mint from; fund it by WIRE")
	}
	return nil
}

// Burn creates a burn: tokens come back from an external wallet linked
// with the provider (funding instructions name the provider's deposit
// address) and the provider pays the fiat to a bank account.
func (s *Service) Burn(ctx context.Context, t store.Tenant, coinID string, req BurnRequest) (Operation, error) {
	if err := req.Validate(); err != nil {
		return Operation{}, err
	}
	amount, err := ParseAmount(*req.Amount)
	if err != nil {
		return Operation{}, err
	}
	c, link, creds, err := s.issuer(ctx, t, coinID)
	if err != nil {
		return Operation{}, err
	}
	fiat, err := ToFiat(amount, c.Decimals, c.BaseCurrency)
	if err != nil {
		return Operation{}, err
	}
	srcAddr, err := s.burnSource(ctx, t, c, link, *req.Source)
	if err != nil {
		return Operation{}, err
	}
	d := *req.Destination
	dest, newLink, err := s.linked(ctx, t, link, creds, *d.ExternalAccountID, bankIn(c.BaseCurrency))
	if err != nil {
		return Operation{}, err
	}
	if err := s.coverable(ctx, t, c, amount); err != nil {
		return Operation{}, err
	}
	p := prepared{coin: c, link: link, newLinks: newLink}
	p.op = s.newOperation(t, c, link, TypeBurn, amount, fiat, deref(req.Description))
	p.op.Source = mustJSON(OperationSource{Type: SourceExternalAccount, ExternalAccountID: *req.Source.ExternalAccountID})
	p.op.Destination = mustJSON(OperationDestination{AccountID: *d.ExternalAccountID, Rail: *d.Rail})
	order := Order{OperationID: p.op.ID, Type: TypeBurn, ValueType: c.ProviderTokenIdentifier, Amount: amount,
		FiatAmount: fiat, Currency: c.BaseCurrency, Funding: SourceExternalAccount, Network: c.Network,
		SourceID: srcAddr, DestID: dest, Rail: *d.Rail}
	return s.submit(ctx, t, creds, order, p)
}

// burnSource checks a burn's source and returns the provider address id of
// the wallet the tokens come from.
func (s *Service) burnSource(ctx context.Context, t store.Tenant, c store.Stablecoin, link store.StablecoinProviderAccount, src BurnSource) (string, error) {
	switch *src.Type {
	case SourceGridInternalAccount:
		if c.GridOperationsStatus != GridEnabled {
			return "", apierr.New("STABLECOIN_GRID_OPERATIONS_NOT_ENABLED",
				"Stablecoin "+c.ID+" is not enabled for the service's operations ("+c.GridOperationsStatus+"); internal-account burns need it ENABLED")
		}
		return "", apierr.New("STABLECOIN_BURN_SOURCE_NOT_SUPPORTED", "Burning from an internal account is not supported yet; burn from an external wallet")
	case SourceProviderInternalBalance:
		return "", apierr.New("STABLECOIN_PROVIDER_SOURCE_NOT_LINKED",
			"The provider account holds no linked internal balance of "+c.Symbol+" to burn from")
	}
	ea, err := s.externalAccount(ctx, t, *src.ExternalAccountID)
	if err != nil {
		return "", err
	}
	if !walletOn(c.Network)(ea) {
		return "", apierr.New("STABLECOIN_BURN_SOURCE_NOT_SUPPORTED",
			"External account "+ea.ID+" ("+ea.AccountType+") cannot hold "+c.Symbol+"; a burn source is a "+c.Network+"_WALLET")
	}
	links, err := s.DB.Read().StablecoinLinksOf(ctx, t, ea.ID)
	if err != nil {
		return "", err
	}
	for _, l := range links {
		if l.ProviderAccountID == link.ID {
			return l.ProviderAddressID, nil
		}
	}
	if len(links) > 0 {
		return "", apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_PROVIDER_LINK_REQUIRED",
			"External account "+ea.ID+" is linked with another provider account, not with "+link.ID+" which issues "+c.Symbol)
	}
	return "", apierr.New("STABLECOIN_EXTERNAL_ACCOUNT_NOT_LINKED",
		"External account "+ea.ID+" is not linked with the provider: tokens can be burned from a wallet that received a mint")
}

// coverable refuses a burn larger than the supply not already being burned.
// Submit checks it again under the stablecoin's row lock, so concurrent
// burns cannot together exceed the supply.
func (s *Service) coverable(ctx context.Context, t store.Tenant, c store.Stablecoin, amount int64) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error { return s.coverableTx(ctx, tx, t, c, amount) })
}

func (s *Service) coverableTx(ctx context.Context, tx *store.Tx, t store.Tenant, c store.Stablecoin, amount int64) error {
	var supply int64
	row, err := tx.LedgerAccountByCode(ctx, t, CodeSupply, c.ID)
	switch {
	case err == nil:
		b, err := s.Ledger.BalanceTx(ctx, tx, t, row.ID)
		if err != nil {
			return err
		}
		supply = -b.Posted
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	ops, _, err := tx.ListStablecoinOperations(ctx, t, c.ID, TypeBurn, "", 1_000_000)
	if err != nil {
		return err
	}
	for _, o := range ops {
		if o.Status == StatusPendingFunding {
			supply -= o.Amount
		}
	}
	if amount > supply {
		return apierr.Newf("INSUFFICIENT_FUNDS", "The burn of %d exceeds the %d of %s issued and not already being burned",
			amount, supply, c.Symbol)
	}
	return nil
}

func (s *Service) newOperation(t store.Tenant, c store.Stablecoin, link store.StablecoinProviderAccount, typ string, amount, fiat int64, desc string) store.StablecoinOperation {
	now := s.now()
	return store.StablecoinOperation{ID: id.New(id.StablecoinOperation), Tenant: t, StablecoinID: c.ID,
		OperationType: typ, Status: StatusCreated, Amount: amount, FiatAmount: fiat, ProviderAccountID: link.ID,
		Description: desc, FundingInstructions: []byte{}, CreatedAt: now, UpdatedAt: now}
}

// submit orders the operation from the provider, then records it (with
// any new external-account link) and its first event in one transaction.
func (s *Service) submit(ctx context.Context, t store.Tenant, creds Credentials, o Order, p prepared) (Operation, error) {
	now := s.now()
	tr, err := s.Provider(t.Env).CreateTransfer(ctx, creds, o, now)
	if err != nil {
		return Operation{}, err
	}
	expires := now.Add(FundingWindow())
	p.op.ProviderTransferID, p.op.ProviderStatus, p.op.ExpiresAt = tr.ID, tr.Status, &expires
	if tr.Instructions != nil {
		p.op.FundingInstructions = mustJSON(tr.Instructions)
	}
	due := tr.CheckAfter
	p.op.DueAt = &due
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if p.op.OperationType == TypeBurn {
			if _, err := tx.GetStablecoin(ctx, t, p.coin.ID, true); err != nil {
				return err
			}
			if err := s.coverableTx(ctx, tx, t, p.coin, p.op.Amount); err != nil {
				return err
			}
		}
		for _, l := range p.newLinks {
			if err := tx.InsertStablecoinLink(ctx, l); err != nil && !errors.Is(err, store.ErrConflict) {
				return err
			}
		}
		if err := s.transition(ctx, tx, p.coin, &p.op, StatusPendingFunding); err != nil {
			return err
		}
		return tx.InsertStablecoinOperation(ctx, p.op)
	})
	if err != nil {
		return Operation{}, err
	}
	return operationView(p.op, p.coin), nil
}

// GetOperation returns an operation.
func (s *Service) GetOperation(ctx context.Context, t store.Tenant, opID string) (Operation, error) {
	q := s.DB.Read()
	o, err := q.GetStablecoinOperation(ctx, t, opID, false)
	if errors.Is(err, store.ErrNotFound) {
		return Operation{}, apierr.NotFound("STABLECOIN_OPERATION_NOT_FOUND", "Stablecoin operation "+opID)
	}
	if err != nil {
		return Operation{}, err
	}
	c, err := q.GetStablecoin(ctx, t, o.StablecoinID, false)
	return operationView(o, c), err
}

// ListOperations returns a page of a stablecoin's operations, newest first.
func (s *Service) ListOperations(ctx context.Context, t store.Tenant, coinID, typ, after string, limit int) ([]Operation, int, error) {
	q := s.DB.Read()
	c, err := q.GetStablecoin(ctx, t, coinID, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, coinNotFound(coinID)
	}
	if err != nil {
		return nil, 0, err
	}
	rows, total, err := q.ListStablecoinOperations(ctx, t, coinID, typ, after, limit)
	out := make([]Operation, 0, len(rows))
	for _, r := range rows {
		out = append(out, operationView(r, c))
	}
	return out, total, err
}

func operationView(o store.StablecoinOperation, c store.Stablecoin) Operation {
	out := Operation{ID: o.ID, StablecoinID: o.StablecoinID, OperationType: o.OperationType, Status: o.Status,
		Amount: strconv.FormatInt(o.Amount, 10), Provider: c.Provider, ProviderEnvironment: c.ProviderEnvironment,
		StablecoinProviderAccountID: o.ProviderAccountID, ProviderStatus: o.ProviderStatus,
		FailureReason: o.FailureReason, Description: o.Description, CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
	var src OperationSource
	if json.Unmarshal(o.Source, &src) == nil {
		out.Source = &src
	}
	var dst OperationDestination
	if json.Unmarshal(o.Destination, &dst) == nil {
		out.Destination = &dst
	}
	if o.Status == StatusPendingFunding {
		var fi FundingInstructions
		if json.Unmarshal(o.FundingInstructions, &fi) == nil {
			out.FundingInstructions = &fi
		}
		out.ExpiresAt = o.ExpiresAt
	}
	if o.OperationType == TypeBurn && dst.Rail != "" {
		out.EstimatedDelivery = &EstimatedDelivery{Rail: dst.Rail, Amount: fmt.Sprint(o.FiatAmount),
			Currency: c.BaseCurrency, Timing: railTiming(dst.Rail)}
	}
	return out
}
