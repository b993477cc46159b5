package externalaccounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

// Challenge states (external_account_challenges.state).
const (
	challengeOpen      = "OPEN"
	challengeAbandoned = "ABANDONED"
	challengeVerified  = "VERIFIED"
	challengeFailed    = "FAILED"
	challengeRecorded  = "RECORDED"
	challengeCompleted = "COMPLETED"
)

// Liveness outcomes.
const (
	OutcomePass = "PASS"
	OutcomeFail = "FAIL"
)

// transitions is the ownership verification state machine (Part A
// "External account ownership verification"): the statuses an account may
// move to from each status, and on what.
//
//	PENDING_OWNERSHIP_VERIFICATION or UNVERIFIED --challenge--> PENDING_OWNERSHIP_VERIFICATION
//	PENDING_OWNERSHIP_VERIFICATION --valid signature before expiresAt--> ACTIVE
//	PENDING_OWNERSHIP_VERIFICATION --invalid signature--> UNVERIFIED
//	PENDING_OWNERSHIP_VERIFICATION --liveness outcome (async)--> ACTIVE or UNVERIFIED
var transitions = map[string]map[string][]string{
	"challenge": {
		StatusPendingOwnershipVerification: {StatusPendingOwnershipVerification},
		StatusUnverified:                   {StatusPendingOwnershipVerification},
	},
	"verify":   {StatusPendingOwnershipVerification: {StatusActive, StatusUnverified}},
	"liveness": {StatusPendingOwnershipVerification: {StatusActive, StatusUnverified}},
}

// CanTransition reports whether trigger may move an account from one status
// to another.
func CanTransition(trigger, from, to string) bool {
	for _, s := range transitions[trigger][from] {
		if s == to {
			return true
		}
	}
	return false
}

func move(row *store.ExternalAccount, trigger, to string) error {
	if !CanTransition(trigger, row.Status, to) {
		return fmt.Errorf("externalaccounts: %s cannot move %s from %s to %s", trigger, row.ID, row.Status, to)
	}
	row.Status = to
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// verifiable reports why ownership verification does not apply to an
// account, or "" when it does (R-EACCT-10).
func verifiable(row store.ExternalAccount) string {
	switch {
	case !row.SelfCustody:
		return "Ownership verification applies to self-custody wallets only; this account is not one"
	case row.OwnershipType != FirstParty:
		return "Ownership verification applies to FIRST_PARTY wallets only; this account's ownershipType is not FIRST_PARTY"
	case row.Status == StatusActive:
		return "The wallet's ownership is already verified"
	}
	return ""
}

// signer names the key a WALLET_SIGNATURE challenge must be signed by: the
// wallet address, or for a Lightning invoice the payee node.
func signer(spec *typeSpec, info AccountInfo) (label, value string) {
	if spec.kind == kindLightning {
		inv, err := walletsig.ParseBolt11(*info.Invoice)
		if err != nil {
			return "Node", ""
		}
		return "Node", hex.EncodeToString(inv.Payee)
	}
	return "Wallet", *info.Address
}

// Challenge starts (or restarts) ownership verification of a FIRST_PARTY
// self-custody wallet (R-EACCT-10..13): it abandons the current challenge,
// moves the account to PENDING_OWNERSHIP_VERIFICATION and returns the new
// challenge's material.
func (s *Service) Challenge(ctx context.Context, t store.Tenant, platform bool, accountID string, req ChallengeRequest) (Challenge, error) {
	if err := req.Validate(); err != nil {
		return Challenge{}, err
	}
	method := *req.Method
	var out Challenge
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getOwned(ctx, tx.Q, t, platform, accountID, true)
		if err != nil {
			return err
		}
		if why := verifiable(row); why != "" {
			return apierr.Conflict(why)
		}
		spec := specs[row.AccountType]
		info, err := infoOf(row)
		if err != nil {
			return err
		}
		x := &checker{}
		switch {
		case method == MethodWalletSignature && !spec.signature(&info):
			if spec.kind == kindLightning {
				x.add("method", apierr.Enum, "WALLET_SIGNATURE needs an invoice account (its payee node signs); verify this Lightning account with LIVENESS")
			} else {
				x.add("method", apierr.Enum, "%s wallets have no message-signing scheme paymentsd can check; use LIVENESS", spec.chain)
			}
		case method == MethodLiveness && t.Env != store.EnvSandbox:
			x.add("method", apierr.Enum, "no liveness provider is configured in production; use WALLET_SIGNATURE")
		}
		if err := x.err(); err != nil {
			return err
		}
		now := s.now()
		if err := tx.AbandonOwnershipChallenges(ctx, t, row.ID, now); err != nil {
			return err
		}
		c := store.OwnershipChallenge{ID: id.New(id.OwnershipChallenge), AccountID: row.ID, Tenant: t, Method: method,
			State: challengeOpen, CreatedAt: now, UpdatedAt: now}
		out.Method = method
		switch method {
		case MethodWalletSignature:
			c.ExpiresAt = now.Add(orDefault(s.SignatureTTL, 10*time.Minute))
			label, value := signer(spec, info)
			c.Message = fmt.Sprintf("paymentsd wallet ownership verification\n\n"+
				"Sign this message to prove that you control this wallet. Signing it moves no funds and costs nothing.\n\n"+
				"Network: %s\n%s: %s\nAccount: %s\nNonce: %s\nExpires: %s",
				spec.chain, label, value, row.ID, randomHex(16), c.ExpiresAt.Format(time.RFC3339))
			out.MessageToSign = c.Message
		case MethodLiveness:
			c.ExpiresAt = now.Add(orDefault(s.LivenessTTL, 30*time.Minute))
			raw := make([]byte, 32)
			_, _ = rand.Read(raw)
			token := base64.RawURLEncoding.EncodeToString(raw)
			c.TokenHash = hashToken(token)
			out.LivenessToken = token
		}
		out.ExpiresAt = c.ExpiresAt
		if err := tx.InsertOwnershipChallenge(ctx, c); err != nil {
			return err
		}
		if err := move(&row, "challenge", StatusPendingOwnershipVerification); err != nil {
			return err
		}
		row.UpdatedAt = now
		return tx.UpdateExternalAccount(ctx, row)
	})
	return out, err
}

