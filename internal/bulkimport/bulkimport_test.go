package bulkimport

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paymentsd/paymentsd/internal/blobstore"
	"github.com/paymentsd/paymentsd/internal/customers"
	"github.com/paymentsd/paymentsd/internal/platforms"
	"github.com/paymentsd/paymentsd/internal/store"
	"github.com/paymentsd/paymentsd/internal/store/storetest"
)

type fixture struct {
	db     *store.DB
	tenant store.Tenant
	svc    *customers.Service
	blobs  *blobstore.FS
	bulk   *Service
}

func newFixture(t testing.TB, db *store.DB) fixture {
	t.Helper()
	p, _, err := platforms.Bootstrap(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := blobstore.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return fixture{db: db, tenant: store.Tenant{PlatformID: p.ID, Env: store.EnvSandbox}, svc: customers.New(db, nil),
		blobs: fs, bulk: &Service{DB: db, Blobs: fs}}
}

// csvRows makes a file of n rows; every badEvery-th row has an invalid
// birth date (0: none).
func csvRows(n, badEvery int) string {
	var b strings.Builder
	b.WriteString("customerType,platformCustomerId,fullName,birthDate,email,address.line1,address.city,address.postalCode,address.country\n")
	for i := 1; i <= n; i++ {
		date := "1990-01-15"
		if badEvery > 0 && i%badEvery == 0 {
			date = "15/01/1990"
		}
		fmt.Fprintf(&b, "INDIVIDUAL,cust-%05d,Person Number %d,%s,p%d@example.com,%d Main St,Springfield,62701,US\n", i, i, date, i, i)
	}
	return b.String()
}

func (f fixture) start(t testing.TB, csv string) string {
	t.Helper()
	a, err := f.bulk.Start(context.Background(), f.tenant, strings.NewReader(csv), "c.csv")
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func (f fixture) job(t testing.TB, id string) Job {
	t.Helper()
	j, err := f.bulk.Get(context.Background(), f.tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (f fixture) customerCount(t testing.TB) int {
	t.Helper()
	_, n, err := f.svc.List(context.Background(), f.tenant, store.CustomerFilter{}, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// crashing creates customers until it has made `after`, then cancels the
// run: the process "dies" between a customer's commit and the job's next
// progress commit.
type crashing struct {
	*customers.Service
	after  int64
	made   atomic.Int64
	cancel context.CancelFunc
}

func (c *crashing) Create(ctx context.Context, t store.Tenant, req customers.CreateRequest) (customers.Customer, error) {
	if c.made.Load() >= c.after {
		c.cancel()
		return customers.Customer{}, context.Canceled
	}
	out, err := c.Service.Create(ctx, t, req)
	if err == nil {
		c.made.Add(1)
	}
	return out, err
}

// A job left PROCESSING by a dead runner resumes from its last committed
// row once the lease ends: every good row is imported exactly once, every
// bad row reported exactly once.
func TestRunner_ResumesAfterCrash(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		jobID := f.start(t, csvRows(500, 7)) // rows 7, 14, … 497 are bad: 71 of them
		ctx, cancel := context.WithCancel(context.Background())
		dead := &Runner{DB: db, Customers: &crashing{Service: f.svc, after: 130, cancel: cancel}, Blobs: f.blobs,
			Owner: "dead", BatchRows: 50, BatchInterval: time.Hour}
		if _, err := dead.Drain(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("the crashed run: %v", err)
		}
		j := f.job(t, jobID)
		if j.Status != store.BulkProcessing || j.Progress.Processed == 0 || j.Progress.Processed >= 500 || j.Progress.Processed%50 != 0 {
			t.Fatalf("after the crash: %+v", j)
		}
		made := f.customerCount(t)
		if made <= j.Progress.Successful {
			t.Fatalf("the crash should fall between a customer and its progress commit: %d customers, %d committed", made, j.Progress.Successful)
		}
		// Another runner cannot take the job while the lease holds…
		next := &Runner{DB: db, Customers: f.svc, Blobs: f.blobs, Owner: "next", BatchRows: 50}
		if n, err := next.Drain(context.Background()); err != nil || n != 0 {
			t.Fatalf("took a leased job: %d %v", n, err)
		}
		// …and resumes it once the lease has ended.
		db.SetClock(func() time.Time { return time.Now().Add(2 * time.Minute) })
		defer db.SetClock(time.Now)
		if n, err := next.Drain(context.Background()); err != nil || n != 1 {
			t.Fatalf("resume: %d %v", n, err)
		}
		j = f.job(t, jobID)
		if j.Status != store.BulkCompleted || j.Progress.Total != 500 || j.Progress.Processed != 500 ||
			j.Progress.Successful != 429 || j.Progress.Failed != 71 || j.ErrorCount != 71 {
			t.Fatalf("after resume: %+v", j.Progress)
		}
		if j.Progress.AlreadyImported == 0 {
			t.Fatal("the rows created before the crash but after the last commit are found, not created again")
		}
		if n := f.customerCount(t); n != 429 {
			t.Fatalf("%d customers, want 429", n)
		}
		seen := map[int]bool{}
		all, err := db.Read().BulkImportErrors(context.Background(), jobID, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			if seen[e.Row] || (e.Row-1)%7 != 0 || e.Field != "birthDate" {
				t.Fatalf("error %+v (duplicate or wrong row)", e)
			}
			seen[e.Row] = true
		}
		if len(seen) != 71 {
			t.Fatalf("%d rows with errors", len(seen))
		}
	})
}

// Two runners on one job: it is processed once.
func TestRunner_ConcurrentRunners(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		ids := []string{f.start(t, csvRows(150, 0)), f.start(t, csvRows(150, 0))}
		var wg sync.WaitGroup
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &Runner{DB: db, Customers: f.svc, Blobs: f.blobs, Owner: fmt.Sprint("r", i), BatchRows: 20}
				if _, err := r.Drain(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if j := f.job(t, id); j.Status != store.BulkCompleted || j.Progress.Successful != 150 {
				t.Fatalf("%+v", j)
			}
		}
		if n := f.customerCount(t); n != 150 {
			t.Fatalf("%d customers", n)
		}
	})
}

// A job whose file vanished is retried, then fails with a reason instead of
// retrying forever.
func TestRunner_MissingFileFails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		f := newFixture(t, db)
		id := f.start(t, csvRows(3, 0))
		j, err := db.Read().BulkImportJobByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.blobs.Delete(context.Background(), j.BlobKey); err != nil {
			t.Fatal(err)
		}
		r := &Runner{DB: db, Customers: f.svc, Blobs: f.blobs, MaxAttempts: 2, RetryDelay: time.Minute}
		if _, err := r.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := f.job(t, id); got.Status != store.BulkProcessing {
			t.Fatalf("the first miss is retried: %+v", got)
		}
		db.SetClock(func() time.Time { return time.Now().Add(2 * time.Minute) })
		defer db.SetClock(time.Now)
		if _, err := r.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := f.job(t, id); got.Status != store.BulkFailed || got.FailureReason == "" || got.CompletedAt == nil {
			t.Fatalf("%+v", got)
		}
	})
}

