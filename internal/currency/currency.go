// Package currency is the one table of currency metadata (R-CONV-05,
// R-CONV-06): code, name, symbol and the decimal places of the smallest unit
// in which every amount is an int64.
package currency

import "sort"

// Currency is the API's Currency object.
type Currency struct {
	Code     string `json:"code"`
	Name     string `json:"name"`
	Symbol   string `json:"symbol"`
	Decimals int    `json:"decimals"`
	Crypto   bool   `json:"-"`
}

var table = map[string]Currency{}

func add(code, name, symbol string, decimals int, crypto bool) {
	table[code] = Currency{Code: code, Name: name, Symbol: symbol, Decimals: decimals, Crypto: crypto}
}

func init() {
	add("USD", "United States Dollar", "$", 2, false)
	add("EUR", "Euro", "€", 2, false)
	add("GBP", "Pound Sterling", "£", 2, false)
	add("MXN", "Mexican Peso", "$", 2, false)
	add("BRL", "Brazilian Real", "R$", 2, false)
	add("INR", "Indian Rupee", "₹", 2, false)
	add("PHP", "Philippine Peso", "₱", 2, false)
	add("NGN", "Nigerian Naira", "₦", 2, false)
	add("CNY", "Chinese Yuan", "¥", 2, false)
	add("CAD", "Canadian Dollar", "$", 2, false)
	add("COP", "Colombian Peso", "$", 2, false)
	add("KES", "Kenyan Shilling", "KSh", 2, false)
	add("SGD", "Singapore Dollar", "$", 2, false)
	add("HKD", "Hong Kong Dollar", "$", 2, false)
	add("AUD", "Australian Dollar", "$", 2, false)
	add("CHF", "Swiss Franc", "CHF", 2, false)
	add("ZAR", "South African Rand", "R", 2, false)
	add("JPY", "Japanese Yen", "¥", 0, false)
	add("BTC", "Bitcoin", "₿", 8, true)
	add("USDC", "USD Coin", "USDC", 6, true)
	add("USDT", "Tether USD", "USDT", 6, true)
	add("USDB", "USDB", "USDB", 6, true)
	add("SOL", "Solana", "SOL", 9, true)
}

// Lookup returns the currency with code.
func Lookup(code string) (Currency, bool) {
	c, ok := table[code]
	return c, ok
}

// Codes lists every known code, sorted.
func Codes() []string {
	out := make([]string, 0, len(table))
	for c := range table {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
