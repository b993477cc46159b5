// Package customers registers a platform's customers (individuals and
// businesses) and verifies them: agreement consents, contact verification
// with one-time codes, KYC/KYB submissions decided by a KYC provider adapter
// (a sandbox implementation applies the spec's suffix tables), and the
// beneficial owners of businesses. It knows nothing about HTTP.
package customers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/events"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/platformconfig"
	"github.com/paymentsd/paymentsd/internal/store"
)

// Service implements the customer rules.
type Service struct {
	DB  *store.DB
	Log *slog.Logger
	// Catalog lists the agreements and their versions.
	Catalog Catalog
	// CloseAccounts runs inside the transaction that deletes a customer,
	// with the customer row locked: it closes the customer's internal
	// accounts, or returns the error that refuses the delete when they
	// still hold money (checked with the balance rows locked, so no credit
	// can land between the check and the delete). The accounts capability
	// sets it; nil means the customer has no accounts to close.
	CloseAccounts func(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string) error
	// OnCreate runs inside the transaction that creates a customer, after
	// the customer is stored (the accounts capability provisions the
	// customer's internal accounts there). An error rolls the creation
	// back. Nil does nothing.
	OnCreate func(ctx context.Context, tx *store.Tx, t store.Tenant, c Customer) error
	// ContactChange runs inside an update's transaction when it changes the
	// email (email set) or phone number (phone set), before anything of the
	// customer is written: embedded wallets whose OTP credentials are tied
	// to them need the change signed. A non-nil challenge stops the update
	// there (Update returns *Challenged; what the hook wrote commits).
	// UmaAddress reserves the customer's UMA address inside the
	// transaction that creates it, or that changes it (after releasing the
	// old one): the requested one, or one the platform's domain gives it.
	// It returns the address to store, "" for none. Nil: no addresses.
	UmaAddress func(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, requested *string) (string, error)
	// ReleaseUmaAddress frees a customer's address before it changes.
	ReleaseUmaAddress func(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string) error
	ContactChange     func(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, email, phone *string) (challenge any, err error)
	// Senders deliver one-time codes, per environment. Sandbox sends are
	// recorded (and logged with the code, which is always 123456);
	// production sends are logged without the code until a real email/SMS
	// adapter is configured.
	SandboxSender, ProductionSender Sender
	// KYC providers decide verifications, per environment. A nil provider
	// refuses submissions clearly instead of pretending.
	SandboxKYC, ProductionKYC KYCProvider

	keyMu   sync.Mutex
	codeKey []byte
}

// New returns a service with the default catalog, senders and providers.
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{
		DB: db, Log: log, Catalog: DefaultCatalog(),
		SandboxSender:    NewSandboxSender(log, 1000),
		ProductionSender: LogSender{Log: log},
		SandboxKYC:       SandboxProvider{},
	}
}

func (s *Service) now() time.Time { return s.DB.Now().UTC().Truncate(time.Microsecond) }

func customerNotFound(customerID string) error {
	return apierr.NotFound("CUSTOMER_NOT_FOUND", "Customer "+customerID)
}

func platformCustomerIDTaken(pcid string) error {
	return apierr.Conflict(fmt.Sprintf("platformCustomerId %q is already used by another active customer", pcid)).
		WithDetails(map[string]any{"platformCustomerId": pcid})
}

// getLive reads a live customer of the tenant or answers CUSTOMER_NOT_FOUND.
func getLive(ctx context.Context, q store.Q, t store.Tenant, customerID string, lock bool) (store.Customer, error) {
	row, err := q.GetCustomer(ctx, t, customerID, lock)
	if errors.Is(err, store.ErrNotFound) {
		return store.Customer{}, customerNotFound(customerID)
	}
	return row, err
}

func profileOf(row store.Customer) (Profile, error) {
	var p Profile
	if err := json.Unmarshal(row.Profile, &p); err != nil {
		return Profile{}, fmt.Errorf("customers: stored profile of %s: %w", row.ID, err)
	}
	return p, nil
}

func setProfile(row *store.Customer, p Profile) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	row.Profile = b
	row.Currencies = p.Currencies
	row.Region = ""
	if p.Region != nil {
		row.Region = *p.Region
	}
	return nil
}

