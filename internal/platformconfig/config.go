// Package platformconfig owns a tenant's configuration (GET/PATCH /config):
// webhook endpoint, supported currencies, platform fees, UMA domain, card caps
// and card-tokenization messaging (R-TOKCFG-05..08).
package platformconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Config is the API's PlatformConfig.
type Config struct {
	ID                              string           `json:"id"`
	UmaDomain                       *string          `json:"umaDomain,omitempty"`
	WebhookEndpoint                 *string          `json:"webhookEndpoint,omitempty"`
	SupportedCurrencies             []CurrencyConfig `json:"supportedCurrencies"`
	IsRegulatedFinancialInstitution bool             `json:"isRegulatedFinancialInstitution"`
	FeeConfigs                      []FeeConfig      `json:"feeConfigs"`
	CardConfigs                     CardConfigs      `json:"cardConfigs"`
	CardTokenization2faConfig       Tokenization2FA  `json:"cardTokenization2faConfig"`
	SkipVerificationPaperwork       bool             `json:"skipVerificationPaperwork"`
	// EmbeddedWalletConfig is present once embedded wallets are enabled.
	EmbeddedWalletConfig *EmbeddedWalletConfig `json:"embeddedWalletConfig,omitempty"`
	CreatedAt            time.Time             `json:"createdAt"`
	UpdatedAt            time.Time             `json:"updatedAt"`
}

// CurrencyConfig is one supported currency and its send bounds.
type CurrencyConfig struct {
	CurrencyCode               string              `json:"currencyCode"`
	MinAmount                  int64               `json:"minAmount"`
	MaxAmount                  int64               `json:"maxAmount"`
	RequiredCounterpartyFields []CounterpartyField `json:"requiredCounterpartyFields"`
	EnabledTransactionTypes    []string            `json:"enabledTransactionTypes"`
}

// CounterpartyField names payer data the platform requires.
type CounterpartyField struct {
	Name      string `json:"name"`
	Mandatory bool   `json:"mandatory"`
}

// FeeConfig is a platform fee added on top of the service's fees, unique by
// (feeType, sourceCurrency).
type FeeConfig struct {
	FeeType        string   `json:"feeType"`
	SourceCurrency string   `json:"sourceCurrency"`
	VariableFeeBps int64    `json:"variableFeeBps"`
	FixedFee       FixedFee `json:"fixedFee"`
}

// FixedFee is a per-transaction amount.
type FixedFee struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// CardConfigs are platform-wide card settings. Unset values are reported as
// null so clients can tell "no cap" from a missing field.
type CardConfigs struct {
	PinTargetOrigin        *string `json:"pinTargetOrigin"`
	PanRevealCssUrl        *string `json:"panRevealCssUrl"`
	MaxSpendPerTransaction *int64  `json:"maxSpendPerTransaction"`
	MaxSpendPerDay         *int64  `json:"maxSpendPerDay"`
	MaxTransactionsPerDay  *int64  `json:"maxTransactionsPerDay"`
	// AgentBlockedMccs are merchant categories every card an agent issues
	// blocks, on top of the agent defaults (cards.AgentDefaultBlockedMCCs).
	AgentBlockedMccs *[]string `json:"agentBlockedMccs,omitempty"`
}

// Tokenization2FA brands the codes sent when a card is added to a digital wallet.
type Tokenization2FA struct {
	DisplayName *string               `json:"displayName,omitempty"`
	LogoUrl     *string               `json:"logoUrl,omitempty"`
	Email       *Tokenization2FAEmail `json:"email,omitempty"`
	Sms         *Tokenization2FASms   `json:"sms,omitempty"`
}

// Tokenization2FAEmail is the email sender of tokenization codes.
type Tokenization2FAEmail struct {
	FromAddress    *string `json:"fromAddress,omitempty"`
	FromName       *string `json:"fromName,omitempty"`
	ReplyToAddress *string `json:"replyToAddress,omitempty"`
	Subject        *string `json:"subject,omitempty"`
	BodyText       *string `json:"bodyText,omitempty"`
}

// Tokenization2FASms is the SMS sender of tokenization codes.
type Tokenization2FASms struct {
	TemplateSid *string `json:"templateSid,omitempty"`
	BodyText    *string `json:"bodyText,omitempty"`
}

