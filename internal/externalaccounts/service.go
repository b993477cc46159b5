// Package externalaccounts registers the bank accounts and wallets outside
// the service that customers and the platform are paid out to: per-type
// validation with the checksums of each scheme, duplicate detection,
// bank-account validation of new US accounts, trusted beneficiaries, and
// ownership verification of self-custody wallets by wallet signature or a
// hosted liveness check whose outcome is applied in the background. It knows
// nothing about HTTP.
package externalaccounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Service implements the external account rules.
type Service struct {
	DB  *store.DB
	Log *slog.Logger

	// Bank-account validators check new US accounts, per environment. A nil
	// validator leaves accounts PENDING: nothing is paid to an account that
	// nobody validated.
	SandboxValidator, ProductionValidator BankValidator
	// Strong customer authentication of trust changes, per environment. A
	// nil one refuses trust changes clearly.
	SandboxSCA, ProductionSCA SCA
	// LIVENESS challenges are sandbox only: the hosted page paymentsd
	// serves is a simulator, and production needs a liveness provider that
	// is not integrated yet, so production refuses LIVENESS clearly.

	// SignatureTTL is how long a WALLET_SIGNATURE challenge lasts (default
	// 10 minutes), LivenessTTL a LIVENESS link (default 30 minutes).
	SignatureTTL, LivenessTTL time.Duration
	// LivenessDelay is how long after a person finishes the liveness check
	// its outcome is applied (default 2s): the outcome is asynchronous, as
	// a provider's would be.
	LivenessDelay time.Duration
	// Poll is how often Run looks for due liveness outcomes (default 1s).
	Poll time.Duration
}

// New returns a service with the sandbox adapters.
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{DB: db, Log: log, SandboxValidator: SandboxValidator{}, SandboxSCA: SandboxSCA{}}
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func notFound(accountID string) error {
	return apierr.NotFound("ACCOUNT_NOT_FOUND", "External account "+accountID)
}

// getOwned reads a live account of the tenant that belongs to the path's
// owner kind: the platform's own accounts under /platform, customers'
// accounts under /customers. Anything else is ACCOUNT_NOT_FOUND.
func getOwned(ctx context.Context, q store.Q, t store.Tenant, platform bool, accountID string, lock bool) (store.ExternalAccount, error) {
	row, err := q.GetExternalAccount(ctx, t, accountID, lock)
	if errors.Is(err, store.ErrNotFound) || (err == nil && platform != (row.CustomerID == "")) {
		return store.ExternalAccount{}, notFound(accountID)
	}
	return row, err
}

func infoOf(row store.ExternalAccount) (AccountInfo, error) {
	var a AccountInfo
	if err := json.Unmarshal(row.Info, &a); err != nil {
		return AccountInfo{}, fmt.Errorf("externalaccounts: stored accountInfo of %s: %w", row.ID, err)
	}
	return a, nil
}

// usRails are the rails a US account is reachable on.
var usRails = []string{"ACH", "WIRE", "RTP", "FEDNOW"}

// railsOf lists the rails an account type is reachable on, so a quote picks
// the right default rail; nil leaves the choice to the currency's default.
func railsOf(accountType string) []string {
	switch {
	case accountType == "USD_ACCOUNT":
		return usRails
	case accountType == "SPARK_WALLET":
		return []string{"SPARK"}
	case accountType == "LIGHTNING":
		return []string{"LIGHTNING"}
	case strings.HasSuffix(accountType, "_WALLET"):
		return []string{"ONCHAIN"}
	}
	return nil
}