// render builds the API customer from its row and consents.
func render(row store.Customer, consents []store.AgreementConsent) (Customer, error) {
	p, err := profileOf(row)
	if err != nil {
		return Customer{}, err
	}
	c := Customer{
		ID: row.ID, PlatformCustomerID: row.PlatformCustomerID, CustomerType: row.Type, Profile: p,
		AgreementConsents: []AgreementConsent{}, IsDeleted: row.DeletedAt != nil,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
	}
	if row.Type == Business {
		c.KybStatus = row.Status
		if p.BusinessInfo != nil {
			c.RegistrationNumber = p.BusinessInfo.RegistrationNumber
		}
	} else {
		c.KycStatus = row.Status
	}
	if rule := ProviderRuleFor(p); rule.VerifiesContact {
		c.ContactVerification = &ContactVerification{Email: ContactPending, Phone: ContactPending}
		if emailVerified(row, p) {
			c.ContactVerification.Email = ContactVerified
		}
		if phoneVerified(row, p) {
			c.ContactVerification.Phone = ContactVerified
		}
	}
	for _, a := range consents {
		c.AgreementConsents = append(c.AgreementConsents, AgreementConsent{Type: a.Type, AcceptedAt: a.AcceptedAt,
			IPAddress: a.IPAddress, TermsVersion: a.TermsVersion, AcceptanceMethod: a.AcceptanceMethod})
		if a.Type == AgreementEndUserTerms {
			c.EndUserTermsConsent = &EndUserTermsConsent{AcceptedAt: a.AcceptedAt, IPAddress: a.IPAddress,
				TermsVersion: a.TermsVersion, AcceptanceMethod: a.AcceptanceMethod}
		}
	}
	return c, nil
}

// renderIn renders a customer reading its consents through q.
func renderIn(ctx context.Context, q store.Q, t store.Tenant, row store.Customer) (Customer, error) {
	consents, err := q.AgreementConsents(ctx, t, row.ID)
	if err != nil {
		return Customer{}, err
	}
	return render(row, consents)
}

func emailVerified(row store.Customer, p Profile) bool {
	return row.EmailVerified != nil && p.Email != nil && *row.EmailVerified == *p.Email
}

func phoneVerified(row store.Customer, p Profile) bool {
	return row.PhoneVerified != nil && p.PhoneNumber != nil && *row.PhoneVerified == *p.PhoneNumber
}

// contactCleared reports whether KYC may begin as far as contact
// verification goes (R-CONTACT-06).
func contactCleared(row store.Customer, p Profile) bool {
	return !ProviderRuleFor(p).VerifiesContact || (emailVerified(row, p) && phoneVerified(row, p))
}

// putConsents records validated consents.
func putConsents(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, list []ConsentInput, now time.Time) error {
	for _, in := range list {
		at, err := time.Parse(time.RFC3339Nano, *in.AcceptedAt)
		if err != nil {
			return err // validated before; unreachable
		}
		if err := tx.PutAgreementConsent(ctx, store.AgreementConsent{
			CustomerID: customerID, Tenant: t, Type: *in.Type, TermsVersion: *in.TermsVersion,
			AcceptedAt: at.UTC().Truncate(time.Microsecond), IPAddress: *in.IPAddress,
			AcceptanceMethod: *in.AcceptanceMethod, RecordedAt: now,
		}); err != nil {
			return err
		}
	}
	return nil
}

// paperworkRequired reports whether the tenant's customers need a complete
// packet before any outcome: always in production; in sandbox unless the
// platform is regulated or skipVerificationPaperwork is on (R-SBX-09,
// R-SBX-12).
func paperworkRequired(ctx context.Context, q store.Q, t store.Tenant) (bool, error) {
	if t.Env != store.EnvSandbox {
		return true, nil
	}
	p, err := q.GetPlatform(ctx, t.PlatformID)
	if err != nil {
		return false, err
	}
	if p.Regulated {
		return false, nil
	}
	skip, err := platformconfig.SkipsVerificationPaperwork(ctx, q, t)
	return !skip, err
}

// Create registers a customer (R-CUST-01). On a sandbox tenant without
// paperwork, the sandbox outcome is decided at once (R-SBX-12).
func (s *Service) Create(ctx context.Context, t store.Tenant, req CreateRequest) (Customer, error) {
	now := s.now()
	if err := req.Validate(now, s.Catalog); err != nil {
		return Customer{}, err
	}
	list := consents(req.AgreementConsents, req.EndUserTermsConsent)
	if err := s.Catalog.checkVersions(list); err != nil {
		return Customer{}, err
	}
	customerID := id.New(id.Customer)
	pcid := strings.TrimPrefix(customerID, id.Customer+":")
	if req.PlatformCustomerID != nil {
		pcid = *req.PlatformCustomerID
	}
	p := req.newProfile()
	var out Customer
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row := store.Customer{ID: customerID, Tenant: t, PlatformCustomerID: pcid, Type: *req.CustomerType,
			Status: StatusUnverified, CreatedAt: now, UpdatedAt: now}
		if err := s.assignUma(ctx, tx, t, customerID, &p, p.UmaAddress); err != nil {
			return err
		}
		if err := setProfile(&row, p); err != nil {
			return err
		}
		if err := tx.InsertCustomer(ctx, row); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return platformCustomerIDTaken(pcid)
			}
			return err
		}
		if err := putConsents(ctx, tx, t, customerID, list, now); err != nil {
			return err
		}
		if err := s.resolve(ctx, tx, t, &row); err != nil {
			return err
		}
		var err error
		if out, err = renderIn(ctx, tx.Q, t, row); err != nil {
			return err
		}
		if s.OnCreate != nil {
			if err := s.OnCreate(ctx, tx, t, out); err != nil {
				return err
			}
		}
		return idempotency.Record(ctx, tx, out)
	})
	if err != nil {
		return Customer{}, err
	}
	return out, nil
}

