package uma

import (
	"slices"
	"strings"
)

// The sandbox directories of GET /discoveries and GET /vasps. They are
// reference data, not customer data: the receiving institutions a payout
// corridor knows (bankName is what POST /customers/external-accounts takes)
// and the virtual asset service providers recognized for counterparty
// declarations. Production would load them from the payout partner.

// Discovery is one receiving institution of a corridor.
type Discovery struct {
	BankName    string `json:"bankName"`
	DisplayName string `json:"displayName"`
	Country     string `json:"country"`
	Currency    string `json:"currency"`
}

var discoveries = []Discovery{
	{"BDO_UNIBANK", "BDO Unibank", "PH", "PHP"},
	{"BPI", "Bank of the Philippine Islands", "PH", "PHP"},
	{"METROBANK", "Metropolitan Bank and Trust", "PH", "PHP"},
	{"GCASH", "GCash", "PH", "PHP"},
	{"MAYA", "Maya", "PH", "PHP"},
	{"BBVA_MEXICO", "BBVA México", "MX", "MXN"},
	{"BANORTE", "Banorte", "MX", "MXN"},
	{"SANTANDER_MEXICO", "Santander México", "MX", "MXN"},
	{"STATE_BANK_OF_INDIA", "State Bank of India", "IN", "INR"},
	{"HDFC_BANK", "HDFC Bank", "IN", "INR"},
	{"ICICI_BANK", "ICICI Bank", "IN", "INR"},
	{"ACCESS_BANK", "Access Bank", "NG", "NGN"},
	{"GTBANK", "Guaranty Trust Bank", "NG", "NGN"},
	{"ZENITH_BANK", "Zenith Bank", "NG", "NGN"},
	{"MPESA", "M-Pesa", "KE", "KES"},
	{"EQUITY_BANK", "Equity Bank", "KE", "KES"},
	{"BANCO_DO_BRASIL", "Banco do Brasil", "BR", "BRL"},
	{"ITAU_UNIBANCO", "Itaú Unibanco", "BR", "BRL"},
	{"NUBANK", "Nubank", "BR", "BRL"},
}

// Discoveries lists the receiving institutions of a corridor (empty
// filters: all).
func Discoveries(country, cur string) []Discovery {
	out := []Discovery{}
	for _, d := range discoveries {
		if (country == "" || strings.EqualFold(d.Country, country)) && (cur == "" || strings.EqualFold(d.Currency, cur)) {
			out = append(out, d)
		}
	}
	return out
}

// Vasp is one virtual asset service provider of the directory.
type Vasp struct {
	VaspName string `json:"vaspName"`
	URL      string `json:"url,omitempty"`
}

var vasps = []Vasp{
	{"Binance", "https://www.binance.com"},
	{"Bitso", "https://bitso.com"},
	{"Bitstamp", "https://www.bitstamp.net"},
	{"Coinbase", "https://www.coinbase.com"},
	{"Gemini", "https://www.gemini.com"},
	{"Kraken", "https://www.kraken.com"},
	{"OKX", "https://www.okx.com"},
}

// Vasps lists the directory after the name after (keyset), sorted by name.
func Vasps(after string, limit int) ([]Vasp, int) {
	i, _ := slices.BinarySearchFunc(vasps, after, func(v Vasp, k string) int { return strings.Compare(v.VaspName, k) })
	for i < len(vasps) && after != "" && vasps[i].VaspName <= after {
		i++
	}
	return vasps[i:min(len(vasps), i+limit)], len(vasps)
}