// document is what is stored: the configuration without identity and times.
type document struct {
	UmaDomain                 *string          `json:"umaDomain,omitempty"`
	WebhookEndpoint           *string          `json:"webhookEndpoint,omitempty"`
	SupportedCurrencies       []CurrencyConfig `json:"supportedCurrencies"`
	FeeConfigs                []FeeConfig      `json:"feeConfigs"`
	CardConfigs               CardConfigs      `json:"cardConfigs"`
	CardTokenization2faConfig Tokenization2FA  `json:"cardTokenization2faConfig"`
	// SkipVerificationPaperwork (sandbox only) resolves a customer's sandbox
	// verification outcome at creation, without documents, as on a regulated
	// platform (R-SBX-12).
	SkipVerificationPaperwork bool `json:"skipVerificationPaperwork,omitempty"`
	// EmbeddedWalletConfig enables embedded wallets when present.
	EmbeddedWalletConfig *EmbeddedWalletConfig `json:"embeddedWalletConfig,omitempty"`
}

// defaultDocument is a new tenant's configuration: USD only, no webhook yet.
func defaultDocument() document {
	return document{
		SupportedCurrencies: []CurrencyConfig{{
			CurrencyCode: "USD", MinAmount: 1, MaxAmount: 100_000_000_00,
			RequiredCounterpartyFields: []CounterpartyField{},
			EnabledTransactionTypes:    []string{"INCOMING", "OUTGOING"},
		}},
		FeeConfigs: []FeeConfig{},
	}
}

// Service reads and changes configurations.
type Service struct {
	DB *store.DB
	// CheckWebhookEndpoint, if set, judges a new webhookEndpoint of env
	// beyond its form: the addresses it may reach (webhooks.Guard). A
	// refusal wrapping ErrEndpointRefused becomes a 400 on webhookEndpoint;
	// any other error is returned as is.
	CheckWebhookEndpoint func(ctx context.Context, env, endpoint string) error
}

// ErrEndpointRefused is what CheckWebhookEndpoint wraps when it refuses an
// endpoint (the webhooks package wraps it in its own refusals).
var ErrEndpointRefused = errors.New("webhook endpoint refused")

// Provision stores the default configuration for a new tenant, inside the
// transaction that creates the platform.
func Provision(ctx context.Context, tx *store.Tx, t store.Tenant) error {
	doc, err := json.Marshal(defaultDocument())
	if err != nil {
		return err
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	return tx.InsertPlatformConfig(ctx, store.PlatformConfig{
		ID: id.New(id.PlatformConfig), Tenant: t, Document: doc, CreatedAt: now, UpdatedAt: now})
}

// Get returns the tenant's configuration.
func (s *Service) Get(ctx context.Context, t store.Tenant) (Config, error) {
	row, err := s.DB.PlatformConfig(ctx, t)
	if err != nil {
		return Config{}, err
	}
	return s.render(ctx, row)
}

// Update applies a validated patch atomically and returns the result.
func (s *Service) Update(ctx context.Context, t store.Tenant, p Patch) (Config, error) {
	if err := p.Validate(t.Env); err != nil {
		return Config{}, err
	}
	if err := s.checkEndpoint(ctx, t.Env, p); err != nil {
		return Config{}, err
	}
	var out store.PlatformConfig
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := tx.GetPlatformConfig(ctx, t, true)
		if err != nil {
			return err
		}
		var doc document
		if err := json.Unmarshal(row.Document, &doc); err != nil {
			return fmt.Errorf("platformconfig: stored document: %w", err)
		}
		doc = p.apply(doc)
		if row.Document, err = json.Marshal(doc); err != nil {
			return err
		}
		row.UpdatedAt = tx.Now().UTC().Truncate(time.Microsecond)
		out = row
		return tx.UpdatePlatformConfig(ctx, row)
	})
	if err != nil {
		return Config{}, err
	}
	return s.render(ctx, out)
}

// checkEndpoint runs CheckWebhookEndpoint on a new endpoint.
func (s *Service) checkEndpoint(ctx context.Context, env string, p Patch) error {
	v := p.WebhookEndpoint.Ptr()
	if v == nil || s.CheckWebhookEndpoint == nil {
		return nil
	}
	err := s.CheckWebhookEndpoint(ctx, env, *v)
	if !errors.Is(err, ErrEndpointRefused) {
		return err
	}
	var f apierr.Fields
	f.Add("webhookEndpoint", apierr.Format, "%s", strings.TrimPrefix(err.Error(), ErrEndpointRefused.Error()+": "))
	return f.Err()
}