// assignUma reserves the customer's UMA address and records it in p.
func (s *Service) assignUma(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, p *Profile, requested *string) error {
	if s.UmaAddress == nil {
		return nil
	}
	addr, err := s.UmaAddress(ctx, tx, t, customerID, requested)
	if err != nil {
		return err
	}
	p.UmaAddress = nil
	if addr != "" {
		p.UmaAddress = &addr
	}
	return nil
}

// changeUma moves the customer to a newly requested UMA address (the old
// one is freed); the same address again changes nothing.
func (s *Service) changeUma(ctx context.Context, tx *store.Tx, t store.Tenant, customerID string, cur *string, next *Profile, requested *string) error {
	next.UmaAddress = cur
	if requested == nil || s.UmaAddress == nil || (cur != nil && strings.EqualFold(*cur, *requested)) {
		return nil
	}
	if s.ReleaseUmaAddress != nil {
		if err := s.ReleaseUmaAddress(ctx, tx, t, customerID); err != nil {
			return err
		}
	}
	return s.assignUma(ctx, tx, t, customerID, next, requested)
}

// Get returns a live customer (R-CUST-02, R-CUST-03).
func (s *Service) Get(ctx context.Context, t store.Tenant, customerID string) (Customer, error) {
	q := s.DB.Read()
	row, err := getLive(ctx, q, t, customerID, false)
	if err != nil {
		return Customer{}, err
	}
	return renderIn(ctx, q, t, row)
}

// List returns one page of live customers, oldest first.
func (s *Service) List(ctx context.Context, t store.Tenant, f store.CustomerFilter, after string, limit int) ([]Customer, int, error) {
	q := s.DB.Read()
	rows, total, err := q.ListCustomers(ctx, t, f, after, limit)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	all, err := q.AgreementConsents(ctx, t, ids...)
	if err != nil {
		return nil, 0, err
	}
	byCustomer := map[string][]store.AgreementConsent{}
	for _, a := range all {
		byCustomer[a.CustomerID] = append(byCustomer[a.CustomerID], a)
	}
	out, err := page.Render(rows, func(r store.Customer) (Customer, error) { return render(r, byCustomer[r.ID]) })
	return out, total, err
}

// Update changes a customer's data (R-CUST-18). Changing the data never
// re-derives a verification status (R-CUST-30); changing the email or phone
// number makes that channel unverified again.
func (s *Service) Update(ctx context.Context, t store.Tenant, customerID string, req UpdateRequest) (Customer, error) {
	now := s.now()
	if err := req.Validate(now, s.Catalog); err != nil {
		return Customer{}, err
	}
	list := consents(req.AgreementConsents, req.EndUserTermsConsent)
	var out Customer
	var challenged any
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		challenged = nil
		row, err := getLive(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		x := &v{}
		if req.CustomerType != nil && *req.CustomerType != row.Type {
			x.add("customerType", apierr.Enum, "is %s; a customer's type cannot change", row.Type)
		}
		x.typeFields(row.Type, req.CreateRequest)
		cur, err := profileOf(row)
		if err != nil {
			return err
		}
		next := req.merged(cur)
		x.rules(row.Type, next)
		if err := mergeDuplicates(x.f.Err()); err != nil {
			return err
		}
		if err := s.Catalog.checkVersions(list); err != nil {
			return err
		}
		if req.PlatformCustomerID != nil {
			row.PlatformCustomerID = *req.PlatformCustomerID
		}
		if s.ContactChange != nil {
			email, phone := changed(cur.Email, next.Email), changed(cur.PhoneNumber, next.PhoneNumber)
			if email != nil || phone != nil {
				if challenged, err = s.ContactChange(ctx, tx, t, row.ID, email, phone); err != nil || challenged != nil {
					return err
				}
			}
		}
		if err := s.changeUma(ctx, tx, t, row.ID, cur.UmaAddress, &next, req.UmaAddress); err != nil {
			return err
		}
		if err := setProfile(&row, next); err != nil {
			return err
		}
		if cur.Email != nil && (next.Email == nil || *next.Email != *cur.Email) {
			if err := tx.DeleteContactCodes(ctx, t, row.ID, ChannelEmail); err != nil {
				return err
			}
		}
		if cur.PhoneNumber != nil && (next.PhoneNumber == nil || *next.PhoneNumber != *cur.PhoneNumber) {
			if err := tx.DeleteContactCodes(ctx, t, row.ID, ChannelPhone); err != nil {
				return err
			}
		}
		row.UpdatedAt = now
		if err := tx.UpdateCustomer(ctx, row); err != nil {
			if errors.Is(err, store.ErrConflict) {
				return platformCustomerIDTaken(row.PlatformCustomerID)
			}
			return err
		}
		if err := putConsents(ctx, tx, t, row.ID, list, now); err != nil {
			return err
		}
		out, err = renderIn(ctx, tx.Q, t, row)
		return err
	})
	if err != nil {
		return Customer{}, err
	}
	if challenged != nil {
		return Customer{}, &Challenged{Challenge: challenged}
	}
	return out, nil
}

