package externalaccounts

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/decred/dcrd/dcrec/secp256k1/v4"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/walletsig"
)

var testNow = time.Date(2025, 10, 13, 12, 0, 0, 0, time.UTC)

func sp(s string) *string { return &s }

// goodInfo is a valid accountInfo of every type, with its currency.
func goodInfo(t testing.TB) map[string]struct {
	currency string
	info     AccountInfo
} {
	key, _ := secp256k1.GeneratePrivateKey()
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	ind := func(extra ...string) *Beneficiary {
		b := &Beneficiary{BeneficiaryType: sp(Individual), FullName: sp("Jane Doe")}
		for _, e := range extra {
			switch e {
			case "countryOfResidence":
				b.CountryOfResidence = sp("DE")
			case "address":
				b.Address = &Address{Line1: sp("1 Main St"), PostalCode: sp("12345"), Country: sp("AE")}
			case "phoneNumber":
				b.PhoneNumber = sp("+50212345678")
			}
		}
		return b
	}
	type entry = struct {
		currency string
		info     AccountInfo
	}
	evm := "0x52908400098527886E0F7030069857D2E4169EE7"
	out := map[string]entry{
		"USD_ACCOUNT": {"USD", AccountInfo{RoutingNumber: sp("021000021"), AccountNumber: sp("12345678"), BankAccountType: sp("CHECKING"),
			BankName: sp("Chase"), Beneficiary: ind()}},
		"AED_ACCOUNT":     {"AED", AccountInfo{IBAN: sp("AE070331234567890123456"), Beneficiary: ind("address")}},
		"BDT_ACCOUNT":     {"BDT", AccountInfo{BankName: sp("Sonali Bank"), AccountNumber: sp("1234567890"), Beneficiary: ind()}},
		"BRL_ACCOUNT":     {"BRL", AccountInfo{PixKey: sp("52998224725"), PixKeyType: sp("CPF"), TaxID: sp("52998224725"), Beneficiary: ind()}},
		"BWP_ACCOUNT":     {"BWP", AccountInfo{PhoneNumber: sp("+26771234567"), Provider: sp("Orange"), Beneficiary: ind()}},
		"CAD_ACCOUNT":     {"CAD", AccountInfo{BankCode: sp("001"), BranchCode: sp("00012"), AccountNumber: sp("1234567"), Beneficiary: ind()}},
		"CNY_ACCOUNT":     {"CNY", AccountInfo{BankName: sp("Bank of China"), AccountNumber: sp("6222020200112233"), Beneficiary: ind()}},
		"COP_ACCOUNT":     {"COP", AccountInfo{BankName: sp("Bancolombia"), AccountNumber: sp("12345678901"), Beneficiary: ind()}},
		"DKK_ACCOUNT":     {"DKK", AccountInfo{IBAN: sp("DK5000400440116243"), Beneficiary: ind()}},
		"EGP_ACCOUNT":     {"EGP", AccountInfo{BankName: sp("NBE"), IBAN: sp("EG380019000500000000263180002"), Beneficiary: ind()}},
		"EUR_ACCOUNT":     {"EUR", AccountInfo{IBAN: sp("DE89370400440532013000"), SwiftCode: sp("DEUTDEFF"), Beneficiary: ind("countryOfResidence")}},
		"GBP_ACCOUNT":     {"GBP", AccountInfo{SortCode: sp("123456"), AccountNumber: sp("12345678"), Beneficiary: ind()}},
		"GHS_ACCOUNT":     {"GHS", AccountInfo{BankName: sp("GCB"), PhoneNumber: sp("+233201234567"), Beneficiary: ind()}},
		"GTQ_ACCOUNT":     {"GTQ", AccountInfo{AccountNumber: sp("1234567"), BankAccountType: sp("SAVINGS"), BankName: sp("Banrural"), Beneficiary: ind("countryOfResidence", "phoneNumber")}},
		"HKD_ACCOUNT":     {"HKD", AccountInfo{BankName: sp("HSBC"), AccountNumber: sp("123456789012"), SwiftCode: sp("HSBCHKHHHKH"), Beneficiary: ind()}},
		"HTG_ACCOUNT":     {"HTG", AccountInfo{PhoneNumber: sp("+50934567890"), Provider: sp("MonCash"), Beneficiary: ind()}},
		"IDR_ACCOUNT":     {"IDR", AccountInfo{BankName: sp("BCA"), AccountNumber: sp("1234567890"), SwiftCode: sp("CENAIDJA"), PhoneNumber: sp("+6281234567890"), Beneficiary: ind()}},
		"INR_ACCOUNT":     {"INR", AccountInfo{VPA: sp("user@upi"), Beneficiary: ind()}},
		"JMD_ACCOUNT":     {"JMD", AccountInfo{AccountNumber: sp("123456"), BranchCode: sp("12345"), BankAccountType: sp("CHECKING"), BankName: sp("NCB"), Beneficiary: ind("address", "phoneNumber")}},
		"KES_ACCOUNT":     {"KES", AccountInfo{PhoneNumber: sp("+254712345678"), Provider: sp("M-PESA"), Beneficiary: ind()}},
		"MWK_ACCOUNT":     {"MWK", AccountInfo{PhoneNumber: sp("+265991234567"), Provider: sp("Airtel"), Beneficiary: ind()}},
		"MXN_ACCOUNT":     {"MXN", AccountInfo{ClabeNumber: sp("002010077777777771"), Beneficiary: ind()}},
		"MYR_ACCOUNT":     {"MYR", AccountInfo{BankName: sp("Maybank"), AccountNumber: sp("1234567890"), SwiftCode: sp("MBBEMYKL"), Beneficiary: ind()}},
		"NGN_ACCOUNT":     {"NGN", AccountInfo{BankName: sp("GTBank"), AccountNumber: sp("0123456789"), Beneficiary: ind()}},
		"PHP_ACCOUNT":     {"PHP", AccountInfo{BankName: sp("BDO"), AccountNumber: sp("001234567890"), Beneficiary: ind()}},
		"PKR_ACCOUNT":     {"PKR", AccountInfo{BankName: sp("SCB"), IBAN: sp("PK36SCBL0000001123456702"), Beneficiary: ind()}},
		"RWF_ACCOUNT":     {"RWF", AccountInfo{PhoneNumber: sp("+250781234567"), Provider: sp("MTN"), Beneficiary: ind()}},
		"SGD_ACCOUNT":     {"SGD", AccountInfo{AccountNumber: sp("0123456789"), SwiftCode: sp("DBSSSGSG"), Beneficiary: ind()}},
		"SLV_ACCOUNT":     {"USD", AccountInfo{AccountNumber: sp("1234567890"), Beneficiary: ind()}},
		"SWIFT_ACCOUNT":   {"EUR", AccountInfo{Country: sp("DE"), SwiftCode: sp("DEUTDEFF"), BankName: sp("Deutsche Bank"), AccountNumber: sp("1234567890"), Beneficiary: ind()}},
		"THB_ACCOUNT":     {"THB", AccountInfo{BankName: sp("Bangkok Bank"), AccountNumber: sp("1234567890"), SwiftCode: sp("BKKBTHBK"), Beneficiary: ind()}},
		"TZS_ACCOUNT":     {"TZS", AccountInfo{PhoneNumber: sp("+255712345678"), Provider: sp("Vodacom"), Beneficiary: ind()}},
		"UGX_ACCOUNT":     {"UGX", AccountInfo{PhoneNumber: sp("+256712345678"), Provider: sp("MTN"), Beneficiary: ind()}},
		"VND_ACCOUNT":     {"VND", AccountInfo{BankName: sp("Vietcombank"), AccountNumber: sp("1234567890"), SwiftCode: sp("BFTVVNVX"), Beneficiary: ind()}},
		"XAF_ACCOUNT":     {"XAF", AccountInfo{PhoneNumber: sp("+237612345678"), Provider: sp("Orange"), Region: sp("CM"), Beneficiary: ind()}},
		"XOF_ACCOUNT":     {"XOF", AccountInfo{PhoneNumber: sp("+221771234567"), Provider: sp("Wave"), Region: sp("SN"), Beneficiary: ind()}},
		"ZAR_ACCOUNT":     {"ZAR", AccountInfo{BankName: sp("FNB"), AccountNumber: sp("1234567890"), Beneficiary: ind()}},
		"ZMW_ACCOUNT":     {"ZMW", AccountInfo{PhoneNumber: sp("+260971234567"), Provider: sp("Airtel"), Beneficiary: ind()}},
		"ETHEREUM_WALLET": {"USDC", AccountInfo{Address: sp(evm)}},
		"BASE_WALLET":     {"USDC", AccountInfo{Address: sp(evm), VaspName: sp("Kraken")}},
		"POLYGON_WALLET":  {"USDC", AccountInfo{Address: sp(strings.ToLower(evm))}},
		"PLASMA_WALLET":   {"USDT", AccountInfo{Address: sp(evm), Beneficiary: &Beneficiary{BeneficiaryType: sp(Business), LegalName: sp("Acme")}}},
		"SOLANA_WALLET": {"SOL", AccountInfo{Address: sp(walletsig.SolanaAddressOf(pub)),
			Beneficiary: &Beneficiary{BeneficiaryType: sp(Individual), FullName: sp("Jane Doe"), CountryOfResidence: sp("US")}}},
		"TRON_WALLET":  {"USDT", AccountInfo{Address: sp("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")}},
		"SPARK_WALLET": {"BTC", AccountInfo{Address: sp(walletsig.EncodeSparkAddress("spark", key.PubKey().SerializeCompressed()))}},
		"LIGHTNING":    {"BTC", AccountInfo{LightningAddress: sp("alice@example.com")}},
	}
	for typ, e := range out {
		e.info.AccountType = sp(typ)
		out[typ] = e
	}
	if len(out) != len(specs) {
		t.Fatalf("good bodies for %d types, the table has %d", len(out), len(specs))
	}
	return out
}

