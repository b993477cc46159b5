package paymentdocs

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/docformat"
	"github.com/paymentsd/paymentsd/internal/formdata"
)

// File limits (R-PDOC-03, R-PDOC-04).
const (
	MinFileBytes = 1
	MaxFileBytes = 8_000_000
)

// MaxUploadBody is the request-body limit of POST /payment-documents: the
// largest file plus room for the multipart envelope and the text fields. A
// file over MaxFileBytes is 400 INVALID_INPUT whatever its size (R-PDOC-04):
// inside the limit ParseUpload says so, beyond it ParseOversizedUpload, from
// the body's first MaxUploadBody bytes.
const MaxUploadBody = MaxFileBytes + 64<<10

// Detected content types: the only formats accepted.
const (
	ContentTypePDF  = docformat.PDF
	ContentTypeJPEG = docformat.JPEG
	ContentTypePNG  = docformat.PNG
)

// Form fields.
const (
	fieldFile         = "file"
	fieldDocumentType = "documentType"
	fieldCustomerID   = "customerId"
)

// Bounds on the rest of the form.
const (
	maxTextField   = 1024
	maxParts       = 16
	maxFileNameLen = 255
)

// DetectContentType names the format of a file from its first bytes
// (docformat.Detect).
func DetectContentType(head []byte) string { return docformat.Detect(head) }

// Upload is a parsed, valid POST /payment-documents form.
type Upload struct {
	DocumentType string
	CustomerID   string // "" when the platform is the sender
	FileName     string
	ContentType  string
	Data         []byte
}

// ParseUpload reads a multipart/form-data body: one file in field `file`
// (PDF, JPEG or PNG by content, MinFileBytes to MaxFileBytes), a
// `documentType` from DocumentTypes and an optional `customerId`. Every
// problem is listed in one 400 INVALID_INPUT (R-ERR-02); nothing is stored
// here. contentType is the request's Content-Type header.
func ParseUpload(contentType string, body []byte) (Upload, error) {
	var f apierr.Fields
	boundary, err := formdata.MediaType(contentType, fieldFile)
	if err != nil {
		return Upload{}, err
	}
	var u Upload
	values := map[string]string{}
	files, parts := 0, 0
	mr := formdata.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF { //nolint:errorlint // formdata returns a bare io.EOF at the end
			break
		}
		if err != nil {
			return Upload{}, apierr.MergeFields(err, f.Err())
		}
		parts++
		if parts > maxParts {
			p.Close()
			f.Add("(form)", apierr.MaxItems, "has more than %d parts; send file, documentType and customerId", maxParts)
			return Upload{}, f.Err()
		}
		name := p.FormName()
		switch name {
		case fieldFile:
			files++
			if files > 1 {
				f.Add(fieldFile, apierr.MaxItems, "must be sent once; upload one file per request")
				break
			}
			data, err := io.ReadAll(io.LimitReader(p, MaxFileBytes+1))
			if err != nil {
				return Upload{}, apierr.MergeFields(err, f.Err())
			}
			u.Data, u.FileName = data, p.FileName()
		case fieldDocumentType, fieldCustomerID:
			v, err := p.Text(maxTextField)
			fe := apierr.FieldList(err)
			switch {
			case len(fe) > 0 && fe[0].Field == name:
				f.Add(name, fe[0].Constraint, "%s", fe[0].Message)
			case err != nil:
				return Upload{}, apierr.MergeFields(err, f.Err())
			default:
				if _, dup := values[name]; dup {
					f.Add(name, apierr.MaxItems, "must be sent once")
				}
				values[name] = v
			}
		case "":
			f.Add("(part)", apierr.AdditionalProperties, "every part needs a name in its Content-Disposition")
		default:
			f.Add(name, apierr.AdditionalProperties, "is not a field of this request; send file, documentType and optionally customerId")
		}
		p.Close()
	}

	switch {
	case files == 0:
		f.Add(fieldFile, apierr.Required, "is required: one PDF, JPEG or PNG file of %d to %d bytes", MinFileBytes, MaxFileBytes)
	case files > 1:
	case len(u.Data) < MinFileBytes:
		f.Add(fieldFile, apierr.MinLength, "is empty; upload a PDF, JPEG or PNG file of %d to %d bytes", MinFileBytes, MaxFileBytes)
	case len(u.Data) > MaxFileBytes:
		f.Add(fieldFile, apierr.MaxLength, "must be at most %d bytes", MaxFileBytes)
	default:
		u.ContentType = DetectContentType(u.Data)
		if u.ContentType == "" {
			f.Add(fieldFile, apierr.Format,
				"must be a PDF, JPEG or PNG file; its contents are none of these (the format is read from the contents, not the name)")
		}
	}

	// A documentType that was sent twice or was too long is already reported.
	if !slices.ContainsFunc(apierr.FieldList(f.Err()), func(fe apierr.FieldError) bool { return fe.Field == fieldDocumentType }) {
		u.DocumentType = strings.TrimSpace(values[fieldDocumentType])
		switch {
		case u.DocumentType == "":
			f.Add(fieldDocumentType, apierr.Required, "is required: one of %s", strings.Join(DocumentTypes(), ", "))
		case !slices.Contains(DocumentTypes(), u.DocumentType):
			f.Add(fieldDocumentType, apierr.Enum, "must be one of %s", strings.Join(DocumentTypes(), ", "))
		}
	}
	u.CustomerID = strings.TrimSpace(values[fieldCustomerID])

	if err := f.Err(); err != nil {
		return Upload{}, err
	}
	u.FileName = docformat.CleanFileName(u.FileName, u.ContentType, maxFileNameLen)
	return u, nil
}

// ParseOversizedUpload explains a POST /payment-documents body longer than
// MaxUploadBody, given its first MaxUploadBody bytes: the client learns
// that its file is over MaxFileBytes (400 INVALID_INPUT, R-PDOC-04) or,
// when another part made the body too long, which one. It always returns
// an error.
func ParseOversizedUpload(contentType string, prefix []byte) error {
	return formdata.ExplainOversized(contentType, prefix, formdata.Limits{FileField: fieldFile,
		MinFile: MinFileBytes, MaxFile: MaxFileBytes, MaxText: maxTextField, MaxBody: MaxUploadBody})
}
