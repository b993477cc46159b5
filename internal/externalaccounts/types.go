package externalaccounts

import (
	"slices"
	"sort"
	"strings"

	"github.com/paymentsd/paymentsd/internal/apierr"
)

// Account kinds.
type kind int

const (
	kindBank kind = iota
	kindWallet
	kindLightning
)

// fieldSpec says how one accountInfo field of a type is checked: presence,
// length (in bytes; every identifier here is ASCII), then either an enum or
// a format check reported under constraint.
type fieldSpec struct {
	name       string
	required   bool
	minLen     int
	maxLen     int
	enum       []string
	constraint string
	check      func(string) string
}

// beneficiaryRule says whether accountInfo.beneficiary is needed and which
// individual fields the type adds to fullName.
type beneficiaryRule struct {
	none     bool // the type has no beneficiary (Lightning)
	optional bool // wallets: optional, and an individual is fullName and countryOfResidence only
	// individualRequired lists individual fields required beyond fullName.
	individualRequired []string
	// individualExtra lists individual fields this type allows beyond the
	// common ones.
	individualExtra []string
}

// typeSpec is one account type.
type typeSpec struct {
	accountType string
	currencies  []string
	kind        kind
	// chain names a wallet's network in challenge messages.
	chain string
	// signature reports whether WALLET_SIGNATURE can verify ownership.
	signature   func(a *AccountInfo) bool
	fields      []fieldSpec
	beneficiary beneficiaryRule
	// anyOf: at least one of these fields must be present.
	anyOf []string
	// extra holds rules across fields.
	extra func(a *AccountInfo, x *checker)
	// identity lists the fields whose normalized values identify the account
	// for duplicate detection (R-EACCT-07).
	identity []string
}

// Field builders.

func req(f fieldSpec) fieldSpec { f.required = true; return f }

func text(name string, max int) fieldSpec { return fieldSpec{name: name, minLen: 1, maxLen: max} }

func enumField(name string, values ...string) fieldSpec {
	return fieldSpec{name: name, enum: values}
}

func pattern(name string, check func(string) string) fieldSpec {
	return fieldSpec{name: name, constraint: apierr.Pattern, check: check}
}

func format(name string, check func(string) string) fieldSpec {
	return fieldSpec{name: name, constraint: apierr.Format, check: check}
}

func digitsCheck(min, max int) func(string) string {
	return func(s string) string {
		if len(s) < min || len(s) > max || !allDigits(s) {
			if min == max {
				return "must be " + itoa(min) + " digits"
			}
			return "must be " + itoa(min) + " to " + itoa(max) + " digits"
		}
		return ""
	}
}

func digits(name string, min, max int) fieldSpec { return pattern(name, digitsCheck(min, max)) }

func ibanOf(country string) fieldSpec {
	return format("iban", func(s string) string { return IBAN(s, country) })
}

func phone(prefix string, n int) fieldSpec {
	return pattern("phoneNumber", func(s string) string { return Phone(s, prefix, n) })
}

var (
	swift       = format("swiftCode", BIC)
	bankName    = text("bankName", 255)
	acctNumber  = fieldSpec{name: "accountNumber", minLen: 1, maxLen: 34, constraint: apierr.Pattern, check: alnum}
	anyPhone    = phone("", 0)
	provider    = text("provider", 255)
	bankAcctTyp = enumField("bankAccountType", BankAccountTypes...)
)

// alnum: letters and digits only (an account number without spaces or
// separators).
func alnum(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return "must hold only letters and digits"
		}
	}
	return ""
}

// mobileMoney is an account held at a mobile-money provider.
func mobileMoney(typ, currency string, ph fieldSpec) typeSpec {
	return typeSpec{accountType: typ, currencies: []string{currency}, kind: kindBank,
		fields: []fieldSpec{req(ph), req(provider)}, identity: []string{"provider", "phoneNumber"}}
}

// bankWithSwift is an account identified by SWIFT code and account number.
func bankWithSwift(typ, currency string, bankNameRequired bool, more ...fieldSpec) typeSpec {
	bn := bankName
	bn.required = bankNameRequired
	return typeSpec{accountType: typ, currencies: []string{currency}, kind: kindBank,
		fields: append([]fieldSpec{bn, req(acctNumber), req(swift)}, more...), identity: []string{"swiftCode", "accountNumber"}}
}

