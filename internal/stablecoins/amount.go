package stablecoins

import (
	"strconv"

	"github.com/paymentsd/paymentsd/internal/apierr"
	"github.com/paymentsd/paymentsd/internal/currency"
	"github.com/paymentsd/paymentsd/internal/ledger"
)

// ParseAmount reads an operation amount: a string of decimal digits, the
// token's smallest unit, positive and at most ledger.MaxAmount.
func ParseAmount(s string) (int64, error) {
	bad := func(reason string) error {
		var f apierr.Fields
		f.Add("amount", apierr.Pattern, "%s", reason)
		return f.Err()
	}
	if s == "" || len(s) > 19 {
		return 0, bad("must be 1 to 19 decimal digits (the token's smallest unit)")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, bad("must be decimal digits only (the token's smallest unit)")
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > ledger.MaxAmount {
		return 0, apierr.New("STABLECOIN_AMOUNT_NOT_REPRESENTABLE", "amount "+s+" is beyond the largest amount the ledger records")
	}
	if n == 0 {
		return 0, bad("must be greater than zero")
	}
	return n, nil
}

// ToFiat converts a token amount into the base currency's smallest unit at
// par (one token is one unit of the base currency). It refuses an amount
// that is no whole number of the base currency's smallest unit
// (STABLECOIN_AMOUNT_NOT_REPRESENTABLE, R-STBL-03): with 6 decimals and
// USD, a multiple of 10000.
func ToFiat(amount int64, decimals int, base string) (int64, error) {
	cur, ok := currency.Lookup(base)
	if !ok {
		return 0, apierr.New("STABLECOIN_PROVIDER_ERROR", "The stablecoin's base currency "+base+" is unknown")
	}
	if decimals <= cur.Decimals {
		f := amount
		for range cur.Decimals - decimals {
			if f > ledger.MaxAmount/10 {
				return 0, apierr.New("STABLECOIN_AMOUNT_NOT_REPRESENTABLE", "The amount's "+base+" value is beyond the ledger's largest amount")
			}
			f *= 10
		}
		return f, nil
	}
	unit := int64(1)
	for range decimals - cur.Decimals {
		unit *= 10
	}
	if amount%unit != 0 {
		return 0, apierr.Newf("STABLECOIN_AMOUNT_NOT_REPRESENTABLE",
			"amount %d has more precision than %s can settle: with %d decimals it must be a multiple of %d",
			amount, base, decimals, unit)
	}
	return amount / unit, nil
}
