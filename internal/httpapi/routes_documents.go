package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/auth"
	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/bulkimport"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/formdata"
	"github.com/paymentsd/paymentsd/internal/kyclink"
)

func init() { routeGroups = append(routeGroups, (*Server).documentRoutes) }

// documentMaxBody is the body limit of the document upload routes: the
// largest file plus room for the other form fields. A file over
// customers.MaxDocumentBytes is 400 INVALID_INPUT on `file` whether or not
// it makes the body longer than this (documentOversized).
const documentMaxBody = customers.MaxDocumentBytes + 1<<20

// documentOversized explains a document upload longer than documentMaxBody
// from its first documentMaxBody bytes.
func documentOversized(r *http.Request, prefix []byte) error {
	return formdata.ExplainOversized(r.Header.Get("Content-Type"), prefix, formdata.Limits{FileField: "file",
		MinFile: 1, MaxFile: customers.MaxDocumentBytes, MaxText: maxFormField, MaxBody: documentMaxBody})
}

// documentRoutes: KYC/KYB verification documents of customers and
// beneficial owners (R-ERR-18; paths as the reference names them).
func (s *Server) documentRoutes() {
	h := &documentHandlers{s: s}
	s.handle(route{pattern: "POST /documents", need: auth.NeedWrite, idempotent: true, maxBody: documentMaxBody,
		oversized: documentOversized, h: h.upload})
	s.handle(route{pattern: "GET /documents", need: auth.NeedView, query: listQuery("documentHolder"), h: h.list})
	s.handle(route{pattern: "GET /documents/{documentId}", need: auth.NeedView, h: h.get})
	s.handle(route{pattern: "PUT /documents/{documentId}", need: auth.NeedWrite, maxBody: documentMaxBody,
		oversized: documentOversized, h: h.replace})
	s.handle(route{pattern: "DELETE /documents/{documentId}", need: auth.NeedWrite, h: h.delete})
}

// DefaultBlobDir is where files go when Options.BlobDir is empty.
const DefaultBlobDir = "./data/blobs"

// fileParts are the services behind uploads: the blob store, documents,
// KYC links and bulk imports. They are made on first use, so a server that
// never receives a file never creates the blob directory.
type fileParts struct {
	blobs  blobstore.Store
	docs   *customers.Documents
	links  *kyclink.Service
	bulk   *bulkimport.Service
	runner *bulkimport.Runner
}

type filePartsEntry struct {
	once  sync.Once
	parts *fileParts
	err   error
}

var filePartsOf sync.Map // *Server → *filePartsEntry

func (s *Server) fileParts() (*fileParts, error) {
	v, _ := filePartsOf.LoadOrStore(s, &filePartsEntry{})
	e := v.(*filePartsEntry)
	e.once.Do(func() {
		dir := s.opts.BlobDir
		if dir == "" {
			dir = DefaultBlobDir
		}
		fs, err := blobstore.NewFS(dir)
		if err != nil {
			e.err = err
			return
		}
		svc := s.customerService()
		docs := &customers.Documents{Svc: svc, Blobs: fs}
		e.parts = &fileParts{
			blobs:  fs,
			docs:   docs,
			links:  &kyclink.Service{DB: s.db, Customers: svc, Documents: docs},
			bulk:   &bulkimport.Service{DB: s.db, Blobs: fs, Log: s.log},
			runner: bulkimport.NewRunner(s.db, svc, fs, s.log),
		}
	})
	return e.parts, e.err
}

type documentHandlers struct{ s *Server }

// Multipart text fields of the document routes.
var (
	uploadFields  = []string{"documentHolder", "documentType", "country", "side", "issuedOn", "documentNumber", "issuingAuthority"}
	replaceFields = []string{"documentType", "country", "side", "issuedOn", "documentNumber", "issuingAuthority"}
)

// maxFormField bounds each text field of a multipart form.
const maxFormField = 4096

// multipartForm walks a multipart/form-data body. Text fields named in
// allowed land in the returned map (each at most once); the part named
// fileField goes to onFile (at most once). Every other problem is a field
// error in fields; err is set when the body is not multipart at all (415
// UNSUPPORTED_MEDIA_TYPE) or its framing is broken (formdata: 400
// INVALID_INPUT, or the body's *http.MaxBytesError).
func multipartForm(r *http.Request, body io.Reader, allowed []string, fileField string,
	onFile func(p *formdata.Part) error) (values map[string]string, fields *apierr.Fields, err error) {
	fields = &apierr.Fields{}
	values = map[string]string{}
	boundary, err := formdata.MediaType(r.Header.Get("Content-Type"), fileField)
	if err != nil {
		return nil, nil, err
	}
	mr := formdata.NewReader(body, boundary)
	files := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // formdata returns a bare io.EOF at the end
			break
		}
		if err != nil {
			return nil, nil, err
		}
		name := p.FormName()
		switch {
		case name == fileField:
			files++
			if files > 1 {
				fields.Add(fileField, apierr.MaxItems, "must be sent once; send one file per request")
				break
			}
			if err := onFile(p); err != nil {
				if fe := apierr.FieldList(err); len(fe) > 0 {
					for _, f := range fe {
						fields.Add(f.Field, f.Constraint, "%s", f.Message)
					}
				} else {
					p.Close()
					return nil, nil, err
				}
			}
		case slices.Contains(allowed, name):
			if _, dup := values[name]; dup {
				fields.Add(name, apierr.MaxItems, "must be sent once")
				break
			}
			v, err := p.Text(maxFormField)
			if fe := apierr.FieldList(err); len(fe) > 0 && fe[0].Field == name {
				fields.Add(name, fe[0].Constraint, "%s", fe[0].Message)
				break
			}
			if err != nil {
				return nil, nil, err
			}
			values[name] = v
		case name == "":
			fields.Add("(part)", apierr.AdditionalProperties, "every part needs a name in its Content-Disposition")
		default:
			fields.Add(name, apierr.AdditionalProperties, "is not a field of this request; accepted: %s, %s", fileField, strings.Join(allowed, ", "))
		}
		p.Close()
	}
	if files == 0 {
		fields.Add(fileField, apierr.Required, "is required: the document as a PDF, JPEG or PNG file")
	}
	return values, fields, nil
}

