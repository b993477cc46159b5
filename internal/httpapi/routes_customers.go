package httpapi

import (
	"errors"
	"github.com/paymentsd/paymentsd/internal/signedretry"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/idempotency"
	"github.com/paymentsd/paymentsd/internal/page"
	"github.com/paymentsd/paymentsd/internal/store"
)

func init() { routeGroups = append(routeGroups, (*Server).customerRoutes) }

// customerRoutes: customers, agreements, contact verification, KYC/KYB
// verifications and beneficial owners (R-CUST-*, R-CONTACT-*, R-SBX-04..15).
func (s *Server) customerRoutes() {
	h := &customerHandlers{s: s, svc: s.customerService()}
	s.handle(route{pattern: "POST /customers", need: auth.NeedWrite, idempotent: true, h: h.create})
	s.handle(route{pattern: "GET /customers", need: auth.NeedView, query: listQuery("platformCustomerId", "customerType", "region", "currency", "createdAfter", "createdBefore", "updatedAfter", "updatedBefore"), h: h.list})
	s.handle(route{pattern: "GET /customers/{customerId}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "PATCH /customers/{customerId}", need: auth.NeedWrite, h: h.update})
	s.handle(route{pattern: "DELETE /customers/{customerId}", need: auth.NeedWrite, h: h.delete})
	s.handle(route{pattern: "GET /customers/agreements", need: auth.NeedView, h: h.agreements})
	s.handle(route{pattern: "GET /customers/end-user-terms", need: auth.NeedView, h: h.endUserTerms})

	s.handle(route{pattern: "POST /customers/{customerId}/verify-email", need: auth.NeedWrite, h: h.sendCode(customers.ChannelEmail)})
	s.handle(route{pattern: "POST /customers/{customerId}/verify-email/confirm", need: auth.NeedWrite, h: h.confirmCode(customers.ChannelEmail)})
	s.handle(route{pattern: "POST /customers/{customerId}/verify-phone", need: auth.NeedWrite, h: h.sendCode(customers.ChannelPhone)})
	s.handle(route{pattern: "POST /customers/{customerId}/verify-phone/confirm", need: auth.NeedWrite, h: h.confirmCode(customers.ChannelPhone)})

	s.handle(route{pattern: "POST /verifications", need: auth.NeedWrite, idempotent: true, h: h.submitVerification})
	s.handle(route{pattern: "GET /verifications", need: auth.NeedView, query: listQuery("customerId", "verificationStatus"), h: h.listVerifications})
	s.handle(route{pattern: "GET /verifications/{verificationId}", need: auth.NeedView, h: h.getVerification})

	s.handle(route{pattern: "POST /beneficial-owners", need: auth.NeedWrite, idempotent: true, h: h.createOwner})
	s.handle(route{pattern: "GET /beneficial-owners", need: auth.NeedView, query: listQuery("customerId"), h: h.listOwners})
	s.handle(route{pattern: "GET /beneficial-owners/{beneficialOwnerId}", need: auth.NeedView, h: h.getOwner})
	s.handle(route{pattern: "PATCH /beneficial-owners/{beneficialOwnerId}", need: auth.NeedWrite, h: h.updateOwner})
	s.handle(route{pattern: "DELETE /beneficial-owners/{beneficialOwnerId}", need: auth.NeedWrite, h: h.deleteOwner})

	s.handle(route{pattern: "POST /sandbox/documents", need: auth.NeedWrite, idempotent: true, h: h.recordDocument})
}

// customerServices holds each server's customers service, so other
// capabilities (accounts sets OnCreate and CloseAccounts; money movement
// asks TermsAccepted) and tests reach the same instance.
var customerServices sync.Map // *Server → *customers.Service

// customerService returns the server's customers service, creating it on
// first use.
func (s *Server) customerService() *customers.Service {
	if svc, ok := customerServices.Load(s); ok {
		return svc.(*customers.Service)
	}
	svc, _ := customerServices.LoadOrStore(s, s.withUma(s.withWallets(s.withAccounts(customers.New(s.db, s.log)))))
	return svc.(*customers.Service)
}

type customerHandlers struct {
	s   *Server
	svc *customers.Service
}

func created(r *http.Request) {
	if c := idempotency.FromContext(r.Context()); c != nil {
		c.Status = http.StatusCreated
	}
}

func (h *customerHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req customers.CreateRequest
	if err := decode(r, &req, func(req customers.CreateRequest) error { return req.Validate(h.s.db.Now(), h.svc.Catalog) }); err != nil {
		return err
	}
	created(r)
	c, err := h.svc.Create(r.Context(), principal(r).Tenant, req)
	if err == nil {
		err = h.s.withSca(r.Context(), principal(r).Tenant, &c)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, c)
	return nil
}

func (h *customerHandlers) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Get(r.Context(), principal(r).Tenant, r.PathValue("customerId"))
	if err == nil {
		err = h.s.withSca(r.Context(), principal(r).Tenant, &c)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *customerHandlers) update(w http.ResponseWriter, r *http.Request) error {
	var req customers.UpdateRequest
	if err := decode(r, &req, func(req customers.UpdateRequest) error { return req.Validate(h.s.db.Now(), h.svc.Catalog) }); err != nil {
		return err
	}
	// A contact change tied to embedded-wallet credentials is a signed retry.
	ctx := signedretry.WithIncoming(r.Context(), incoming(r))
	c, err := h.svc.Update(ctx, principal(r).Tenant, r.PathValue("customerId"), req)
	var challenged *customers.Challenged
	if errors.As(err, &challenged) {
		writeJSON(w, http.StatusAccepted, challenged.Challenge)
		return nil
	}
	if err == nil {
		err = h.s.withSca(r.Context(), principal(r).Tenant, &c)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *customerHandlers) delete(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Delete(r.Context(), principal(r).Tenant, r.PathValue("customerId"))
	if err == nil {
		err = h.s.withSca(r.Context(), principal(r).Tenant, &c)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (h *customerHandlers) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.CustomerFilter{
		PlatformCustomerID: q.Get("platformCustomerId"),
		Type:               queryEnum(&f, q, "customerType", customers.CustomerTypes),
		CreatedAfter:       queryTime(&f, q, "createdAfter"),
		CreatedBefore:      queryTime(&f, q, "createdBefore"),
		UpdatedAfter:       queryTime(&f, q, "updatedAfter"),
		UpdatedBefore:      queryTime(&f, q, "updatedBefore"),
	}
	if region := q.Get("region"); region != "" {
		if !customers.IsCountry(region) {
			f.Add("region", apierr.Enum, "must be an ISO 3166-1 alpha-2 country code such as US")
		}
		filter.Region = region
	}
	if cur := q.Get("currency"); cur != "" {
		if _, ok := currency.Lookup(cur); !ok {
			f.Add("currency", apierr.Enum, "must be one of %s", strings.Join(currency.Codes(), ", "))
		}
		filter.Currency = cur
	}
	return writeListPage(w, r, h.s.cursors, &f, "customers", func(after string, limit int) ([]customers.Customer, int, error) {
		list, n, err := h.svc.List(r.Context(), principal(r).Tenant, filter, after, limit)
		if err == nil {
			ptrs := make([]*customers.Customer, len(list))
			for i := range list {
				ptrs[i] = &list[i]
			}
			err = h.s.withSca(r.Context(), principal(r).Tenant, ptrs...)
		}
		return list, n, err
	}, func(c customers.Customer) string { return c.ID })
}

func (h *customerHandlers) agreements(w http.ResponseWriter, r *http.Request) error {
	list := h.svc.Agreements()
	writeJSON(w, http.StatusOK, page.List[customers.Agreement]{Data: list, TotalCount: len(list)})
	return nil
}

func (h *customerHandlers) endUserTerms(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, h.svc.EndUserTerms())
	return nil
}

func (h *customerHandlers) sendCode(channel string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var none struct{}
		if err := decode(r, &none, nil); err != nil {
			return err
		}
		err := h.svc.SendCode(r.Context(), principal(r).Tenant, r.PathValue("customerId"), channel)
		var limited *customers.RateLimitedError
		if errors.As(err, &limited) {
			w.Header().Set("Retry-After", strconv.Itoa(int((limited.RetryAfter+999_999_999)/1_000_000_000)))
		}
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

func (h *customerHandlers) confirmCode(channel string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req customers.ConfirmRequest
		if err := decode(r, &req, func(req customers.ConfirmRequest) error { return req.Validate() }); err != nil {
			return err
		}
		c, err := h.svc.ConfirmCode(r.Context(), principal(r).Tenant, r.PathValue("customerId"), channel, req)
		if err == nil {
			err = h.s.withSca(r.Context(), principal(r).Tenant, &c)
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, c)
		return nil
	}
}

func (h *customerHandlers) submitVerification(w http.ResponseWriter, r *http.Request) error {
	var req customers.VerificationRequest
	if err := decode(r, &req, func(req customers.VerificationRequest) error { return req.Validate() }); err != nil {
		return err
	}
	v, err := h.svc.Submit(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (h *customerHandlers) getVerification(w http.ResponseWriter, r *http.Request) error {
	v, err := h.svc.GetVerification(r.Context(), principal(r).Tenant, r.PathValue("verificationId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (h *customerHandlers) listVerifications(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.VerificationFilter{
		CustomerID: q.Get("customerId"),
		Status:     queryEnum(&f, q, "verificationStatus", customers.VerificationStatuses),
	}
	return writeListPage(w, r, h.s.cursors, &f, "verifications", func(after string, limit int) ([]customers.Verification, int, error) {
		return h.svc.ListVerifications(r.Context(), principal(r).Tenant, filter, after, limit)
	}, func(v customers.Verification) string { return v.ID })
}

func (h *customerHandlers) createOwner(w http.ResponseWriter, r *http.Request) error {
	var req customers.OwnerCreateRequest
	if err := decode(r, &req, func(req customers.OwnerCreateRequest) error { return req.Validate(h.s.db.Now()) }); err != nil {
		return err
	}
	created(r)
	o, err := h.svc.CreateOwner(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, o)
	return nil
}

func (h *customerHandlers) getOwner(w http.ResponseWriter, r *http.Request) error {
	o, err := h.svc.GetOwner(r.Context(), principal(r).Tenant, r.PathValue("beneficialOwnerId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (h *customerHandlers) listOwners(w http.ResponseWriter, r *http.Request) error {
	var f apierr.Fields // no filter of its own to check
	return writeListPage(w, r, h.s.cursors, &f, "beneficial-owners", func(after string, limit int) ([]customers.BeneficialOwner, int, error) {
		return h.svc.ListOwners(r.Context(), principal(r).Tenant, r.URL.Query().Get("customerId"), after, limit)
	}, func(o customers.BeneficialOwner) string { return o.ID })
}

func (h *customerHandlers) updateOwner(w http.ResponseWriter, r *http.Request) error {
	var req customers.OwnerUpdateRequest
	if err := decode(r, &req, func(req customers.OwnerUpdateRequest) error { return req.Validate(h.s.db.Now()) }); err != nil {
		return err
	}
	o, err := h.svc.UpdateOwner(r.Context(), principal(r).Tenant, r.PathValue("beneficialOwnerId"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (h *customerHandlers) deleteOwner(w http.ResponseWriter, r *http.Request) error {
	if err := h.svc.DeleteOwner(r.Context(), principal(r).Tenant, r.PathValue("beneficialOwnerId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *customerHandlers) recordDocument(w http.ResponseWriter, r *http.Request) error {
	var req customers.DocumentRequest
	if err := decode(r, &req, func(req customers.DocumentRequest) error { return req.Validate(h.s.db.Now()) }); err != nil {
		return err
	}
	d, err := h.svc.RecordDocument(r.Context(), principal(r).Tenant, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}