// bankByName is an account identified by its bank's name and account number.
func bankByName(typ, currency string, acct fieldSpec, more ...fieldSpec) typeSpec {
	return typeSpec{accountType: typ, currencies: []string{currency}, kind: kindBank,
		fields: append([]fieldSpec{req(bankName), req(acct)}, more...), identity: []string{"bankName", "accountNumber"}}
}

// wallet is a self-custody or custodial address on a chain.
func wallet(typ, chain string, check func(string) string, signs bool, currencies ...string) typeSpec {
	return typeSpec{accountType: typ, currencies: currencies, kind: kindWallet, chain: chain,
		signature:   func(*AccountInfo) bool { return signs },
		fields:      []fieldSpec{req(format("address", check)), text("vaspName", 255)},
		beneficiary: beneficiaryRule{optional: true}, identity: []string{"address"}}
}

// specs is every account type (the reference's list of external account
// types), keyed by accountType.
var specs = map[string]*typeSpec{}

func init() {
	list := []typeSpec{
		{accountType: "USD_ACCOUNT", currencies: []string{"USD"}, kind: kindBank,
			fields: []fieldSpec{
				req(format("accountNumber", USAccountNumber)),
				req(format("routingNumber", ABARoutingNumber)),
				req(bankAcctTyp),
				text("bankName", 140),
				text("intermediaryBankName", 140),
				format("intermediaryRoutingNumber", ABARoutingNumber),
				{name: "fiToFiInformation", minLen: 1, maxLen: 210},
			},
			identity: []string{"routingNumber", "accountNumber"}},
		{accountType: "EUR_ACCOUNT", currencies: []string{"EUR"}, kind: kindBank,
			fields: []fieldSpec{req(ibanOf("")), swift}, identity: []string{"iban"},
			beneficiary: beneficiaryRule{individualRequired: []string{"countryOfResidence"}}},
		{accountType: "DKK_ACCOUNT", currencies: []string{"DKK"}, kind: kindBank,
			fields: []fieldSpec{req(ibanOf("DK")), swift}, identity: []string{"iban"}},
		{accountType: "AED_ACCOUNT", currencies: []string{"AED"}, kind: kindBank,
			fields: []fieldSpec{req(ibanOf("AE")), swift}, identity: []string{"iban"},
			beneficiary: beneficiaryRule{individualRequired: []string{"address"}}},
		{accountType: "EGP_ACCOUNT", currencies: []string{"EGP"}, kind: kindBank,
			fields: []fieldSpec{req(bankName), ibanOf("EG"), anyPhone},
			anyOf:  []string{"iban", "phoneNumber"}, identity: []string{"iban", "phoneNumber"}},
		{accountType: "PKR_ACCOUNT", currencies: []string{"PKR"}, kind: kindBank,
			fields: []fieldSpec{req(bankName), acctNumber, ibanOf("PK"), anyPhone},
			anyOf:  []string{"accountNumber", "iban", "phoneNumber"}, identity: []string{"bankName", "accountNumber", "iban", "phoneNumber"}},
		{accountType: "GBP_ACCOUNT", currencies: []string{"GBP"}, kind: kindBank,
			fields:   []fieldSpec{req(digits("sortCode", 6, 6)), req(digits("accountNumber", 8, 8))},
			identity: []string{"sortCode", "accountNumber"}},
		{accountType: "MXN_ACCOUNT", currencies: []string{"MXN"}, kind: kindBank,
			fields: []fieldSpec{req(format("clabeNumber", CLABE))}, identity: []string{"clabeNumber"}},
		{accountType: "BRL_ACCOUNT", currencies: []string{"BRL"}, kind: kindBank,
			fields: []fieldSpec{
				req(fieldSpec{name: "pixKey", minLen: 1, maxLen: 77}),
				req(enumField("pixKeyType", "CPF", "CNPJ", "EMAIL", "PHONE", "RANDOM")),
				req(format("taxId", BrazilTaxID)),
			},
			extra: func(a *AccountInfo, x *checker) {
				if a.PixKey != nil && a.PixKeyType != nil && len(*a.PixKey) <= 77 && *a.PixKey != "" {
					if msg := PixKey(*a.PixKey, *a.PixKeyType); msg != "" {
						x.add("accountInfo.pixKey", apierr.Format, "%s", msg)
					}
				}
			},
			identity: []string{"pixKey"}},
		{accountType: "INR_ACCOUNT", currencies: []string{"INR"}, kind: kindBank,
			fields: []fieldSpec{format("vpa", VPA), digits("accountNumber", 9, 18), pattern("ifsc", IFSC),
				enumField("rail", "NEFT", "RTGS", "IMPS", "UPI"), bankName},
			extra: func(a *AccountInfo, x *checker) {
				switch {
				case a.VPA == nil && a.AccountNumber == nil && a.IFSC == nil:
					x.add("accountInfo.vpa", apierr.Required, "is required unless accountNumber and ifsc are given")
				case a.AccountNumber != nil && a.IFSC == nil:
					x.add("accountInfo.ifsc", apierr.Required, "is required with accountNumber")
				case a.IFSC != nil && a.AccountNumber == nil:
					x.add("accountInfo.accountNumber", apierr.Required, "is required with ifsc")
				}
			},
			identity: []string{"vpa", "ifsc", "accountNumber"}},
		{accountType: "CAD_ACCOUNT", currencies: []string{"CAD"}, kind: kindBank,
			fields:      []fieldSpec{req(digits("bankCode", 3, 3)), req(digits("branchCode", 5, 5)), req(digits("accountNumber", 7, 12))},
			beneficiary: beneficiaryRule{individualExtra: []string{"registrationNumber"}},
			identity:    []string{"bankCode", "branchCode", "accountNumber"}},
		bankByName("NGN_ACCOUNT", "NGN", digits("accountNumber", 10, 10)),
		bankByName("PHP_ACCOUNT", "PHP", digits("accountNumber", 8, 16)),
		bankByName("ZAR_ACCOUNT", "ZAR", digits("accountNumber", 9, 13)),
		bankWithSwift("HKD_ACCOUNT", "HKD", true),
		bankWithSwift("IDR_ACCOUNT", "IDR", true, req(pattern("phoneNumber", indonesianPhone))),
		bankWithSwift("MYR_ACCOUNT", "MYR", true),
		bankWithSwift("SGD_ACCOUNT", "SGD", false),
		bankWithSwift("THB_ACCOUNT", "THB", true),
		bankWithSwift("VND_ACCOUNT", "VND", true),
		{accountType: "GTQ_ACCOUNT", currencies: []string{"GTQ"}, kind: kindBank,
			fields:      []fieldSpec{req(acctNumber), req(bankAcctTyp), req(bankName)},
			beneficiary: beneficiaryRule{individualRequired: []string{"countryOfResidence", "phoneNumber"}},
			identity:    []string{"bankName", "accountNumber"}},
		{accountType: "JMD_ACCOUNT", currencies: []string{"JMD"}, kind: kindBank,
			fields:      []fieldSpec{req(acctNumber), req(digits("branchCode", 5, 5)), req(bankAcctTyp), req(bankName)},
			beneficiary: beneficiaryRule{individualRequired: []string{"address", "phoneNumber"}},
			identity:    []string{"bankName", "branchCode", "accountNumber"}},
		{accountType: "BDT_ACCOUNT", currencies: []string{"BDT"}, kind: kindBank,
			fields: []fieldSpec{req(bankName), acctNumber, digits("branchCode", 5, 5), swift, anyPhone},
			anyOf:  []string{"accountNumber", "phoneNumber"}, identity: []string{"bankName", "accountNumber", "phoneNumber"}},
		{accountType: "COP_ACCOUNT", currencies: []string{"COP"}, kind: kindBank,
			fields:      []fieldSpec{req(bankName), acctNumber, bankAcctTyp, anyPhone},
			beneficiary: beneficiaryRule{individualExtra: []string{"documentType", "documentNumber"}},
			anyOf:       []string{"accountNumber", "phoneNumber"}, identity: []string{"bankName", "accountNumber", "phoneNumber"}},
		{accountType: "GHS_ACCOUNT", currencies: []string{"GHS"}, kind: kindBank,
			fields: []fieldSpec{req(bankName), acctNumber, anyPhone},
			anyOf:  []string{"accountNumber", "phoneNumber"}, identity: []string{"bankName", "accountNumber", "phoneNumber"}},
		{accountType: "CNY_ACCOUNT", currencies: []string{"CNY"}, kind: kindBank,
			fields: []fieldSpec{req(bankName), acctNumber, anyPhone},
			anyOf:  []string{"accountNumber", "phoneNumber"}, identity: []string{"bankName", "accountNumber", "phoneNumber"}},
		{accountType: "SLV_ACCOUNT", currencies: []string{"USD"}, kind: kindBank,
			fields: []fieldSpec{bankName, acctNumber, bankAcctTyp, anyPhone},
			anyOf:  []string{"accountNumber", "phoneNumber"}, identity: []string{"bankName", "accountNumber", "phoneNumber"}},
		mobileMoney("KES_ACCOUNT", "KES", phone("+254", 9)),
		mobileMoney("RWF_ACCOUNT", "RWF", phone("+250", 9)),
		mobileMoney("TZS_ACCOUNT", "TZS", phone("+255", 9)),
		mobileMoney("ZMW_ACCOUNT", "ZMW", phone("+260", 9)),
		mobileMoney("BWP_ACCOUNT", "BWP", anyPhone),
		mobileMoney("MWK_ACCOUNT", "MWK", anyPhone),
		mobileMoney("UGX_ACCOUNT", "UGX", anyPhone),
		mobileMoney("HTG_ACCOUNT", "HTG", anyPhone),
		{accountType: "XAF_ACCOUNT", currencies: []string{"XAF"}, kind: kindBank,
			fields:   []fieldSpec{req(anyPhone), req(provider), req(enumField("region", "CM", "CG"))},
			identity: []string{"region", "provider", "phoneNumber"}},
		{accountType: "XOF_ACCOUNT", currencies: []string{"XOF"}, kind: kindBank,
			fields:   []fieldSpec{req(anyPhone), req(provider), req(enumField("region", "BJ", "CI", "SN", "TG"))},
			identity: []string{"region", "provider", "phoneNumber"}},
		{accountType: "SWIFT_ACCOUNT", currencies: []string{"USD", "EUR", "GBP", "CHF", "JPY", "CAD", "AUD", "HKD", "SGD", "CNY"}, kind: kindBank,
			fields: []fieldSpec{req(pattern("country", Country)), req(swift), req(bankName), acctNumber, ibanOf("")},
			anyOf:  []string{"accountNumber", "iban"}, identity: []string{"swiftCode", "accountNumber", "iban"}},

		wallet("ETHEREUM_WALLET", "ETHEREUM", EVMAddress, true, "USDC", "USDT"),
		wallet("BASE_WALLET", "BASE", EVMAddress, true, "USDC"),
		wallet("POLYGON_WALLET", "POLYGON", EVMAddress, true, "USDC"),
		wallet("PLASMA_WALLET", "PLASMA", EVMAddress, true, "USDT"),
		wallet("SOLANA_WALLET", "SOLANA", SolanaAddress, true, "USDC", "USDT", "SOL"),
		wallet("TRON_WALLET", "TRON", TronAddress, true, "USDT"),
		wallet("SPARK_WALLET", "SPARK", SparkAddress, false, "BTC", "USDB"),
		{accountType: "LIGHTNING", currencies: []string{"BTC"}, kind: kindLightning, chain: "LIGHTNING",
			signature: func(a *AccountInfo) bool { return a.Invoice != nil },
			fields: []fieldSpec{format("invoice", Bolt11Invoice), format("bolt12", Bolt12Offer),
				format("lightningAddress", LightningAddress)},
			beneficiary: beneficiaryRule{none: true},
			extra: func(a *AccountInfo, x *checker) {
				n := 0
				for _, p := range []*string{a.Invoice, a.Bolt12, a.LightningAddress} {
					if p != nil {
						n++
					}
				}
				switch {
				case n == 0:
					x.add("accountInfo.invoice", apierr.Required, "exactly one of invoice, bolt12 or lightningAddress is required")
				case n > 1:
					x.add("accountInfo.invoice", apierr.AdditionalProperties, "send exactly one of invoice, bolt12 or lightningAddress")
				}
			},
			identity: []string{"invoice", "bolt12", "lightningAddress"}},
	}
	for i := range list {
		specs[list[i].accountType] = &list[i]
	}
}

