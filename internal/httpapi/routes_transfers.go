package httpapi

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/id"
	"github.com/paymentsd/paymentsd/internal/ledger"
	"github.com/paymentsd/paymentsd/internal/quotes"
)

func init() { routeGroups = append(routeGroups, (*Server).transferRoutes) }

// transferRoutes: the deprecated transfer endpoints, mapped onto quotes as
// Part B describes (R-QUOTE-43..50, R-VER-03, R-VER-04, R-IDEM-10). Both
// answer 200 with the transaction.
func (s *Server) transferRoutes() {
	h := &transferHandlers{s: s, svc: s.quoteService()}
	s.handle(route{pattern: "POST /transfer-out", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: h.out})
	s.handle(route{pattern: "POST /transfer-in", need: auth.NeedMoney, idempotent: true, recordsInTx: true, h: h.in})
}

type transferHandlers struct {
	s   *Server
	svc *quotes.Service
}

type accountRef struct {
	AccountID *string `json:"accountId"`
}

type transferOutDestination struct {
	AccountID   *string `json:"accountId"`
	PaymentRail *string `json:"paymentRail"`
}

// transferOutRequest is TransferOutRequest (Part A).
type transferOutRequest struct {
	Source                *accountRef             `json:"source"`
	Destination           *transferOutDestination `json:"destination"`
	Amount                *int64                  `json:"amount"`
	RemittanceInformation *string                 `json:"remittanceInformation"`
	PurposeOfPayment      *string                 `json:"purposeOfPayment"`
}

func (r *transferOutRequest) Validate() error {
	var f apierr.Fields
	if r.Source == nil || r.Source.AccountID == nil || *r.Source.AccountID == "" {
		f.Add("source.accountId", apierr.Required, "is required: the internal account to send from")
	} else if !strings.HasPrefix(*r.Source.AccountID, id.InternalAccount+":") {
		f.Add("source.accountId", apierr.Pattern, "must be an internal account id")
	}
	if r.Destination == nil || r.Destination.AccountID == nil || *r.Destination.AccountID == "" {
		f.Add("destination.accountId", apierr.Required, "is required: the external account to pay")
	} else if !strings.HasPrefix(*r.Destination.AccountID, id.ExternalAccount+":") {
		f.Add("destination.accountId", apierr.Pattern, "must be an external account id")
	}
	if r.Amount != nil && *r.Amount <= 0 {
		f.Add("amount", apierr.Minimum, "must be a positive integer in the smallest unit")
	} else if r.Amount != nil && *r.Amount > ledger.MaxAmount {
		f.Add("amount", apierr.Maximum, "must be at most %d (the largest amount the ledger takes)", ledger.MaxAmount)
	}
	if r.RemittanceInformation != nil && utf8.RuneCountInString(*r.RemittanceInformation) > quotes.MaxRemittanceInformation {
		f.Add("remittanceInformation", apierr.MaxLength, "must be at most %d characters", quotes.MaxRemittanceInformation)
	}
	return f.Err()
}

// out maps a transfer-out onto POST /quotes: ACCOUNT source and
// destination, amount → lockedCurrencyAmount with SENDING, rail,
// remittanceInformation and purposeOfPayment kept, immediatelyExecute. An
// omitted amount sends the source's whole available balance.
func (h *transferHandlers) out(w http.ResponseWriter, r *http.Request) error {
	var req transferOutRequest
	if err := decode(r, &req, func(req transferOutRequest) error { return req.Validate() }); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	quoteRecordStatus(r, http.StatusOK)
	t := principal(r).Tenant
	amount := req.Amount
	if amount == nil {
		avail, err := h.svc.Available(r.Context(), t, *req.Source.AccountID)
		if err != nil {
			return err
		}
		amount = &avail
	}
	account, sending := quotes.SourceAccount, "SENDING"
	q := quotes.Request{
		Source:             &quotes.SourceIn{SourceType: &account, AccountID: req.Source.AccountID},
		Destination:        &quotes.DestinationIn{DestinationType: &account, AccountID: req.Destination.AccountID, PaymentRail: req.Destination.PaymentRail},
		LockedCurrencySide: &sending, LockedCurrencyAmount: amount,
		RemittanceInformation: req.RemittanceInformation, PurposeOfPayment: req.PurposeOfPayment,
	}
	x, err := h.svc.CreateTransfer(r.Context(), t, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

// transferInRequest is the reference's TransferInRequest.
type transferInRequest struct {
	Source      *accountRef `json:"source"`
	Destination *accountRef `json:"destination"`
	Amount      *int64      `json:"amount"`
}

func (r *transferInRequest) Validate() error {
	var f apierr.Fields
	if r.Source == nil || r.Source.AccountID == nil || *r.Source.AccountID == "" {
		f.Add("source.accountId", apierr.Required, "is required: the external account to pull from")
	} else if !strings.HasPrefix(*r.Source.AccountID, id.ExternalAccount+":") {
		f.Add("source.accountId", apierr.Pattern, "must be an external account id")
	}
	if r.Destination == nil || r.Destination.AccountID == nil || *r.Destination.AccountID == "" {
		f.Add("destination.accountId", apierr.Required, "is required: the internal account to credit")
	} else if !strings.HasPrefix(*r.Destination.AccountID, id.InternalAccount+":") {
		f.Add("destination.accountId", apierr.Pattern, "must be an internal account id")
	}
	if r.Amount == nil {
		f.Add("amount", apierr.Required, "is required: the amount to pull, in the smallest unit")
	} else if *r.Amount <= 0 {
		f.Add("amount", apierr.Minimum, "must be a positive integer in the smallest unit")
	} else if *r.Amount > ledger.MaxAmount {
		f.Add("amount", apierr.Maximum, "must be at most %d (the largest amount the ledger takes)", ledger.MaxAmount)
	}
	return f.Err()
}

// in maps a transfer-in onto POST /quotes like transfer-out, without rail or
// remittance fields: an external source with pull ability into an internal
// account.
func (h *transferHandlers) in(w http.ResponseWriter, r *http.Request) error {
	var req transferInRequest
	if err := decode(r, &req, func(req transferInRequest) error { return req.Validate() }); err != nil {
		return err
	}
	if err := req.Validate(); err != nil {
		return err
	}
	quoteRecordStatus(r, http.StatusOK)
	account, sending := quotes.SourceAccount, "SENDING"
	q := quotes.Request{
		Source:             &quotes.SourceIn{SourceType: &account, AccountID: req.Source.AccountID},
		Destination:        &quotes.DestinationIn{DestinationType: &account, AccountID: req.Destination.AccountID},
		LockedCurrencySide: &sending, LockedCurrencyAmount: req.Amount,
	}
	x, err := h.svc.CreateTransfer(r.Context(), principal(r).Tenant, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}
