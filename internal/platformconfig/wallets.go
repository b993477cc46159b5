package platformconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"net/mail"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/jsonx"
	"github.com/paymentsd/paymentsd/internal/store"
)

// EmbeddedWalletConfig is the platform's embedded-wallet setting. Its
// presence is what enables embedded wallets: from the moment it is set, every
// customer of the tenant has an EMBEDDED_WALLET internal account (package
// accounts provisions them). The other fields brand and shape the one-time
// codes sent to EMAIL_OTP and SMS_OTP credentials.
type EmbeddedWalletConfig struct {
	AppName                 *string `json:"appName,omitempty"`
	OtpLength               *int64  `json:"otpLength,omitempty"`
	Alphanumeric            *bool   `json:"alphanumeric,omitempty"`
	ExpirationSeconds       *int64  `json:"expirationSeconds,omitempty"`
	SendFromEmailAddress    *string `json:"sendFromEmailAddress,omitempty"`
	SendFromEmailSenderName *string `json:"sendFromEmailSenderName,omitempty"`
	ReplyToEmailAddress     *string `json:"replyToEmailAddress,omitempty"`
	LogoUrl                 *string `json:"logoUrl,omitempty"`
	// OAuthIssuers are the OpenID Connect issuers whose ID tokens OAUTH
	// credentials of this tenant may be created and verified with.
	OAuthIssuers []OAuthIssuer `json:"oauthIssuers,omitempty"`
	// PasskeyRpID and PasskeyOrigins are the WebAuthn relying party of
	// PASSKEY credentials: the RP id (the app's domain) and the origins
	// its ceremonies run on.
	PasskeyRpID    *string  `json:"passkeyRpId,omitempty"`
	PasskeyOrigins []string `json:"passkeyOrigins,omitempty"`
	// ExportRequiresApproval gates wallet exports on the platform's
	// approval (POST /internal-accounts/{id}/export/approve).
	ExportRequiresApproval *bool `json:"exportRequiresApproval,omitempty"`
}

// OAuthIssuer is one accepted OpenID Connect issuer: its issuer identifier
// (the token's iss, and the base of its discovery document) and the client
// ids of the platform's apps there (a token's aud must name one).
type OAuthIssuer struct {
	Issuer    string   `json:"issuer"`
	ClientIDs []string `json:"clientIds"`
}

// MaxOAuthIssuers bounds the issuers a tenant configures.
const MaxOAuthIssuers = 10

// OAuthIssuer returns the configured issuer iss, if any.
func (c EmbeddedWalletConfig) OAuthIssuer(iss string) (OAuthIssuer, bool) {
	for _, i := range c.OAuthIssuers {
		if i.Issuer == iss {
			return i, true
		}
	}
	return OAuthIssuer{}, false
}

// OTP defaults when the configuration leaves them unset.
const (
	DefaultOtpLength         = 6
	DefaultOtpExpirySeconds  = 300
	MinOtpLength             = 4
	MaxOtpLength             = 12
	MaxOtpExpirySeconds      = 86400
	defaultOtpSenderName     = "Notifications"
	embeddedWalletConfigPath = "embeddedWalletConfig."
)

// OTPLength is the configured code length (default 6).
func (c EmbeddedWalletConfig) OTPLength() int {
	if c.OtpLength == nil {
		return DefaultOtpLength
	}
	return int(*c.OtpLength)
}

// OTPExpirySeconds is the configured code lifetime (default 300 s).
func (c EmbeddedWalletConfig) OTPExpirySeconds() int {
	if c.ExpirationSeconds == nil {
		return DefaultOtpExpirySeconds
	}
	return int(*c.ExpirationSeconds)
}

// SenderName is the display name of OTP emails.
func (c EmbeddedWalletConfig) SenderName() string {
	if c.SendFromEmailSenderName == nil {
		return defaultOtpSenderName
	}
	return *c.SendFromEmailSenderName
}

// EmbeddedWalletPatch changes the embedded-wallet setting field by field;
// sending it (even empty) enables embedded wallets. There is no way to turn
// them off again: wallets may hold money and credentials.
type EmbeddedWalletPatch struct {
	AppName                 jsonx.Optional[string] `json:"appName"`
	OtpLength               jsonx.Optional[int64]  `json:"otpLength"`
	Alphanumeric            jsonx.Optional[bool]   `json:"alphanumeric"`
	ExpirationSeconds       jsonx.Optional[int64]  `json:"expirationSeconds"`
	SendFromEmailAddress    jsonx.Optional[string] `json:"sendFromEmailAddress"`
	SendFromEmailSenderName jsonx.Optional[string] `json:"sendFromEmailSenderName"`
	ReplyToEmailAddress     jsonx.Optional[string] `json:"replyToEmailAddress"`
	LogoUrl                 jsonx.Optional[string] `json:"logoUrl"`
	// OAuthIssuers replaces the whole list (null or [] clears it).
	OAuthIssuers   jsonx.Optional[[]OAuthIssuer] `json:"oauthIssuers"`
	PasskeyRpID    jsonx.Optional[string]        `json:"passkeyRpId"`
	PasskeyOrigins jsonx.Optional[[]string]      `json:"passkeyOrigins"`
	// ExportRequiresApproval: null or false delivers exports at once.
	ExportRequiresApproval jsonx.Optional[bool] `json:"exportRequiresApproval"`
}

