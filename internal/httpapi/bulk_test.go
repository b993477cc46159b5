package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// bulkCSV has good rows and one malformed row of each kind. Rows, the
// header being row 1:
//
//	2 good individual          5 missing fullName
//	3 bad birthDate            6 wrong number of values
//	4 unknown customerType     7 good business
//	8 good individual without platformCustomerId (derived)
const bulkCSV = "customerType,platformCustomerId,fullName,birthDate,nationality,email,addressLine1,city,postalCode,country,businessLegalName\n" +
	"INDIVIDUAL,bulk-ada,Ada Lovelace,1990-01-15,GB,ada@example.com,1 Main St,London,N1 9GU,GB,\n" +
	"INDIVIDUAL,bulk-bad-date,Bad Date,1990-13-45,US,,1 Main St,Springfield,62701,US,\n" +
	"ROBOT,bulk-robot,Robo,1990-01-15,US,,1 Main St,Springfield,62701,US,\n" +
	"INDIVIDUAL,bulk-nameless,,1990-01-15,US,,1 Main St,Springfield,62701,US,\n" +
	"INDIVIDUAL,bulk-short,Short Row\n" +
	"BUSINESS,bulk-acme,,,,ops@acme.example,400 Commerce Way,Austin,78701,US,Acme Corp\n" +
	"INDIVIDUAL,,Grace Hopper,1906-12-09,US,grace@example.com,1 Navy Yard,Arlington,22202,US,\n"

func (e *env) bulkUpload(t *testing.T, path, csv string, opts ...reqOpt) resp {
	t.Helper()
	e.driveByHand() // the tests drain imports themselves (bulkDrain)
	return e.sendForm(t, "POST", path, nil, []formFile{{"file", "customers.csv", []byte(csv)}}, opts...)
}

func (e *env) bulkDrain(t *testing.T) {
	t.Helper()
	parts, err := e.srv.fileParts()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parts.runner.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (e *env) bulkJob(t *testing.T, jobID string) map[string]any {
	t.Helper()
	r := e.do("GET", "/customers/bulk/jobs/"+jobID, nil)
	expect(t, r, http.StatusOK, "")
	return r.JSON(t)
}

func (e *env) customerIDs(t *testing.T) []string {
	t.Helper()
	l := e.do("GET", "/customers?limit=100", nil).JSON(t)
	var out []string
	for _, c := range l["data"].([]any) {
		out = append(out, c.(map[string]any)["platformCustomerId"].(string))
	}
	return out
}

func progressOf(j map[string]any) string {
	p := j["progress"].(map[string]any)
	return fmt.Sprintf("total=%v processed=%v successful=%v failed=%v alreadyImported=%v",
		p["total"], p["processed"], p["successful"], p["failed"], p["alreadyImported"])
}

func rowErrors(j map[string]any) []string {
	var out []string
	for _, x := range j["errors"].([]any) {
		m := x.(map[string]any)
		out = append(out, fmt.Sprintf("%v|%v|%v|%v|%v", m["row"], m["correlationId"], m["field"], m["code"], m["constraint"]))
	}
	return out
}

// R-CUST-24, R-CUST-25: the upload answers 202 with a job; the job imports
// the good rows, records each bad row's errors exactly, and reports its
// completion. Re-running the file creates nothing new.
func TestBulk_ImportRowsAndErrors_R_CUST_24_25(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		r := e.bulkUpload(t, "/customers/bulk/csv", bulkCSV)
		expect(t, r, http.StatusAccepted, "")
		acc := r.JSON(t)
		jobID := acc["id"].(string)
		if acc["jobId"] != jobID || acc["status"] != "PENDING" || !strings.HasPrefix(jobID, "Job:") || acc["fileName"] != "customers.csv" {
			t.Fatalf("%v", acc)
		}
		if j := e.bulkJob(t, jobID); j["status"] != "PENDING" || j["completedAt"] != nil {
			t.Fatalf("%v", j)
		}
		e.bulkDrain(t)
		j := e.bulkJob(t, jobID)
		if j["status"] != "COMPLETED" || j["completedAt"] == nil || j["startedAt"] == nil {
			t.Fatalf("%v", j)
		}
		if got := progressOf(j); got != "total=7 processed=7 successful=3 failed=4 alreadyImported=0" {
			t.Fatalf("progress: %s", got)
		}
		want := []string{
			"3|bulk-bad-date|birthDate|INVALID_INPUT|format",
			"4|bulk-robot|customerType|INVALID_INPUT|enum",
			"5|bulk-nameless|fullName|INVALID_INPUT|required",
			"6|row 6|<nil>|INVALID_INPUT|columns",
		}
		if got := rowErrors(j); strings.Join(got, "\n") != strings.Join(want, "\n") || j["errorCount"] != float64(4) {
			t.Fatalf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		ids := e.customerIDs(t)
		if len(ids) != 3 || ids[0] != "bulk-ada" || ids[1] != "bulk-acme" || !strings.HasPrefix(ids[2], "bulk-") {
			t.Fatalf("customers: %v", ids)
		}
		grace := e.do("GET", "/customers?platformCustomerId="+ids[2], nil).JSON(t)["data"].([]any)[0].(map[string]any)
		if grace["fullName"] != "Grace Hopper" || grace["address"].(map[string]any)["postalCode"] != "22202" {
			t.Fatalf("%v", grace)
		}

		// The same file again, through the short path (R-CUST-24): nothing new.
		r = e.bulkUpload(t, "/customer", bulkCSV)
		expect(t, r, http.StatusAccepted, "")
		again := r.JSON(t)["id"].(string)
		e.bulkDrain(t)
		j = e.bulkJob(t, again)
		if got := progressOf(j); j["status"] != "COMPLETED" || got != "total=7 processed=7 successful=3 failed=4 alreadyImported=3" {
			t.Fatalf("re-run: %s %v", got, j["status"])
		}
		if got := e.customerIDs(t); len(got) != 3 {
			t.Fatalf("re-run created customers: %v", got)
		}

		// A row reusing a platformCustomerId with other data is a conflict.
		r = e.bulkUpload(t, "/customers/bulk/csv", "customerType,platformCustomerId,fullName\nINDIVIDUAL,bulk-ada,Someone Else\n")
		e.bulkDrain(t)
		j = e.bulkJob(t, r.JSON(t)["id"].(string))
		if got := rowErrors(j); len(got) != 1 || got[0] != "2|bulk-ada|platformCustomerId|CONFLICT|<nil>" {
			t.Fatalf("%v", got)
		}
	})
}

