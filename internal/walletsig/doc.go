// Package walletsig checks that a wallet's key signed a message, with each
// chain's own message-signing scheme, and parses the address formats those
// keys hide behind. It holds no state and knows nothing about accounts or
// HTTP.
//
// Schemes:
//
//   - EVM chains (Ethereum, Base, Polygon, Plasma): personal_sign (EIP-191
//     version 0x45): keccak256("\x19Ethereum Signed Message:\n" + len + msg),
//     a 65-byte r‖s‖v secp256k1 signature (v 27/28 or 0/1) from which the
//     public key is recovered and turned into the address.
//   - Tron: the same with the "\x19TRON Signed Message:\n" prefix; the address
//     is 0x41 followed by the EVM-style address, in Base58Check.
//   - Solana: Ed25519 over the exact message bytes; the address is the
//     Base58 public key; the signature is Base58 or hex.
//   - Lightning: a node's signmessage (LND, Core Lightning): a zbase32
//     recoverable secp256k1 signature over
//     SHA256(SHA256("Lightning Signed Message:" + msg)), checked against the
//     payee node of a BOLT11 invoice.
//
// Every Verify function tells a malformed signature (ErrMalformed: it cannot
// even be parsed) from a well-formed one that does not verify for the
// address (ErrMismatch), because callers treat the two differently.
package walletsig

import "errors"

var (
	// ErrMalformed: the signature is not an encoding this scheme accepts.
	ErrMalformed = errors.New("walletsig: malformed signature")
	// ErrMismatch: the signature is well formed but was not made by the
	// address's key over this message.
	ErrMismatch = errors.New("walletsig: signature does not match the address")
)