func (p *EmbeddedWalletPatch) validate(f *apierr.Fields, env string) {
	const pre = embeddedWalletConfigPath
	validateIssuers(f, p.OAuthIssuers.Ptr(), env)
	if v := p.PasskeyRpID.Ptr(); v != nil && (len(*v) > 253 || !hostnameRE.MatchString(*v)) {
		f.Add(pre+"passkeyRpId", apierr.Format, "must be a lowercase domain name such as wallet.example.com")
	}
	if v := p.PasskeyOrigins.Ptr(); v != nil {
		if len(*v) > 10 {
			f.Add(pre+"passkeyOrigins", apierr.MaxItems, "must list at most 10 origins")
		}
		for i, o := range *v {
			if !isHTTPSOrigin(o) {
				f.Add(fmt.Sprintf("%spasskeyOrigins[%d]", pre, i), apierr.Format, "must be an https origin such as https://wallet.example.com (no path)")
			}
		}
	}
	maxLen(f, pre+"appName", p.AppName, 255)
	maxLen(f, pre+"sendFromEmailSenderName", p.SendFromEmailSenderName, 255)
	if v := p.OtpLength.Ptr(); v != nil && (*v < MinOtpLength || *v > MaxOtpLength) {
		f.Add(pre+"otpLength", apierr.Maximum, "must be from %d to %d", MinOtpLength, MaxOtpLength)
	}
	if v := p.ExpirationSeconds.Ptr(); v != nil && (*v < 1 || *v > MaxOtpExpirySeconds) {
		f.Add(pre+"expirationSeconds", apierr.Maximum, "must be from 1 to %d seconds", MaxOtpExpirySeconds)
	}
	for name, o := range map[string]jsonx.Optional[string]{"sendFromEmailAddress": p.SendFromEmailAddress,
		"replyToEmailAddress": p.ReplyToEmailAddress} {
		if v := o.Ptr(); v != nil {
			if len(*v) > 255 {
				f.Add(pre+name, apierr.MaxLength, "must be at most 255 characters")
			} else if a, err := mail.ParseAddress(*v); err != nil || a.Address != *v {
				f.Add(pre+name, apierr.Format, "must be an email address such as noreply@example.com")
			}
		}
	}
	if v := p.LogoUrl.Ptr(); v != nil {
		if len(*v) > 512 {
			f.Add(pre+"logoUrl", apierr.MaxLength, "must be at most 512 characters")
		} else {
			checkURL(f, pre+"logoUrl", *v, true)
		}
	}
}

func (p *EmbeddedWalletPatch) apply(cur *EmbeddedWalletConfig) *EmbeddedWalletConfig {
	out := EmbeddedWalletConfig{}
	if cur != nil {
		out = *cur
	}
	setOpt(&out.AppName, p.AppName)
	setOpt(&out.OtpLength, p.OtpLength)
	setOpt(&out.Alphanumeric, p.Alphanumeric)
	setOpt(&out.ExpirationSeconds, p.ExpirationSeconds)
	setOpt(&out.SendFromEmailAddress, p.SendFromEmailAddress)
	setOpt(&out.SendFromEmailSenderName, p.SendFromEmailSenderName)
	setOpt(&out.ReplyToEmailAddress, p.ReplyToEmailAddress)
	setOpt(&out.LogoUrl, p.LogoUrl)
	setOpt(&out.PasskeyRpID, p.PasskeyRpID)
	setOpt(&out.ExportRequiresApproval, p.ExportRequiresApproval)
	if p.PasskeyOrigins.Set {
		out.PasskeyOrigins = nil
		if v := p.PasskeyOrigins.Ptr(); v != nil {
			out.PasskeyOrigins = *v
		}
	}
	if p.OAuthIssuers.Set {
		out.OAuthIssuers = nil
		if v := p.OAuthIssuers.Ptr(); v != nil {
			out.OAuthIssuers = *v
		}
	}
	return &out
}

// EmbeddedWallets returns the tenant's embedded-wallet setting, read through
// q, or nil when embedded wallets are not enabled.
func EmbeddedWallets(ctx context.Context, q store.Q, t store.Tenant) (*EmbeddedWalletConfig, error) {
	row, err := q.GetPlatformConfig(ctx, t, false)
	if err != nil {
		return nil, err
	}
	var doc document
	if err := json.Unmarshal(row.Document, &doc); err != nil {
		return nil, fmt.Errorf("platformconfig: stored document: %w", err)
	}
	return doc.EmbeddedWalletConfig, nil
}

// validateIssuers checks an oauthIssuers list: https issuers (http too in
// sandbox, for a local identity provider), each once, each with 1 to 20
// client ids of at most 255 characters.
func validateIssuers(f *apierr.Fields, list *[]OAuthIssuer, env string) {
	if list == nil {
		return
	}
	const pre = embeddedWalletConfigPath + "oauthIssuers"
	if len(*list) > MaxOAuthIssuers {
		f.Add(pre, apierr.MaxItems, "must list at most %d issuers", MaxOAuthIssuers)
		return
	}
	seen := map[string]bool{}
	for i, is := range *list {
		at := fmt.Sprintf("%s[%d]", pre, i)
		checkURL(f, at+".issuer", is.Issuer, env == store.EnvProduction)
		if seen[is.Issuer] {
			f.Add(at+".issuer", apierr.Enum, "is listed twice")
		}
		seen[is.Issuer] = true
		if len(is.ClientIDs) == 0 || len(is.ClientIDs) > 20 {
			f.Add(at+".clientIds", apierr.MaxItems, "must list 1 to 20 client ids (the aud a token must carry)")
		}
		for j, c := range is.ClientIDs {
			if c == "" || len(c) > 255 {
				f.Add(fmt.Sprintf("%s.clientIds[%d]", at, j), apierr.MaxLength, "must be 1 to 255 characters")
			}
		}
	}
}