func (s *Service) render(ctx context.Context, row store.PlatformConfig) (Config, error) {
	shared, err := parse(row)
	if err != nil {
		return Config{}, err
	}
	// The top-level lists are copied, so a caller that changes its Config
	// does not change the shared parse or another caller's.
	doc := *shared
	doc.SupportedCurrencies = slices.Clone(doc.SupportedCurrencies)
	doc.FeeConfigs = slices.Clone(doc.FeeConfigs)
	p, err := s.DB.Platform(ctx, row.Tenant.PlatformID)
	if err != nil {
		return Config{}, errors.Join(errors.New("platformconfig: platform of config"), err)
	}
	if doc.SupportedCurrencies == nil {
		doc.SupportedCurrencies = []CurrencyConfig{}
	}
	if doc.FeeConfigs == nil {
		doc.FeeConfigs = []FeeConfig{}
	}
	return Config{
		ID: row.ID, UmaDomain: doc.UmaDomain, WebhookEndpoint: doc.WebhookEndpoint,
		SupportedCurrencies: doc.SupportedCurrencies, IsRegulatedFinancialInstitution: p.Regulated,
		FeeConfigs: doc.FeeConfigs, CardConfigs: doc.CardConfigs,
		CardTokenization2faConfig: doc.CardTokenization2faConfig,
		SkipVerificationPaperwork: doc.SkipVerificationPaperwork,
		EmbeddedWalletConfig:      doc.EmbeddedWalletConfig,
		CreatedAt:                 row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}, nil
}

// parsed is a tenant's stored document as last parsed.
type parsed struct {
	raw []byte
	doc document
}

// docs holds each tenant's document as last parsed (parse).
var docs sync.Map // store.Tenant → *parsed

// parse decodes row's document, reusing the last parse of the tenant's
// document while the stored bytes are the same: Get runs for every quote
// and WebhookEndpoint for every webhook delivery (decoding it there was
// about 3% of the server's CPU under load, docs/benchmarks.md "Eighth
// session"), and the store's settings cache hands both the same row until
// the configuration changes. Keyed by the bytes, another node's change
// shows as soon as the row does. The answer is shared: read it, never
// change it.
func parse(row store.PlatformConfig) (*document, error) {
	if p, ok := docs.Load(row.Tenant); ok && bytes.Equal(p.(*parsed).raw, row.Document) {
		return &p.(*parsed).doc, nil
	}
	p := &parsed{raw: bytes.Clone(row.Document)}
	if err := json.Unmarshal(row.Document, &p.doc); err != nil {
		return nil, fmt.Errorf("platformconfig: stored document: %w", err)
	}
	docs.Store(row.Tenant, p)
	return &p.doc, nil
}

// WebhookEndpoint returns the webhookEndpoint of a stored configuration
// (nil when none is set), without the rest of Get's rendering.
func WebhookEndpoint(row store.PlatformConfig) (*string, error) {
	doc, err := parse(row)
	if err != nil {
		return nil, err
	}
	return doc.WebhookEndpoint, nil
}

// SkipsVerificationPaperwork reports the tenant's skipVerificationPaperwork
// setting, read through q (a transaction's querier keeps the read consistent
// with the change it makes).
func SkipsVerificationPaperwork(ctx context.Context, q store.Q, t store.Tenant) (bool, error) {
	row, err := q.GetPlatformConfig(ctx, t, false)
	if err != nil {
		return false, err
	}
	var doc document
	if err := json.Unmarshal(row.Document, &doc); err != nil {
		return false, fmt.Errorf("platformconfig: stored document: %w", err)
	}
	return doc.SkipVerificationPaperwork, nil
}

// CardConfigsOf reports the tenant's cardConfigs, read through q (inside a
// transaction, without a second connection and as of that transaction); no
// configuration is none set.
func CardConfigsOf(ctx context.Context, q store.Q, t store.Tenant) (CardConfigs, error) {
	row, err := q.GetPlatformConfig(ctx, t, false)
	if errors.Is(err, store.ErrNotFound) {
		return CardConfigs{}, nil
	}
	if err != nil {
		return CardConfigs{}, err
	}
	var doc document
	if err := json.Unmarshal(row.Document, &doc); err != nil {
		return CardConfigs{}, fmt.Errorf("platformconfig: stored document: %w", err)
	}
	return doc.CardConfigs, nil
}

// AgentBlockedMccs reports the tenant's cardConfigs.agentBlockedMccs, read
// through q like CardConfigsOf; no configuration is none.
func AgentBlockedMccs(ctx context.Context, q store.Q, t store.Tenant) ([]string, error) {
	c, err := CardConfigsOf(ctx, q, t)
	if err != nil || c.AgentBlockedMccs == nil {
		return nil, err
	}
	return *c.AgentBlockedMccs, nil
}
