package wallets

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// OTPMessage is one code to deliver. Code is the plaintext: senders must not
// log it.
type OTPMessage struct {
	Tenant    store.Tenant
	Channel   string // TypeEmailOTP or TypeSMSOTP
	To        string // email address or E.164 phone number
	Code      string
	ExpiresAt time.Time
	Config    platformconfig.EmbeddedWalletConfig
}

// OTPSender delivers codes (an email or SMS provider's adapter).
type OTPSender interface {
	SendOTP(ctx context.Context, m OTPMessage) error
}

// SandboxCode is the sandbox code of a length.
func SandboxCode(n int) string { return strings.Repeat("0", n) }

// senderFor is the adapter of an environment and channel: the sandbox
// records messages (SandboxSender); production uses Service.Sender, which
// the server configures. Production without an adapter for the channel is
// refused before anything changes.
func (s *Service) senderFor(env, channel string) (OTPSender, error) {
	if env == store.EnvSandbox {
		return SandboxSender{DB: s.DB}, nil
	}
	sender := s.Sender
	if mux, ok := sender.(Senders); ok {
		sender = mux.For(channel)
	}
	if sender == nil {
		what := "email (SMTP)"
		if channel == TypeSMSOTP {
			what = "SMS (Twilio)"
		}
		return nil, apierr.InvalidInput("No " + what + " sender is configured on this server for production; " +
			channel + " credentials cannot receive codes until the operator configures one")
	}
	return sender, nil
}

// canSend refuses, before anything is stored, a code that could not be
// delivered.
func (s *Service) canSend(env, typ string) error {
	if typ != TypeEmailOTP && typ != TypeSMSOTP {
		return nil
	}
	_, err := s.senderFor(env, typ)
	return err
}

const digitsAlphabet = "0123456789"
const alnumAlphabet = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// newCode draws a code of the configured length and alphabet (zeros in
// sandbox).
func newCode(env string, cfg platformconfig.EmbeddedWalletConfig) (string, error) {
	n := cfg.OTPLength()
	if env == store.EnvSandbox {
		return SandboxCode(n), nil
	}
	alphabet := digitsAlphabet
	if cfg.Alphanumeric != nil && *cfg.Alphanumeric {
		alphabet = alnumAlphabet
	}
	var b strings.Builder
	for range n {
		i, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b.WriteByte(alphabet[i.Int64()])
	}
	return b.String(), nil
}

// codeHash binds a code to its credential: SHA-256(credential id | code).
func codeHash(credID, code string) string {
	s := sha256.Sum256([]byte(credID + "|" + strings.ToUpper(code)))
	return hex.EncodeToString(s[:])
}

func otpTargetAD(credID string) []byte { return []byte("otp-target-key|" + credID) }

// issuedOTP is a code issued in a transaction, to send after its commit.
type issuedOTP struct {
	msg    OTPMessage
	bundle string
}

// issueOTPTx gives an OTP credential a new code and target key (replacing
// any earlier one, whose attempts reset) and returns what to send.
func (s *Service) issueOTPTx(ctx context.Context, tx *store.Tx, c *store.WalletCredential) (issuedOTP, error) {
	cfg, err := platformconfig.EmbeddedWallets(ctx, tx.Q, c.Tenant)
	if err != nil {
		return issuedOTP{}, err
	}
	if cfg == nil {
		cfg = &platformconfig.EmbeddedWalletConfig{}
	}
	code, err := newCode(c.Tenant.Env, *cfg)
	if err != nil {
		return issuedOTP{}, err
	}
	target, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return issuedOTP{}, err
	}
	sealed, err := s.Sealer.Seal(target.Bytes(), otpTargetAD(c.ID))
	if err != nil {
		return issuedOTP{}, fmt.Errorf("wallets: seal OTP target: %w", err)
	}
	now := tx.Now().UTC().Truncate(time.Microsecond)
	exp := now.Add(time.Duration(cfg.OTPExpirySeconds()) * time.Second)
	c.OTPHash, c.OTPExpiresAt, c.OTPAttempts = codeHash(c.ID, code), &exp, 0
	c.OTPTargetSealed, c.UpdatedAt = base64.StdEncoding.EncodeToString(sealed), now
	bundle, err := json.Marshal(TargetBundle{Version: "v1", TargetPublic: hex.EncodeToString(target.PublicKey().Bytes())})
	if err != nil {
		return issuedOTP{}, err
	}
	return issuedOTP{bundle: string(bundle), msg: OTPMessage{Tenant: c.Tenant, Channel: c.Type, To: c.Identity,
		Code: code, ExpiresAt: exp, Config: *cfg}}, nil
}

