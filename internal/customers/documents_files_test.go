package customers

import (
	"bytes"
	"context"
	"testing"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/blobstore"
)

func TestDetectContentType(t *testing.T) {
	for in, want := range map[string]string{
		"%PDF-1.7\n":               ContentTypePDF,
		"\xff\xd8\xff\xdb":         ContentTypeJPEG,
		"\x89PNG\r\n\x1a\n\x00":    ContentTypePNG,
		"\x89PNG\r\n":              "", // a truncated signature
		"GIF89a":                   "",
		"  %PDF-1.7":               "", // the signature must come first
		"<html><body>%PDF-</body>": "",
		"":                         "",
	} {
		if got := DetectContentType([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// StoreFile refuses by content and size, and stores nothing when it does.
func TestStoreFile_Limits(t *testing.T) {
	fs, err := blobstore.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d := &Documents{Svc: &Service{Log: New(nil, nil).Log}, Blobs: fs}
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, MaxDocumentBytes-8)...)
	f, err := d.StoreFile(context.Background(), bytes.NewReader(png), "max.png")
	if err != nil || f.SizeBytes != MaxDocumentBytes || f.ContentType != ContentTypePNG || f.FileName != "max.png" {
		t.Fatalf("%+v %v", f, err)
	}
	d.Discard(context.Background(), f)
	for name, data := range map[string][]byte{
		"maxLength": append(png, 0),
		"minLength": nil,
		"format":    []byte("hello"),
	} {
		_, err := d.StoreFile(context.Background(), bytes.NewReader(data), "x")
		l := apierr.FieldList(err)
		if len(l) != 1 || l[0].Field != "file" || l[0].Constraint != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := fs.Get(context.Background(), f.Key); err == nil {
		t.Fatal("a discarded file is still there")
	}
}