// render builds the API resource from a row.
func render(row store.ExternalAccount) (ExternalAccount, error) {
	info, err := infoOf(row)
	if err != nil {
		return ExternalAccount{}, err
	}
	out := ExternalAccount{
		ID: row.ID, CustomerID: row.CustomerID, Status: row.Status, PlatformAccountID: row.PlatformAccountID,
		OwnershipType: row.OwnershipType, Currency: row.Currency, BankAccountValidation: row.BankValidation,
		AccountInfo: infoOut{AccountInfo: info}, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	out.AccountInfo.PaymentRails = railsOf(row.AccountType)
	if row.CustomerID != "" {
		uma, trusted := row.DefaultUmaDeposit, row.Trusted
		out.DefaultUmaDepositAccount, out.Trusted = &uma, &trusted
	}
	return out, nil
}

var errDuplicate = errors.New("externalaccounts: duplicate")

// duplicate is 409 DUPLICATE_EXTERNAL_ACCOUNT naming the existing account;
// details.platformAccountId is there only when the existing account is the
// platform's own (R-EACCT-07, R-ERR-05).
func duplicate(existing store.ExternalAccount) error {
	details := map[string]any{"externalAccountId": existing.ID}
	if existing.CustomerID == "" {
		details["platformAccountId"] = existing.PlatformAccountID
	}
	return apierr.Newf("DUPLICATE_EXTERNAL_ACCOUNT", "This account is already registered as %s; use it, or delete it first",
		existing.ID).WithDetails(details)
}

// Create registers an account for a customer (R-EACCT-01..07).
func (s *Service) Create(ctx context.Context, t store.Tenant, req CreateRequest) (ExternalAccount, error) {
	if err := req.Validate(s.now()); err != nil {
		return ExternalAccount{}, err
	}
	return s.create(ctx, t, *req.CustomerID, *req.Currency, req.PlatformAccountID, req.OwnershipType,
		req.DefaultUmaDepositAccount != nil && *req.DefaultUmaDepositAccount, req.AccountInfo)
}

// CreatePlatform registers one of the platform's own accounts.
func (s *Service) CreatePlatform(ctx context.Context, t store.Tenant, req PlatformCreateRequest) (ExternalAccount, error) {
	if err := req.Validate(s.now()); err != nil {
		return ExternalAccount{}, err
	}
	return s.create(ctx, t, "", *req.Currency, req.PlatformAccountID, req.OwnershipType, false, req.AccountInfo)
}

func (s *Service) create(ctx context.Context, t store.Tenant, customerID, currency string, platformAccountID,
	ownershipType *string, defaultUma bool, info *AccountInfo) (ExternalAccount, error) {
	now := s.now()
	spec := specs[*info.AccountType]
	accountID := id.New(id.ExternalAccount)
	row := store.ExternalAccount{
		ID: accountID, Tenant: t, CustomerID: customerID, AccountType: spec.accountType, Currency: currency,
		Fingerprint: spec.fingerprint(info), PlatformAccountID: strings.TrimPrefix(accountID, id.ExternalAccount+":"),
		SelfCustody: spec.selfCustody(info), Status: StatusActive, DefaultUmaDeposit: defaultUma,
		CreatedAt: now, UpdatedAt: now,
	}
	if platformAccountID != nil {
		row.PlatformAccountID = *platformAccountID
	}
	if ownershipType != nil {
		row.OwnershipType = *ownershipType
	}
	if row.OwnershipType == FirstParty && row.SelfCustody {
		row.Status = StatusPendingOwnershipVerification
	}
	if spec.accountType == "USD_ACCOUNT" {
		// Validation runs outside the transaction: a real validator talks
		// to a partner.
		row.BankValidation, row.BankValidationReason = s.validateBank(ctx, t, *info.RoutingNumber, *info.AccountNumber)
	}
	b, err := json.Marshal(info)
	if err != nil {
		return ExternalAccount{}, err
	}
	row.Info = b
	var out ExternalAccount
	var existing store.ExternalAccount
	err = s.DB.InTx(ctx, func(tx *store.Tx) error {
		if customerID != "" {
			if _, err := tx.GetCustomer(ctx, t, customerID, false); errors.Is(err, store.ErrNotFound) {
				return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+customerID)
			} else if err != nil {
				return err
			}
		}
		dup, err := tx.ExternalAccountByFingerprint(ctx, t, customerID, row.Fingerprint)
		switch {
		case err == nil:
			existing = dup
			return errDuplicate
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if err := tx.InsertExternalAccount(ctx, row); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return errDuplicate // a concurrent twin won; read it after the rollback
			}
			return err
		}
		if defaultUma {
			if err := tx.ClearDefaultUmaDeposit(ctx, t, customerID, row.ID, now); err != nil {
				return err
			}
		}
		if out, err = render(row); err != nil {
			return err
		}
		return idempotency.Record(ctx, tx, out)
	})
	if errors.Is(err, errDuplicate) {
		if existing.ID == "" {
			if existing, err = s.DB.Read().ExternalAccountByFingerprint(ctx, t, customerID, row.Fingerprint); err != nil {
				return ExternalAccount{}, err
			}
		}
		return ExternalAccount{}, duplicate(existing)
	}
	if err != nil {
		return ExternalAccount{}, err
	}
	return out, nil
}

