package httpapi

import (
	"net/http"
	"testing"
)

const solanaAddr = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"

func wdBody(accountID, cur, network string, amount int64, addr string) cobj {
	return cobj{"internalAccountId": accountID, "currency": cur, "cryptoNetwork": network, "amount": amount,
		"destinationAddress": addr}
}

// The "Done when", crypto part: estimate a USDC withdrawal on
// Solana, then pay it with a quote to an external wallet at that address;
// the quote's fees equal the estimate (R-QUOTE-42: the endpoint exists and
// answers 2xx for a valid crypto account).
func TestWithdrawalEstimateMatchesQuote_R_QUOTE_42(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, _ := e.qtSetup(t, "USD", "USDC")
		acct := e.qtAccountID(t, cust, "USDC")
		e.acFund(t, acct, 50_000_000)
		r := e.do("POST", "/crypto/estimate-withdrawal-fee", wdBody(acct, "USDC", "SOLANA", 10_000_000, solanaAddr))
		expect(t, r, http.StatusOK, "")
		est := r.JSON(t)
		// Solana's sandbox network fee: USD 0.01 = 10000 USDC units.
		if qnum(t, est, "networkFee") != 10_000 || est["networkFeeAsset"] != "USDC" ||
			qnum(t, est, "totalFee") != qnum(t, est, "networkFee")+qnum(t, est, "applicationFee") ||
			qnum(t, est, "netAmount") != 10_000_000-qnum(t, est, "totalFee") {
			t.Fatalf("estimate: %v", est)
		}
		wallet := e.eaCreate(t, eaCustomers, eaWallet(cust, "SOLANA_WALLET", "USDC", "", "address", solanaAddr))["id"].(string)
		q := e.qtQuote(t, qtBody(acct, wallet, "SENDING", 10_000_000))
		if qnum(t, q, "feesIncluded") != qnum(t, est, "totalFee") || qnum(t, q, "totalReceivingAmount") != qnum(t, est, "netAmount") {
			t.Fatalf("quote fees %v / receiving %v, estimate %v", q["feesIncluded"], q["totalReceivingAmount"], est)
		}
		r = e.do("POST", "/quotes/"+q["id"].(string)+"/execute", nil)
		expect(t, r, http.StatusOK, "")
		if got := e.qtBalance(t, cust, "USDC"); got != 40_000_000 {
			t.Fatalf("balance after the withdrawal: %d", got)
		}
		e.acAudit(t)
	})
}

// Each network prices its own fee; the address is checked with the
// network's format; only an INTERNAL_CRYPTO account in that currency
// withdraws.
func TestWithdrawalEstimateErrors(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		cust, _ := e.qtSetup(t, "USD", "USDC")
		acct := e.qtAccountID(t, cust, "USDC")
		usd := e.qtAccountID(t, cust, "USD")
		const evm = "0x52908400098527886E0F7030069857D2E4169EE7"
		r := e.do("POST", "/crypto/estimate-withdrawal-fee", wdBody(acct, "USDC", "ETHEREUM", 10_000_000, evm))
		expect(t, r, http.StatusOK, "")
		if qnum(t, r.JSON(t), "networkFee") != 1_500_000 {
			t.Fatalf("ethereum fee: %s", r.Body)
		}
		for name, c := range map[string]struct {
			body  cobj
			field string
		}{
			"evm address on solana":      {wdBody(acct, "USDC", "SOLANA", 1_000_000, evm), "destinationAddress"},
			"solana address on ethereum": {wdBody(acct, "USDC", "ETHEREUM", 1_000_000, solanaAddr), "destinationAddress"},
			"unknown network":            {wdBody(acct, "USDC", "DOGECHAIN", 1_000_000, solanaAddr), "cryptoNetwork"},
			"currency not on chain":      {wdBody(acct, "USDC", "TRON", 1_000_000, "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"), "currency"},
			"fiat account":               {wdBody(usd, "USDC", "SOLANA", 1_000_000, solanaAddr), "internalAccountId"},
			"zero amount":                {wdBody(acct, "USDC", "SOLANA", 0, solanaAddr), "amount"},
		} {
			r := e.do("POST", "/crypto/estimate-withdrawal-fee", c.body)
			expect(t, r, http.StatusBadRequest, "INVALID_INPUT")
			if _, ok := fieldErrors(t, r)[c.field]; !ok {
				t.Errorf("%s: %s", name, r.Body)
			}
		}
		r = e.do("POST", "/crypto/estimate-withdrawal-fee", wdBody("InternalAccount:0199a1b2-0c3d-7e4f-8a5b-6c7d8e9f0a1b", "USDC", "SOLANA", 1_000_000, solanaAddr))
		expect(t, r, http.StatusNotFound, "ACCOUNT_NOT_FOUND")
		r = e.do("POST", "/crypto/estimate-withdrawal-fee", wdBody(acct, "USDC", "SOLANA", 5_000, solanaAddr))
		expect(t, r, http.StatusBadRequest, "AMOUNT_OUT_OF_RANGE")
	})
}