// Challenged is Update's answer when the change must be signed first: the
// challenge to answer with (202), the customer unchanged.
type Challenged struct{ Challenge any }

func (c *Challenged) Error() string { return "customers: the update needs a signed retry" }

// changed is the new value of a contact field when it changes to a value.
func changed(cur, next *string) *string {
	if next != nil && (cur == nil || *cur != *next) {
		return next
	}
	return nil
}

// Delete removes a customer from the API (R-CUST-02): it disappears from
// lists and reads, its platformCustomerId becomes free, and its rows stay in
// the database for audits. A customer that still holds money cannot be
// deleted; deleting one closes its internal accounts (CloseAccounts), in the
// same transaction.
func (s *Service) Delete(ctx context.Context, t store.Tenant, customerID string) (Customer, error) {
	if _, err := getLive(ctx, s.DB.Read(), t, customerID, false); err != nil {
		return Customer{}, err
	}
	var out Customer
	err := s.DB.InTx(ctx, func(tx *store.Tx) error {
		row, err := getLive(ctx, tx.Q, t, customerID, true)
		if err != nil {
			return err
		}
		if s.CloseAccounts != nil {
			if err := s.CloseAccounts(ctx, tx, t, customerID); err != nil {
				return err
			}
		}
		now := s.now()
		row.DeletedAt, row.UpdatedAt = &now, now
		if err := tx.UpdateCustomer(ctx, row); err != nil {
			return err
		}
		if err := tx.DeleteContactCodes(ctx, t, row.ID, ""); err != nil {
			return err
		}
		out, err = renderIn(ctx, tx.Q, t, row)
		return err
	})
	if err != nil {
		return Customer{}, err
	}
	return out, nil
}

// transitions is the customer verification state machine (Part A
// "Customer verification"): every status a customer may move to from each
// status. APPROVED and REJECTED are final (R-CUST-29).
var transitions = map[string][]string{
	StatusUnverified: {StatusPending, StatusApproved, StatusRejected},
	StatusPending:    {StatusUnverified, StatusApproved, StatusRejected},
	StatusApproved:   {},
	StatusRejected:   {},
}

// CanTransition reports whether a customer may move from one status to
// another.
func CanTransition(from, to string) bool { return slices.Contains(transitions[from], to) }

// setStatus moves a customer to status and reports whether that is a
// change (the caller writes the row, then emits with emitStatus). A move the
// state machine forbids is a bug and fails the transaction.
func setStatus(row *store.Customer, status string) (bool, error) {
	if row.Status == status {
		return false, nil
	}
	if !CanTransition(row.Status, status) {
		return false, fmt.Errorf("customers: %s cannot move from %s to %s", row.ID, row.Status, status)
	}
	row.Status = status
	if status != StatusPending {
		row.ReviewVerificationID = nil
	}
	return true, nil
}

// EventType is the event a customer of typ entering status emits.
func EventType(typ, status string) string {
	if typ == Business {
		return "CUSTOMER.KYB_" + status
	}
	return "CUSTOMER.KYC_" + status
}

func emitStatus(ctx context.Context, tx *store.Tx, t store.Tenant, row store.Customer) error {
	c, err := renderIn(ctx, tx.Q, t, row)
	if err != nil {
		return err
	}
	_, err = events.Emit(ctx, tx, t, EventType(row.Type, row.Status), row.ID, c)
	return err
}
