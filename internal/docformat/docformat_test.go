package docformat

import (
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	for in, want := range map[string]string{
		"%PDF-1.7\n":                    PDF,
		"\xff\xd8\xff\xe0rest":          JPEG,
		"\x89PNG\r\n\x1a\nrest":         PNG,
		"GIF89a":                        "",
		"hello":                         "",
		"":                              "",
		"\x89PNG\r\n":                   "", // truncated signature
		"report.pdf but text inside it": "",
	} {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestCleanFileName(t *testing.T) {
	for in, want := range map[string]string{
		"scan.pdf":                        "scan.pdf",
		"../../etc/passwd":                "passwd",
		`C:\Users\x\id card.jpg`:          "id card.jpg",
		"bad\x00name\n.png":               "badname.png",
		"":                                "document.png",
		"dir/":                            "document.png",
		strings.Repeat("é", 300) + ".pdf": strings.Repeat("é", 255),
	} {
		if got := CleanFileName(in, PNG, 255); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	if CleanFileName("", PDF, 255) != "document.pdf" || CleanFileName("..", JPEG, 255) != "document.jpg" {
		t.Error("a name-less file is named after its format")
	}
}

func TestHeadLenCoversEveryFormat(t *testing.T) {
	if HeadLen != len(PNGSignature) || HeadLen < len("%PDF-") {
		t.Fatal("HeadLen must cover the longest signature")
	}
}
