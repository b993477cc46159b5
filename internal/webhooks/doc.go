// Package webhooks delivers events to each platform's webhook endpoint and
// serves the events API.
//
// Every event is queued by events.Emit in the transaction of the change that
// causes it (a webhook_deliveries row). Runner workers, on every node, lease
// due rows (one claim for all free workers), sign and POST the stored
// envelope outside any transaction, and hand the attempt to a recorder that
// writes those of the last few milliseconds in one transaction; a 2xx ends
// the delivery, anything else schedules a retry with exponential backoff and
// jitter for about three days (Backoff), honouring Retry-After. A node that
// dies leaves a lease that expires; the attempt is then made again with the
// same webhook-id, so a receiver sees every event at least once and can drop
// repeats by id.
//
// Deliveries carry the Standard Webhooks headers, signed with the tenant's
// secrets (two during a rotation), and X-Service-Signature, signed with the
// installation's P-256 key (package signing). Production endpoints must be
// https; which addresses endpoints may reach is the installation's
// Addresses setting, judged by a Guard when an endpoint is configured and
// again on the address every attempt dials.
//
// docs/architecture-webhooks.md explains the design and its trade-offs.
package webhooks