// opt returns a form value as an optional field: absent or blank is nil.
func opt(values map[string]string, name string) *string {
	v, ok := values[name]
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	v = strings.TrimSpace(v)
	return &v
}

// readDocumentForm stores the form's file and returns its text fields. On
// any problem the stored file is discarded and the error lists every field.
func (h *documentHandlers) readDocumentForm(r *http.Request, parts *fileParts, allowed []string,
	validate func(values map[string]string) error) (map[string]string, customers.StoredFile, error) {
	var stored customers.StoredFile
	values, fields, err := multipartForm(r, bytes.NewReader(bodyOf(r)), allowed, "file", func(p *formdata.Part) error {
		f, err := parts.docs.StoreFile(r.Context(), p, p.FileName())
		if err == nil {
			stored = f
		}
		return err
	})
	if err == nil {
		err = apierr.MergeFields(fields.Err(), validate(values))
	}
	if err != nil {
		parts.docs.Discard(r.Context(), stored)
		return nil, customers.StoredFile{}, err
	}
	return values, stored, nil
}

func uploadRequest(values map[string]string) customers.UploadRequest {
	return customers.UploadRequest{
		DocumentRequest: customers.DocumentRequest{DocumentHolder: opt(values, "documentHolder"),
			DocumentType: opt(values, "documentType"), Country: opt(values, "country"), Side: opt(values, "side"),
			IssuedOn: opt(values, "issuedOn")},
		DocumentNumber: opt(values, "documentNumber"), IssuingAuthority: opt(values, "issuingAuthority"),
	}
}

func replaceRequest(values map[string]string) customers.ReplaceRequest {
	return customers.ReplaceRequest{DocumentType: opt(values, "documentType"), Country: opt(values, "country"),
		Side: opt(values, "side"), IssuedOn: opt(values, "issuedOn"), DocumentNumber: opt(values, "documentNumber"),
		IssuingAuthority: opt(values, "issuingAuthority")}
}

func (h *documentHandlers) upload(w http.ResponseWriter, r *http.Request) error {
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	now := h.s.db.Now()
	values, stored, err := h.readDocumentForm(r, parts, uploadFields, func(v map[string]string) error {
		return uploadRequest(v).Validate(now)
	})
	if err != nil {
		return err
	}
	d, err := parts.docs.Upload(r.Context(), principal(r).Tenant, uploadRequest(values), stored)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

func (h *documentHandlers) replace(w http.ResponseWriter, r *http.Request) error {
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	now := h.s.db.Now()
	values, stored, err := h.readDocumentForm(r, parts, replaceFields, func(v map[string]string) error {
		return replaceRequest(v).Validate(now)
	})
	if err != nil {
		return err
	}
	d, err := parts.docs.Replace(r.Context(), principal(r).Tenant, r.PathValue("documentId"), replaceRequest(values), stored)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (h *documentHandlers) get(w http.ResponseWriter, r *http.Request) error {
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	d, err := parts.docs.Get(r.Context(), principal(r).Tenant, r.PathValue("documentId"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (h *documentHandlers) list(w http.ResponseWriter, r *http.Request) error {
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	holder := q.Get("documentHolder")
	var f apierr.Fields
	if len(holder) > customers.MaxTextLength {
		f.Add("documentHolder", apierr.MaxLength, "must be at most %d characters", customers.MaxTextLength)
	}
	return writeListPage(w, r, h.s.cursors, &f, "documents", func(after string, limit int) ([]customers.KYCDocument, int, error) {
		return parts.docs.List(r.Context(), principal(r).Tenant, holder, after, limit)
	}, func(d customers.KYCDocument) string { return d.ID })
}

func (h *documentHandlers) delete(w http.ResponseWriter, r *http.Request) error {
	parts, err := h.s.fileParts()
	if err != nil {
		return err
	}
	if err := parts.docs.Delete(r.Context(), principal(r).Tenant, r.PathValue("documentId")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