// The header row is checked at upload: every missing, unknown or repeated
// column is named, and nothing is stored.
func TestBulk_HeaderCheckedAtUpload(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		r := e.bulkUpload(t, "/customers/bulk/csv", "fullName,favouriteColour,city,address.city\nAda,blue,London,London\n")
		expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
		d := r.JSON(t)["details"].(map[string]any)
		if fmt.Sprint(d["missingColumns"]) != "[customerType]" || fmt.Sprint(d["unknownColumns"]) != "[favouriteColour]" ||
			fmt.Sprint(d["duplicateColumns"]) != "[address.city]" || len(d["errors"].([]any)) != 3 {
			t.Fatalf("%v", d)
		}
		for _, body := range []string{"", "\n\n", "\ufeff"} {
			expect(t, e.bulkUpload(t, "/customers/bulk/csv", body), http.StatusBadRequest, "INVALID_INPUT")
		}
		expect(t, e.do("POST", "/customers/bulk/csv", "customerType\nINDIVIDUAL\n", withHeader("Content-Type", "text/csv")),
			http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		r = e.sendForm(t, "POST", "/customers/bulk/csv", []string{"note", "x"}, []formFile{{"file", "a.csv", []byte("customerType\n")}})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["note"] != "additionalProperties" {
			t.Fatalf("%s", r.Body)
		}
		r = e.sendForm(t, "POST", "/customers/bulk/csv", nil, []formFile{{"file", "a.csv", []byte("customerType\n")}, {"file", "b.csv", []byte("customerType\n")}})
		if expect(t, r, http.StatusBadRequest, "INVALID_INPUT"); fieldErrors(t, r)["file"] != "maxItems" {
			t.Fatalf("%s", r.Body)
		}
		if n := blobFiles(t, dir); n != 0 {
			t.Fatalf("%d files stored by refused uploads", n)
		}
		// A byte-order mark and spaces around names are fine.
		expect(t, e.bulkUpload(t, "/customers/bulk/csv", "\ufeff customerType , fullName\nINDIVIDUAL,Ada\n"), http.StatusAccepted, "")
	})
}

// R-CUST-25: an unknown job, or one of another environment, is 404
// BULK_UPLOAD_JOB_NOT_FOUND.
func TestBulk_JobNotFound_R_CUST_25(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, _ string) {
		expect(t, e.do("GET", "/customers/bulk/jobs/Job:0195a2f5-b3e7-7d02-8000-000000000009", nil), http.StatusNotFound, "BULK_UPLOAD_JOB_NOT_FOUND")
		jobID := e.bulkUpload(t, "/customers/bulk/csv", "customerType,fullName\nINDIVIDUAL,Ada\n").JSON(t)["id"].(string)
		expect(t, e.do("GET", "/customers/bulk/jobs/"+jobID, nil, withCreds(e.production)), http.StatusNotFound, "BULK_UPLOAD_JOB_NOT_FOUND")
		e.bulkDrain(t)
		// The production environment got no customer.
		if l := e.do("GET", "/customers", nil, withCreds(e.production)).JSON(t); l["totalCount"] != float64(0) {
			t.Fatalf("%v", l)
		}
	})
}

// The upload honours Idempotency-Key: a retry returns the same job.
func TestBulk_UploadIdempotent_R_IDEM_02(t *testing.T) {
	fileEnv(t, func(t *testing.T, e *env, dir string) {
		key := withHeader("Idempotency-Key", "bulk-key-1")
		body, ct := multipartBody(t, nil, formFile{"file", "c.csv", []byte("customerType,fullName\nINDIVIDUAL,Ada\n")})
		r1 := e.do("POST", "/customers/bulk/csv", body, withHeader("Content-Type", ct), key)
		r2 := e.do("POST", "/customers/bulk/csv", body, withHeader("Content-Type", ct), key)
		expect(t, r1, http.StatusAccepted, "")
		expect(t, r2, http.StatusAccepted, "")
		if r1.JSON(t)["id"] != r2.JSON(t)["id"] || r2.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s\n%s", r1.Body, r2.Body)
		}
		if n := blobFiles(t, dir); n != 1 {
			t.Fatalf("%d files for one job", n)
		}
	})
}