func errorFields(t *testing.T, err error) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, fe := range apierr.FieldList(err) {
		out[fe.Field] = fe.Constraint
	}
	if err != nil && len(out) == 0 {
		t.Fatalf("not a field-validation error: %v", err)
	}
	return out
}

// Every account type accepts a well-formed account, for a customer and for
// the platform, and refuses another type's currency.
func TestValidateEveryTypeGood(t *testing.T) {
	for typ, g := range goodInfo(t) {
		info := g.info
		req := CreateRequest{CustomerID: sp("Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"), Currency: sp(g.currency), AccountInfo: &info}
		if err := req.Validate(testNow); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		preq := PlatformCreateRequest{Currency: sp(g.currency), AccountInfo: &info}
		if err := preq.Validate(testNow); err != nil {
			t.Errorf("%s platform: %v", typ, err)
		}
		req.Currency = sp("XYZ")
		if got := errorFields(t, req.Validate(testNow)); got["currency"] != apierr.Enum || len(got) != 1 {
			t.Errorf("%s with currency XYZ: %v", typ, got)
		}
	}
}

// R-EACCT-02..04 and field rules: each bad body lists exactly its invalid
// fields with their constraints (R-ERR-02, R-ERR-03).
func TestValidateBadInputs_R_EACCT_02_03_04_R_ERR_02(t *testing.T) {
	good := goodInfo(t)
	base := func(typ string, mutate func(a *AccountInfo)) CreateRequest {
		g := good[typ]
		info := g.info
		if info.Beneficiary != nil {
			b := *info.Beneficiary
			info.Beneficiary = &b
		}
		if mutate != nil {
			mutate(&info)
		}
		return CreateRequest{CustomerID: sp("Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"), Currency: sp(g.currency), AccountInfo: &info}
	}
	cases := []struct {
		name string
		req  CreateRequest
		want map[string]string
	}{
		{"R-EACCT-02 customerId missing", func() CreateRequest { r := base("USD_ACCOUNT", nil); r.CustomerID = nil; return r }(),
			map[string]string{"customerId": "required"}},
		{"customerId malformed", func() CreateRequest { r := base("USD_ACCOUNT", nil); r.CustomerID = sp("cus_1"); return r }(),
			map[string]string{"customerId": "pattern"}},
		{"R-EACCT-03 bankAccountType missing", base("USD_ACCOUNT", func(a *AccountInfo) { a.BankAccountType = nil }),
			map[string]string{"accountInfo.bankAccountType": "required"}},
		{"R-EACCT-04 bankAccountType other", base("USD_ACCOUNT", func(a *AccountInfo) { a.BankAccountType = sp("MONEY_MARKET") }),
			map[string]string{"accountInfo.bankAccountType": "enum"}},
		{"ABA checksum and short account", base("USD_ACCOUNT", func(a *AccountInfo) { a.RoutingNumber = sp("021000022"); a.AccountNumber = sp("123") }),
			map[string]string{"accountInfo.routingNumber": "format", "accountInfo.accountNumber": "format"}},
		{"field of another type", base("USD_ACCOUNT", func(a *AccountInfo) { a.IBAN = sp("DE89370400440532013000") }),
			map[string]string{"accountInfo.iban": "additionalProperties"}},
		{"nothing at all", CreateRequest{}, map[string]string{"customerId": "required", "currency": "required", "accountInfo": "required"}},
		{"accountType missing", base("USD_ACCOUNT", func(a *AccountInfo) { a.AccountType = nil }),
			map[string]string{"accountInfo.accountType": "required"}},
		{"accountType unknown", base("USD_ACCOUNT", func(a *AccountInfo) { a.AccountType = sp("USD_CHECKING") }),
			map[string]string{"accountInfo.accountType": "enum"}},
		{"beneficiary missing", base("USD_ACCOUNT", func(a *AccountInfo) { a.Beneficiary = nil }),
			map[string]string{"accountInfo.beneficiary": "required"}},
		{"business without legalName, with fullName", base("USD_ACCOUNT", func(a *AccountInfo) { a.Beneficiary.BeneficiaryType = sp(Business) }),
			map[string]string{"accountInfo.beneficiary.legalName": "required", "accountInfo.beneficiary.fullName": "additionalProperties"}},
		{"beneficiary type unknown", base("USD_ACCOUNT", func(a *AccountInfo) { a.Beneficiary.BeneficiaryType = sp("TRUST") }),
			map[string]string{"accountInfo.beneficiary.beneficiaryType": "enum"}},
		{"beneficiary fields malformed", base("USD_ACCOUNT", func(a *AccountInfo) {
			a.Beneficiary.BirthDate, a.Beneficiary.Email, a.Beneficiary.Nationality = sp("2999-01-01"), sp("x"), sp("usa")
			a.Beneficiary.Address = &Address{Line1: sp("1 Main")}
		}), map[string]string{"accountInfo.beneficiary.birthDate": "format", "accountInfo.beneficiary.email": "format",
			"accountInfo.beneficiary.nationality": "pattern", "accountInfo.beneficiary.address.postalCode": "required",
			"accountInfo.beneficiary.address.country": "required"}},
		{"EUR individual needs countryOfResidence", base("EUR_ACCOUNT", func(a *AccountInfo) { a.Beneficiary.CountryOfResidence = nil }),
			map[string]string{"accountInfo.beneficiary.countryOfResidence": "required"}},
		{"IBAN checksum, BIC", base("EUR_ACCOUNT", func(a *AccountInfo) { a.IBAN = sp("DE89370400440532013001"); a.SwiftCode = sp("DEUT") }),
			map[string]string{"accountInfo.iban": "format", "accountInfo.swiftCode": "format"}},
		{"DKK takes only Danish IBANs", base("DKK_ACCOUNT", func(a *AccountInfo) { a.IBAN = sp("DE89370400440532013000") }),
			map[string]string{"accountInfo.iban": "format"}},
		{"CLABE check digit", base("MXN_ACCOUNT", func(a *AccountInfo) { a.ClabeNumber = sp("002010077777777772") }),
			map[string]string{"accountInfo.clabeNumber": "format"}},
		{"PIX key against its type, tax id", base("BRL_ACCOUNT", func(a *AccountInfo) { a.PixKeyType = sp("EMAIL"); a.TaxID = sp("52998224724") }),
			map[string]string{"accountInfo.pixKey": "format", "accountInfo.taxId": "format"}},
		{"GBP sort code and account", base("GBP_ACCOUNT", func(a *AccountInfo) { a.SortCode = sp("12-34-56"); a.AccountNumber = sp("1234567") }),
			map[string]string{"accountInfo.sortCode": "pattern", "accountInfo.accountNumber": "pattern"}},
		{"INR needs vpa or account and ifsc", base("INR_ACCOUNT", func(a *AccountInfo) { a.VPA = nil; a.AccountNumber = sp("123456789") }),
			map[string]string{"accountInfo.ifsc": "required"}},
		{"INR nothing", base("INR_ACCOUNT", func(a *AccountInfo) { a.VPA = nil }), map[string]string{"accountInfo.vpa": "required"}},
		{"KES phone prefix, missing provider", base("KES_ACCOUNT", func(a *AccountInfo) { a.PhoneNumber = sp("+255712345678"); a.Provider = nil }),
			map[string]string{"accountInfo.phoneNumber": "pattern", "accountInfo.provider": "required"}},
		{"XOF region", base("XOF_ACCOUNT", func(a *AccountInfo) { a.Region = sp("CM") }), map[string]string{"accountInfo.region": "enum"}},
		{"CNY needs an account number or phone", base("CNY_ACCOUNT", func(a *AccountInfo) { a.AccountNumber = nil }),
			map[string]string{"accountInfo.accountNumber": "required"}},
		{"EVM checksum", base("ETHEREUM_WALLET", func(a *AccountInfo) { a.Address = sp("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD") }),
			map[string]string{"accountInfo.address": "format"}},
		{"wallet address missing, bank field", base("BASE_WALLET", func(a *AccountInfo) { a.Address = nil; a.RoutingNumber = sp("021000021") }),
			map[string]string{"accountInfo.address": "required", "accountInfo.routingNumber": "additionalProperties"}},
		{"Solana address", base("SOLANA_WALLET", func(a *AccountInfo) { a.Address = sp("0x52908400098527886E0F7030069857D2E4169EE7") }),
			map[string]string{"accountInfo.address": "format"}},
		{"wallet individual shape", base("SOLANA_WALLET", func(a *AccountInfo) { a.Beneficiary.CountryOfResidence = nil; a.Beneficiary.Email = sp("a@b.co") }),
			map[string]string{"accountInfo.beneficiary.countryOfResidence": "required", "accountInfo.beneficiary.email": "additionalProperties"}},
		{"Tron address", base("TRON_WALLET", func(a *AccountInfo) { a.Address = sp("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u") }),
			map[string]string{"accountInfo.address": "format"}},
		{"Spark address", base("SPARK_WALLET", func(a *AccountInfo) { a.Address = sp("spark1qqqq") }),
			map[string]string{"accountInfo.address": "format"}},
		{"Lightning two destinations and a beneficiary", base("LIGHTNING", func(a *AccountInfo) {
			a.Bolt12 = sp("lno1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrc")
			a.Beneficiary = &Beneficiary{BeneficiaryType: sp(Individual), FullName: sp("Al")}
		}), map[string]string{"accountInfo.invoice": "additionalProperties", "accountInfo.beneficiary": "additionalProperties"}},
		{"Lightning nothing", base("LIGHTNING", func(a *AccountInfo) { a.LightningAddress = nil }),
			map[string]string{"accountInfo.invoice": "required"}},
		{"Lightning address and invoice malformed", base("LIGHTNING", func(a *AccountInfo) { a.LightningAddress = sp("Alice@example") }),
			map[string]string{"accountInfo.lightningAddress": "format"}},
		{"too long and control characters", base("USD_ACCOUNT", func(a *AccountInfo) {
			a.BankName = sp(strings.Repeat("b", 141))
			a.Beneficiary.FullName = sp("Jane\x00Doe")
		}), map[string]string{"accountInfo.bankName": "maxLength", "accountInfo.beneficiary.fullName": "pattern"}},
		{"ownershipType", func() CreateRequest { r := base("USD_ACCOUNT", nil); r.OwnershipType = sp("MINE"); return r }(),
			map[string]string{"ownershipType": "enum"}},
	}
	for _, c := range cases {
		got := errorFields(t, c.req.Validate(testNow))
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// Property: validation never changes what it validates and always answers
// the same. Random mutations of good requests (fields dropped, replaced by
// junk or by another type's values) are validated twice; the request must
// be byte-for-byte what it was, and both answers equal.
func TestValidateNeverMutates(t *testing.T) {
	good := goodInfo(t)
	types := AccountTypes()
	junk := []string{"", " ", "0", "021000021", "DE89370400440532013000", "0x52908400098527886E0F7030069857D2E4169EE7",
		"+254712345678", "INDIVIDUAL", "CHECKING", strings.Repeat("9", 300), "\x00", "日本", "a@b.co", "lno1qq"}
	r := mrand.New(mrand.NewPCG(1, 2))
	for i := range 3000 {
		typ := types[r.IntN(len(types))]
		raw, _ := json.Marshal(good[typ].info)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		for range r.IntN(4) {
			name := infoFields[r.IntN(len(infoFields))]
			switch r.IntN(3) {
			case 0:
				delete(m, name)
			default:
				m[name] = junk[r.IntN(len(junk))]
			}
		}
		if r.IntN(5) == 0 {
			m["accountType"] = types[r.IntN(len(types))]
		}
		if r.IntN(5) == 0 {
			delete(m, "beneficiary")
		}
		b, _ := json.Marshal(m)
		var info AccountInfo
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
		req := CreateRequest{CustomerID: sp("Customer:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b"), Currency: sp(good[typ].currency), AccountInfo: &info}
		if r.IntN(4) == 0 {
			req.Currency = sp(junk[r.IntN(len(junk))])
		}
		before, _ := json.Marshal(req)
		err1 := req.Validate(testNow)
		after, _ := json.Marshal(req)
		err2 := req.Validate(testNow)
		if string(before) != string(after) {
			t.Fatalf("case %d: validation changed the request:\n%s\n%s", i, before, after)
		}
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("case %d: two answers: %v / %v", i, err1, err2)
		}
		// Every reported field is listed once, in order.
		list := apierr.FieldList(err1)
		if !sort.SliceIsSorted(list, func(a, b int) bool { return list[a].Field < list[b].Field }) {
			t.Fatalf("case %d: unsorted errors %v", i, list)
		}
	}
}

func TestValidateChallengeVerifyConfirm(t *testing.T) {
	if got := errorFields(t, (&ChallengeRequest{}).Validate()); got["method"] != "required" {
		t.Fatal(got)
	}
	if got := errorFields(t, (&ChallengeRequest{Method: sp("EMAIL")}).Validate()); got["method"] != "enum" {
		t.Fatal(got)
	}
	if got := errorFields(t, (&VerifyRequest{SignatureScheme: sp("x")}).Validate()); got["signature"] != "required" || got["signatureScheme"] != "enum" {
		t.Fatal(got)
	}
	if got := errorFields(t, (&TrustConfirmRequest{}).Validate()); got["code"] != "required" {
		t.Fatal(got)
	}
	if got := errorFields(t, (&TrustConfirmRequest{Code: sp("12345")}).Validate()); got["code"] != "pattern" {
		t.Fatal(got)
	}
	if got := errorFields(t, (&TrustConfirmRequest{Origin: sp("https://x")}).Validate()); got["passkeyAssertion"] != "required" {
		t.Fatal(got)
	}
	if err := (&TrustConfirmRequest{Code: sp("123456")}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// The state machine of Part A "External account ownership verification",
// row by row, and nothing else.
func TestOwnershipTransitions(t *testing.T) {
	allowed := map[[3]string]bool{
		{"challenge", StatusPendingOwnershipVerification, StatusPendingOwnershipVerification}: true,
		{"challenge", StatusUnverified, StatusPendingOwnershipVerification}:                   true,
		{"verify", StatusPendingOwnershipVerification, StatusActive}:                          true,
		{"verify", StatusPendingOwnershipVerification, StatusUnverified}:                      true,
		{"liveness", StatusPendingOwnershipVerification, StatusActive}:                        true,
		{"liveness", StatusPendingOwnershipVerification, StatusUnverified}:                    true,
	}
	for _, trig := range []string{"challenge", "verify", "liveness"} {
		for _, from := range Statuses {
			for _, to := range Statuses {
				if got := CanTransition(trig, from, to); got != allowed[[3]string{trig, from, to}] {
					t.Errorf("%s %s→%s: %v", trig, from, to, got)
				}
			}
		}
	}
}

func TestFingerprintNormalizes(t *testing.T) {
	a := AccountInfo{AccountType: sp("ETHEREUM_WALLET"), Address: sp("0x52908400098527886E0F7030069857D2E4169EE7")}
	b := AccountInfo{AccountType: sp("ETHEREUM_WALLET"), Address: sp("0x52908400098527886e0f7030069857d2e4169ee7")}
	c := AccountInfo{AccountType: sp("BASE_WALLET"), Address: a.Address}
	s := specs["ETHEREUM_WALLET"]
	if s.fingerprint(&a) != s.fingerprint(&b) || s.fingerprint(&a) == specs["BASE_WALLET"].fingerprint(&c) {
		t.Fatal("EVM addresses compare without case, per chain")
	}
	x := AccountInfo{AccountType: sp("EUR_ACCOUNT"), IBAN: sp("GB82WEST12345698765432")}
	y := AccountInfo{AccountType: sp("EUR_ACCOUNT"), IBAN: sp("GB82west12345698765432")}
	if specs["EUR_ACCOUNT"].fingerprint(&x) != specs["EUR_ACCOUNT"].fingerprint(&y) {
		t.Fatal("IBANs compare in capitals")
	}
	sol1 := AccountInfo{Address: sp("4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg")}
	sol2 := AccountInfo{Address: sp("4nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg")}
	if specs["SOLANA_WALLET"].fingerprint(&sol1) == specs["SOLANA_WALLET"].fingerprint(&sol2) {
		t.Fatal("Base58 is case-sensitive")
	}
}
