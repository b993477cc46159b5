// Package signing signs outgoing webhook deliveries and verifies them.
//
// Every delivery carries two independent signatures:
//
//   - Standard Webhooks (https://www.standardwebhooks.com, spec v1.0.0):
//     the headers webhook-id, webhook-timestamp and webhook-signature, where
//     webhook-signature is a space-separated list of "v1,<base64 HMAC-SHA256>"
//     entries over "{webhook-id}.{webhook-timestamp}.{body}", one entry per
//     active endpoint secret ("whsec_" + base64 of the key bytes). See
//     standard.go: Secret, Sign, Verify.
//
//   - X-Service-Signature: {"v":"1","s":"<base64>"}, a P-256 ECDSA signature
//     over SHA-256 of the raw body, made with the service key whose public half
//     the API publishes. See ecdsa.go: SignBody, VerifyBody.
//
// Verifier checks both at once; tests that receive deliveries use it.
// docs/webhook-signatures.md describes verification for receivers.
package signing