// indonesianPhone: +62 and 9 to 12 digits.
func indonesianPhone(s string) string {
	rest, ok := strings.CutPrefix(s, "+62")
	if !e164RE.MatchString(s) || !ok || len(rest) < 9 || len(rest) > 12 {
		return "must be +62 followed by 9 to 12 digits"
	}
	return ""
}

// AccountTypes lists every account type, sorted.
func AccountTypes() []string {
	out := make([]string, 0, len(specs))
	for t := range specs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// CurrenciesOf lists the currencies an account type holds.
func CurrenciesOf(accountType string) []string {
	if s, ok := specs[accountType]; ok {
		return slices.Clone(s.currencies)
	}
	return nil
}

// infoFields names every field of AccountInfo except accountType and
// beneficiary, in JSON spelling.
var infoFields = []string{"accountNumber", "routingNumber", "bankAccountType", "bankName", "intermediaryBankName",
	"intermediaryRoutingNumber", "fiToFiInformation", "iban", "swiftCode", "clabeNumber", "pixKey", "pixKeyType", "taxId",
	"sortCode", "bankCode", "branchCode", "vpa", "ifsc", "rail", "phoneNumber", "provider", "region", "country",
	"address", "vaspName", "invoice", "bolt12", "lightningAddress"}

// field returns the AccountInfo field named name.
func (a *AccountInfo) field(name string) *string {
	switch name {
	case "accountNumber":
		return a.AccountNumber
	case "routingNumber":
		return a.RoutingNumber
	case "bankAccountType":
		return a.BankAccountType
	case "bankName":
		return a.BankName
	case "intermediaryBankName":
		return a.IntermediaryBankName
	case "intermediaryRoutingNumber":
		return a.IntermediaryRoutingNumber
	case "fiToFiInformation":
		return a.FiToFiInformation
	case "iban":
		return a.IBAN
	case "swiftCode":
		return a.SwiftCode
	case "clabeNumber":
		return a.ClabeNumber
	case "pixKey":
		return a.PixKey
	case "pixKeyType":
		return a.PixKeyType
	case "taxId":
		return a.TaxID
	case "sortCode":
		return a.SortCode
	case "bankCode":
		return a.BankCode
	case "branchCode":
		return a.BranchCode
	case "vpa":
		return a.VPA
	case "ifsc":
		return a.IFSC
	case "rail":
		return a.Rail
	case "phoneNumber":
		return a.PhoneNumber
	case "provider":
		return a.Provider
	case "region":
		return a.Region
	case "country":
		return a.Country
	case "address":
		return a.Address
	case "vaspName":
		return a.VaspName
	case "invoice":
		return a.Invoice
	case "bolt12":
		return a.Bolt12
	case "lightningAddress":
		return a.LightningAddress
	}
	panic("externalaccounts: unknown accountInfo field " + name)
}

// fingerprint is the account's identity for duplicate detection: the type
// and its identifying fields, normalized so that spellings of one account
// meet (case of IBANs, SWIFT codes and EVM addresses; case of names and
// addresses that are case-insensitive).
func (s *typeSpec) fingerprint(a *AccountInfo) string {
	parts := []string{s.accountType}
	for _, name := range s.identity {
		v := a.field(name)
		if v == nil {
			parts = append(parts, "")
			continue
		}
		val := *v
		switch name {
		case "iban", "swiftCode", "ifsc":
			val = strings.ToUpper(val)
		case "bankName", "provider", "vpa", "invoice", "bolt12", "lightningAddress":
			val = strings.ToLower(strings.TrimSpace(val))
		case "address":
			if s.chain != "SOLANA" && s.chain != "TRON" { // base58 is case-sensitive
				val = strings.ToLower(val)
			}
		case "pixKey":
			if a.PixKeyType != nil && (*a.PixKeyType == "EMAIL" || *a.PixKeyType == "RANDOM") {
				val = strings.ToLower(val)
			}
		}
		parts = append(parts, val)
	}
	return strings.Join(parts, "|")
}

// selfCustody reports whether an account is a wallet its owner holds the
// keys of: a wallet without a custodian (vaspName), or a Lightning
// destination.
func (s *typeSpec) selfCustody(a *AccountInfo) bool {
	switch s.kind {
	case kindWallet:
		return a.VaspName == nil
	case kindLightning:
		return true
	}
	return false
}