// 10,000 rows import with bounded memory: the test samples the live heap
// while the import runs and asserts a generous bound (no timing asserted).
// It takes about 10 s (one transaction per customer on SQLite with full
// fsync), so -short skips it, and so does -race, which makes it six times
// slower without checking anything more (the importer is one goroutine):
//
//	go test -run TestImport_10000Rows ./internal/bulkimport/
func TestImport_10000Rows_BoundedMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("imports 10,000 rows (about 10 s); skipped with -short and -race")
	}
	db := storetest.OpenSQLite(t)
	f := newFixture(t, db)
	csv := csvRows(10_000, 1000)
	id := f.start(t, csv)
	csv = ""
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	began := time.Now()
	if _, err := NewRunner(db, f.svc, f.blobs, nil).Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(stop)
	<-done
	j := f.job(t, id)
	if j.Status != store.BulkCompleted || j.Progress.Successful != 9_990 || j.Progress.Failed != 10 {
		t.Fatalf("%+v", j.Progress)
	}
	t.Logf("10,000 rows in %v; peak heap %.1f MB", time.Since(began).Round(time.Millisecond), float64(peak.Load())/1e6)
	if peak.Load() > 100<<20 {
		t.Fatalf("peak heap %d bytes, want under 100 MiB", peak.Load())
	}
}