// Verify completes a WALLET_SIGNATURE challenge (R-EACCT-14, R-EACCT-15): a
// valid signature over the exact messageToSign before expiresAt makes the
// account ACTIVE; a well-formed signature that does not verify makes it
// UNVERIFIED (a new challenge is needed) and answers 400. A malformed
// signature, or one sent after expiresAt, changes nothing.
func (s *Service) Verify(ctx context.Context, t store.Tenant, platform bool, accountID string, req VerifyRequest) (ExternalAccount, error) {
	if err := req.Validate(); err != nil {
		return ExternalAccount{}, err
	}
	var out ExternalAccount
	var refused error
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		refused = nil
		row, err := getOwned(ctx, tx.Q, t, platform, accountID, true)
		if err != nil {
			return err
		}
		c, err := tx.CurrentOwnershipChallenge(ctx, t, row.ID, true)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (c.Method != MethodWalletSignature || c.State != challengeOpen)) {
			return apierr.Conflict("No WALLET_SIGNATURE challenge is outstanding for this account; start one with POST …/" + accountID + "/challenge")
		}
		if err != nil {
			return err
		}
		now := s.now()
		if !now.Before(c.ExpiresAt) {
			return apierr.InvalidInput("The challenge expired at " + c.ExpiresAt.Format(time.RFC3339) + "; start a new one with POST …/" + accountID + "/challenge").
				WithDetails(map[string]any{"challengeExpiresAt": c.ExpiresAt})
		}
		info, err := infoOf(row)
		if err != nil {
			return err
		}
		verr := verifySignature(specs[row.AccountType], info, []byte(c.Message), *req.Signature)
		if errors.Is(verr, walletsig.ErrMalformed) {
			x := &checker{}
			x.add("signature", apierr.Format, "is not a signature in this chain's encoding (%s)", signatureEncoding(specs[row.AccountType]))
			return x.err()
		}
		if verr != nil && !errors.Is(verr, walletsig.ErrMismatch) {
			return verr
		}
		to, state := StatusActive, challengeVerified
		if verr != nil {
			to, state = StatusUnverified, challengeFailed
		}
		c.State, c.UpdatedAt = state, now
		if err := tx.UpdateOwnershipChallenge(ctx, c, challengeOpen); err != nil {
			return err
		}
		if err := move(&row, "verify", to); err != nil {
			return err
		}
		row.UpdatedAt = now
		if err := tx.UpdateExternalAccount(ctx, row); err != nil {
			return err
		}
		if err := emitStatus(ctx, tx, row); err != nil {
			return err
		}
		if verr != nil {
			x := &checker{}
			x.add("signature", apierr.Format, "does not verify: it was not made by this wallet's key over the exact messageToSign")
			e, _ := apierr.From(x.err())
			details := map[string]any{"errors": e.Details["errors"], "status": StatusUnverified}
			refused = apierr.InvalidInput("The signature does not verify; the account is now UNVERIFIED. Start a new challenge to retry.").
				WithDetails(details)
		}
		out, err = render(row)
		return err
	})
	if err != nil {
		return ExternalAccount{}, err
	}
	if refused != nil {
		return ExternalAccount{}, refused
	}
	return out, nil
}

// verifySignature checks sig over msg with the account's chain scheme.
func verifySignature(spec *typeSpec, info AccountInfo, msg []byte, sig string) error {
	switch spec.chain {
	case "ETHEREUM", "BASE", "POLYGON", "PLASMA":
		return walletsig.VerifyEVM(*info.Address, msg, sig)
	case "SOLANA":
		return walletsig.VerifySolana(*info.Address, msg, sig)
	case "TRON":
		return walletsig.VerifyTron(*info.Address, msg, sig)
	case "LIGHTNING":
		inv, err := walletsig.ParseBolt11(*info.Invoice)
		if err != nil {
			return err
		}
		return walletsig.VerifyLightningNode(inv.Payee, msg, sig)
	}
	return fmt.Errorf("externalaccounts: no signature scheme for %s", spec.accountType)
}

func signatureEncoding(spec *typeSpec) string {
	switch spec.chain {
	case "SOLANA":
		return "a 64-byte Ed25519 signature in Base58 or hex"
	case "LIGHTNING":
		return "a node signmessage signature in z-base-32"
	}
	return "65 bytes r‖s‖v in hex"
}