// Get returns an account under the customer (platform false) or platform
// path.
func (s *Service) Get(ctx context.Context, t store.Tenant, platform bool, accountID string) (ExternalAccount, error) {
	row, err := getOwned(ctx, s.DB.Read(), t, platform, accountID, false)
	if err != nil {
		return ExternalAccount{}, err
	}
	return render(row)
}

// Lookup returns any live account of the tenant, the customer's or the
// platform's: for services that pay to an account id.
func (s *Service) Lookup(ctx context.Context, t store.Tenant, accountID string) (ExternalAccount, error) {
	row, err := s.DB.Read().GetExternalAccount(ctx, t, accountID, false)
	if errors.Is(err, store.ErrNotFound) {
		return ExternalAccount{}, notFound(accountID)
	}
	if err != nil {
		return ExternalAccount{}, err
	}
	return render(row)
}

// List returns one page of live accounts, oldest first.
func (s *Service) List(ctx context.Context, t store.Tenant, f store.ExternalAccountFilter, after string, limit int) ([]ExternalAccount, int, error) {
	rows, total, err := s.DB.Read().ListExternalAccounts(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	out, err := page.Render(rows, render)
	return out, total, err
}

// Delete removes an account from the API; its row stays for audits. A
// trusted beneficiary cannot be deleted before it is untrusted (R-EACCT-08,
// R-EACCT-09).
func (s *Service) Delete(ctx context.Context, t store.Tenant, platform bool, accountID string) error {
	return s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getOwned(ctx, tx.Q, t, platform, accountID, true)
		if err != nil {
			return err
		}
		if row.Trusted {
			return apierr.New("BENEFICIARY_TRUSTED", "The account is a trusted beneficiary; untrust it with POST /customers/external-accounts/"+
				accountID+"/untrust and its /confirm, then delete it")
		}
		now := s.now()
		row.DeletedAt, row.UpdatedAt = &now, now
		row.TrustChange, row.TrustChallengeID, row.TrustExpiresAt = "", "", nil
		row.DefaultUmaDeposit = false
		if err := tx.UpdateExternalAccount(ctx, row); err != nil {
			return err
		}
		return tx.AbandonOwnershipChallenges(ctx, t, row.ID, now)
	})
}

// UsableForPayout reports whether money may be sent to an account, as the
// services that pay out ask before paying: a US account still being
// validated is 409 BANK_ACCOUNT_VALIDATION_PENDING (R-EACCT-17), one whose
// validation failed 400 INVALID_BANK_ACCOUNT (R-EACCT-18), a wallet whose
// ownership is not verified 400 EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED, an
// unknown account 404 ACCOUNT_NOT_FOUND.
func (s *Service) UsableForPayout(ctx context.Context, t store.Tenant, accountID string) error {
	row, err := s.DB.Read().GetExternalAccount(ctx, t, accountID, false)
	if errors.Is(err, store.ErrNotFound) {
		return notFound(accountID)
	}
	if err != nil {
		return err
	}
	switch row.BankValidation {
	case ValidationPending:
		return apierr.New("BANK_ACCOUNT_VALIDATION_PENDING",
			"The bank account "+accountID+" is still being validated, which takes a few banking days; retry later")
	case ValidationFailed:
		reason := "The bank account " + accountID + " failed validation"
		if row.BankValidationReason != "" {
			reason += ": " + row.BankValidationReason
		}
		return apierr.New("INVALID_BANK_ACCOUNT", reason+"; register a corrected account")
	}
	if row.Status != StatusActive {
		return apierr.New("EXTERNAL_ACCOUNT_VERIFICATION_REQUIRED",
			"The ownership of wallet "+accountID+" is not verified; complete POST …/"+accountID+"/challenge and …/verify first")
	}
	return nil
}

// emitStatus records EXTERNAL_ACCOUNT.STATUS_UPDATED for row's new status.
func emitStatus(ctx context.Context, tx *store.Tx, row store.ExternalAccount) error {
	a, err := render(row)
	if err != nil {
		return err
	}
	_, err = events.Emit(ctx, tx, row.Tenant, events.ExternalAccountStatusUpdated, row.ID, a)
	return err
}