// BenchmarkImport measures rows per second of the runner on SQLite:
// go test -run XXX -bench Import ./internal/bulkimport/
func BenchmarkImport(b *testing.B) {
	db := storetest.OpenSQLite(b)
	f := newFixture(b, db)
	const rows = 1000
	for i := 0; b.Loop(); i++ {
		csv := strings.ReplaceAll(csvRows(rows, 0), "cust-", fmt.Sprintf("b%d-", i))
		f.start(b, csv)
		if _, err := NewRunner(db, f.svc, f.blobs, nil).Drain(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func TestParseHeader(t *testing.T) {
	h, err := ParseHeader([]string{"\ufeffcustomerType", " addressLine1 ", "businessInfo.taxId", "currencies"})
	if err != nil || h.Len() != 4 || h.Written("address.line1") != "addressLine1" || h.Written("fullName") != "fullName" {
		t.Fatalf("%v %+v", err, h)
	}
	_, err = ParseHeader([]string{"fullName", "city", "address.city", "shoeSize", "shoeSize"})
	var he *HeaderError
	if !errors.As(err, &he) || fmt.Sprint(he.Missing, he.Unknown, he.Duplicate) != "[customerType] [shoeSize shoeSize] [address.city]" {
		t.Fatalf("%v", err)
	}
	if _, err := ParseHeader([]string{""}); !errors.As(err, &he) || !he.Empty {
		t.Fatalf("%v", err)
	}
}

func TestRequest_DerivedIDIsStable(t *testing.T) {
	h1, _ := ParseHeader([]string{"customerType", "fullName", "currencies"})
	h2, _ := ParseHeader([]string{"fullName", "currencies", "customerType"})
	r1, _ := h1.Request([]string{"INDIVIDUAL", "Ada", "USD; EUR"})
	r2, _ := h2.Request([]string{" Ada ", "USD; EUR", "INDIVIDUAL"})
	r3, _ := h1.Request([]string{"INDIVIDUAL", "Ada L", "USD; EUR"})
	if *r1.PlatformCustomerID != *r2.PlatformCustomerID || *r1.PlatformCustomerID == *r3.PlatformCustomerID ||
		!strings.HasPrefix(*r1.PlatformCustomerID, "bulk-") {
		t.Fatalf("%s %s %s", *r1.PlatformCustomerID, *r2.PlatformCustomerID, *r3.PlatformCustomerID)
	}
	if strings.Join(r1.Currencies, ",") != "USD,EUR" || r1.Address != nil {
		t.Fatalf("%+v", r1)
	}
	// Matches compares only what the row sets.
	c := customers.Customer{CustomerType: "INDIVIDUAL", PlatformCustomerID: *r1.PlatformCustomerID,
		Profile: customers.Profile{FullName: r1.FullName, Currencies: []string{"USD", "EUR"}, Email: new(string)}}
	if !h1.Matches(r1, c) || h1.Matches(r3, c) {
		t.Fatal("Matches")
	}
	_, errs := h1.Request([]string{"INDIVIDUAL", "A\xffda", ""})
	if len(errs) != 1 || errs[0].field != "fullName" {
		t.Fatalf("%+v", errs)
	}
}