// send delivers an issued code after its transaction committed. A failed
// delivery leaves the credential as it is: the client asks for a new
// challenge.
func (s *Service) send(ctx context.Context, o issuedOTP) error {
	sender, err := s.senderFor(o.msg.Tenant.Env, o.msg.Channel)
	if err != nil {
		return err
	}
	if err := sender.SendOTP(ctx, o.msg); err != nil {
		s.Log.Error("wallets: OTP delivery failed", "channel", o.msg.Channel, "error", err.Error())
		return apierr.New("INTERNAL_ERROR", "The one-time code could not be delivered; request a new challenge")
	}
	return nil
}

// otpAttempt is the plaintext of an encryptedOtpBundle.
type otpAttempt struct {
	OtpCode   string `json:"otpCode"`
	PublicKey string `json:"publicKey"`
}

// OTPAttemptPlaintext is what a client seals into encryptedOtpBundle.
func OTPAttemptPlaintext(code, compressedPublicKey string) []byte {
	return mustJSON(otpAttempt{OtpCode: code, PublicKey: compressedPublicKey})
}

var errBundle = func(reason string) error {
	var f apierr.Fields
	f.Add("encryptedOtpBundle", apierr.Format, "%s", reason)
	return f.Err()
}

// openAttempt decrypts an encryptedOtpBundle with the credential's current
// target key and returns the code and the client's session public key.
func (s *Service) openAttempt(c store.WalletCredential, bundle string) (string, string, error) {
	enc, ct, err := ParseSealedBundle(bundle)
	if err != nil {
		return "", "", errBundle("must be the JSON {encappedPublic, ciphertext} an HPKE library produces: " + err.Error())
	}
	sealed, err := base64.StdEncoding.DecodeString(c.OTPTargetSealed)
	if err != nil {
		return "", "", fmt.Errorf("wallets: stored OTP target: %w", err)
	}
	raw, err := s.Sealer.Open(sealed, otpTargetAD(c.ID))
	if err != nil {
		return "", "", fmt.Errorf("wallets: open OTP target: %w", err)
	}
	priv, err := ecdh.P256().NewPrivateKey(raw)
	if err != nil {
		return "", "", fmt.Errorf("wallets: OTP target: %w", err)
	}
	pt, err := hpkeOpen(priv, InfoOTP, enc, ct)
	if err != nil {
		return "", "", errBundle("does not decrypt with the current otpEncryptionTargetBundle; seal the attempt to the latest challenge's bundle")
	}
	var a otpAttempt
	if err := json.Unmarshal(pt, &a); err != nil || a.OtpCode == "" || len(a.OtpCode) > 32 {
		return "", "", errBundle("decrypts to something other than {otpCode, publicKey}")
	}
	if _, compressed, err := ParsePublicKey(a.PublicKey); err != nil || !compressed {
		return "", "", errBundle("publicKey inside the bundle must be a compressed P-256 key in hex (66 characters)")
	}
	return a.OtpCode, strings.ToLower(a.PublicKey), nil
}

// checkCode consumes an attempt at the credential's code and reports the
// refusal, if any. The credential is changed in place (attempts, and the
// code cleared once used or exhausted) and must be written back even when
// the answer is a refusal.
func checkCode(c *store.WalletCredential, code string, now time.Time) error {
	switch {
	case c.OTPHash == "":
		return apierr.New("AUTH_CREDENTIAL_VERIFICATION_REQUIRED", "No code is outstanding for this credential; request one with POST /auth/credentials/{id}/challenge")
	case c.OTPExpiresAt == nil || !now.Before(*c.OTPExpiresAt):
		c.OTPHash, c.OTPTargetSealed = "", ""
		return apierr.New("AUTH_CREDENTIAL_VERIFICATION_EXPIRED", "The code expired; request a new one with POST /auth/credentials/{id}/challenge")
	}
	c.OTPAttempts++
	if subtle.ConstantTimeCompare([]byte(codeHash(c.ID, code)), []byte(c.OTPHash)) == 1 {
		c.OTPHash, c.OTPTargetSealed = "", ""
		return nil
	}
	if c.OTPAttempts >= MaxOTPAttempts {
		c.OTPHash, c.OTPTargetSealed = "", ""
		return apierr.New("AUTH_CREDENTIAL_VERIFICATION_EXPIRED", fmt.Sprintf("Wrong code, and the %d attempts allowed for it are used; request a new code", MaxOTPAttempts))
	}
	return apierr.Newf("UNAUTHORIZED", "Wrong code; %d attempts left", MaxOTPAttempts-c.OTPAttempts)
}
