package carddata

import "testing"

func mustKeys(t *testing.T, hexKey string) KeyPair {
	t.Helper()
	k, err := ParseKeyPair(hexKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Published Visa CVV test vectors (card verification key pair, PAN, YYMM or
// MMYY expiry as the issuer writes it, service code).
func TestCVV_PublishedVectors(t *testing.T) {
	for _, v := range []struct{ cvk, pan, exp, sc, want string }{
		// python psec (pyemv) test suite.
		{"99999999999999998888888888888888", "2222222222222222", "3333", "111", "361"},
		// Worked example with intermediate values: block 1 under A gives
		// 4DC867AA9BCE665B, after 3DES 24E1A05574051BBF, digits 2410557405140115.
		{"D676DCF3AFB7350532EAF00EA253D875", "4123450990122129", "0721", "202", "241"},
	} {
		got, err := CVV(mustKeys(t, v.cvk), v.pan, v.exp, v.sc)
		if err != nil || got != v.want {
			t.Errorf("CVV(%s, %s, %s) = %q, %v; want %s", v.pan, v.exp, v.sc, got, err, v.want)
		}
	}
}

// The intermediate values of the worked example, step by step.
func TestCVV_Steps(t *testing.T) {
	k := mustKeys(t, "D676DCF3AFB7350532EAF00EA253D875")
	b1 := packDigits("4123450990122129")
	x := k.singleA(b1)
	if got := hexOf(x[:]); got != "4DC867AA9BCE665B" {
		t.Fatalf("DES(A, block 1) = %s", got)
	}
	b2 := packDigits("0721202000000000")
	for i := range x {
		x[i] ^= b2[i]
	}
	r := k.ede(x)
	if got := hexOf(r[:]); got != "24E1A05574051BBF" {
		t.Fatalf("3DES = %s", got)
	}
	if got := decimalize(r, 16); got != "2410557405140115" {
		t.Fatalf("decimalized = %s", got)
	}
}

func TestCVV2_ServiceCodeAndExpiry(t *testing.T) {
	k := mustKeys(t, "0123456789ABCDEFFEDCBA9876543210")
	pan := "4000001234567899"
	a, err := CVV2(k, pan, 3, 2029)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := CVV(k, pan, "2903", ServiceCodeCVV2)
	if a != b || len(a) != 3 {
		t.Fatalf("CVV2 %q, CVV with 000 %q", a, b)
	}
	for _, bad := range [][2]int{{0, 2029}, {13, 2029}, {3, 1999}} {
		if _, err := CVV2(k, pan, bad[0], bad[1]); err == nil {
			t.Errorf("expiry %v accepted", bad)
		}
	}
	for _, bad := range []struct{ pan, exp, sc string }{
		{"12345678901", "2903", "000"}, {"41111111111111111111", "2903", "000"}, {"411111111111111A", "2903", "000"},
		{pan, "293", "000"}, {pan, "29A3", "000"}, {pan, "2903", "00"}, {pan, "2903", "0000"},
	} {
		if _, err := CVV(k, bad.pan, bad.exp, bad.sc); err == nil {
			t.Errorf("CVV(%q, %q, %q) accepted", bad.pan, bad.exp, bad.sc)
		}
	}
}

// Published Visa PVV test vectors (python psec test suite, PVK pair
// 0123456789ABCDEF FEDCBA9876543210).
func TestPVV_PublishedVectors(t *testing.T) {
	k := mustKeys(t, "0123456789ABCDEFFEDCBA9876543210")
	for _, v := range []struct {
		pvki           int
		pin, pan, want string
	}{
		{1, "4524", "1122334455667788", "8523"},
		{2, "1912", "1122334455667788", "3244"},
		{1, "0570", "1122334455667718", "3144"},
		{1, "8299", "1122334455667708", "4422"},
	} {
		got, err := PVV(k, v.pan, v.pvki, v.pin)
		if err != nil || got != v.want {
			t.Errorf("PVV(%s, %d, %s) = %q, %v; want %s", v.pan, v.pvki, v.pin, got, err, v.want)
		}
		ok, err := VerifyPVV(k, v.pan, v.pvki, v.pin, v.want)
		if err != nil || !ok {
			t.Errorf("VerifyPVV refused the right PIN %s", v.pin)
		}
		if ok, _ := VerifyPVV(k, v.pan, v.pvki, "0000", v.want); ok && v.pin != "0000" {
			t.Errorf("VerifyPVV accepted a wrong PIN for %s", v.pan)
		}
	}
	for _, bad := range []struct {
		pan  string
		pvki int
		pin  string
	}{{"1122334455667788", 10, "1234"}, {"1122334455667788", -1, "1234"}, {"1122334455667788", 1, "123"},
		{"1122334455667788", 1, "12a4"}, {"11223344556", 1, "1234"}} {
		if _, err := PVV(k, bad.pan, bad.pvki, bad.pin); err == nil {
			t.Errorf("PVV(%+v) accepted", bad)
		}
	}
}

func hexOf(b []byte) string {
	const h = "0123456789ABCDEF"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, h[c>>4], h[c&0xF])
	}
	return string(out)
}
