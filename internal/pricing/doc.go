// Package pricing is the one place that turns a transfer's terms into its
// amounts: source and destination currencies, rail, locked side and amount,
// the rate, the service fee schedule and the platform's fees in; total sending
// and receiving amounts, exchange rate, fees, platform fees and rate details
// out. Quotes, exchange-rate entries and receiver lookups all price through
// it, so they can never disagree. docs/pricing.md is the long form of this
// comment.
//
// # Units
//
// Amounts are int64 in the smallest unit of their currency (internal/currency
// gives the decimals). The exchange rate X is a decimal: major units of the
// sending currency per one major unit of the receiving currency (1 for a
// same-currency transfer). One smallest receiving unit therefore costs
//
//	U = X × 10^(sendingDecimals − receivingDecimals)
//
// smallest sending units. All arithmetic is exact (shopspring/decimal); a
// result that does not fit an int64 is refused with
// TRANSACTION_SIZE_LIMIT_EXCEEDED, never wrapped.
//
// # The rounding rule
//
// Written down once, here, and tested:
//
//  1. Fees round UP to the smallest unit of the sending currency: each
//     variable fee is ceil(totalSendingAmount × bps / 10000) on its own, and a
//     fixed fee in another currency is converted and rounded up.
//  2. The receiving amount rounds DOWN: for a sending amount S with fees F(S),
//     receive(S) = floor((S − F(S)) / U).
//  3. SENDING lock: totalSendingAmount is the locked amount and the fees come
//     out of it (feesIncluded is inside totalSendingAmount);
//     totalReceivingAmount = receive(locked).
//  4. RECEIVING lock: totalReceivingAmount is the locked amount and
//     totalSendingAmount is the smallest S with receive(S) ≥ locked; the fees
//     are added on top of the converted amount.
//
// The identity that follows, with R = totalReceivingAmount:
//
//	totalSendingAmount = feesIncluded + R × U + residual
//	0 ≤ residual < max(1, U)   (in smallest sending units)
//
// The residual is below one smallest receiving unit's worth for a SENDING lock
// and below one smallest sending unit for a RECEIVING lock; it is zero for a
// same-currency transfer. Rounding never favours the sender by even one unit,
// and never costs the sender more than one unit. Result.Residual computes it.
//
// # Fees
//
// Service fees come from a Schedule (by corridor and rail, most specific rule
// wins; DefaultSchedule is the built-in one). Payout fees, charged by the
// destination rail in the receiving currency, are the counterparty fee of
// rateDetails; their sending-currency equivalent is inside feesIncluded.
// Platform fees come from the platform's feeConfigs (CROSS_CURRENCY_TRANSACTION
// for a USD source and a different destination currency) or from a
// per-transaction platformFeeOverride (USD sources only), and are inside
// feesIncluded as platformFeesIncluded.
//
// # Limits
//
// Limits holds the pre-flight sending bounds (AMOUNT_OUT_OF_RANGE), the
// single-transaction maximum by corridor or withdrawal currency
// (TRANSACTION_SIZE_LIMIT_EXCEEDED) and the dated ACH_SAME_DAY per-entry
// limit. Engine.Quote enforces all of them; Engine.Estimate (GET
// /exchange-rates) only reports the bounds.
package pricing
