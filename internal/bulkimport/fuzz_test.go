package bulkimport

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// FuzzCSV runs the CSV bulk parser over arbitrary files: the header check
// fails only with a *HeaderError whose APIError is 400 INVALID_INPUT, and
// every data row of the header's width becomes a create request (cell
// errors carry a field and a constraint), without panicking.
func FuzzCSV(f *testing.F) {
	for _, seed := range []string{
		"customerType,platformCustomerId,fullName,birthDate,nationality\nINDIVIDUAL,a,Ada,1990-01-15,GB\n",
		"\ufeffcustomerType , fullName\nINDIVIDUAL,\"Ada \"\"L\"\"\"\n",
		"customerType,customerType\n", "", "\n", "a,\"b\n", "customerType,fullName\nINDIVIDUAL,caf\xe9\n",
		"customerType,platformCustomerId,fullName,birthDate,nationality\nINDIVIDUAL,,,,\nshort\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, file string) {
		cr := newReader(strings.NewReader(file))
		rec, err := cr.Read()
		if err != nil {
			return // an unreadable header row is refused by Start (fileError)
		}
		h, err := ParseHeader(rec)
		if err != nil {
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("not a HeaderError: %v", err)
			}
			if e, ok := apierr.From(he.APIError()); !ok || e.Status != 400 || e.Code != apierr.CodeInvalidInput {
				t.Fatalf("header error answers %v", he.APIError())
			}
			return
		}
		for {
			rec, err := cr.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil || len(rec) != h.Len() {
				continue // reported per row by the runner
			}
			req, cellErrs := h.Request(rec)
			for _, c := range cellErrs {
				if c.field == "" || c.constraint == "" {
					t.Fatalf("cell error without field or constraint: %+v", c)
				}
			}
			if req.PlatformCustomerID == nil || *req.PlatformCustomerID == "" {
				t.Fatal("a row without platformCustomerId must get a derived one")
			}
		}
	})
}
