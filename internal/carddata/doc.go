// Package carddata holds a card's sensitive data the way a card program
// does (issue 18, item 4), without HTTP:
//
//   - the CVV/CVV2 is computed, never stored, from the PAN, expiry and
//     service code with the card networks' method (Visa CVV: DES and
//     two-key triple DES under a card verification key pair, then
//     decimalization), see CVV;
//   - the PIN is never stored: a Visa PIN verification value (PVV) is, and a
//     PIN is checked by recomputing it, see PVV; PINs reach the service only
//     encrypted by the client (PINEnvelope: ECDH P-256 + HKDF-SHA256 +
//     AES-256-GCM over an ISO 9564-1 format 4 PIN field, which a browser
//     builds with WebCrypto), see docs/cards-data.md;
//   - wrong PIN entries are counted; three block the PIN; an unblock is
//     allowed once per rolling seven days (the PIN state machine is the one
//     table pinTransitions);
//   - the hosted reveal and PIN pages are reached through signed,
//     short-lived, single-use URLs (HMAC-SHA256; the id of each URL is burned
//     in the store on first use);
//   - tokenization returns a provisioning payload encrypted to the wallet
//     provider's public key with HPKE (RFC 9180), fresh for every request.
//
// Every key (card verification, PIN verification, URL signing, PIN
// transport) is a server secret kept in the database sealed under the key
// ring (store.DB.ServerSecret), so a copy of the database alone opens none
// of them.
package carddata
