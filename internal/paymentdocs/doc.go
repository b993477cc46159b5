// Package paymentdocs keeps the documents that support a payout which needs
// them (Part B "Payment documents", R-PDOC-*): a CNY bank transfer to an
// external account whose beneficiary is a business.
//
// # Resource
//
// POST /payment-documents stores one PDF, JPEG or PNG file (format read from
// its contents, 1 to 8,000,000 bytes) with a documentType and an optional
// customerId; the document is UPLOADED and usable until expiresAt, 24 hours
// later. Attaching it to a quote makes it ATTACHED (with quoteId and
// attachedAt); it is usable on one quote only. Its file is deleted once
// attached; the metadata stays readable with GET.
//
// # What the quote service calls
//
// Before its transaction, with the request's destination and context:
//
//	paymentdocs.ValidateDocumentIDs(currency, kind, beneficiaryType, ids) // 400: wrong destination, >3, repeats
//	paymentdocs.RequireIdempotencyKey(ctx, ids)                           // 400: documentIds need the header
//
// Inside its transaction, when RequiresDocuments(currency, kind,
// beneficiaryType):
//
//	svc.AttachRequired(ctx, tx, tenant, paymentdocs.Payout{QuoteID, Purpose, SenderCustomerID, DocumentIDs}, now)
//
// which checks the purpose against the table (400 INVALID_INPUT), the ids
// (404), the requirements (400 DOCUMENTS_REQUIRED with
// details.missingRequirements) and then attaches (409, 410, 424). Attach
// alone, and the pure Check, AllowedPurposes and Requirements, are there for
// callers that need the steps separately. After the transaction commits:
//
//	svc.ReleaseFiles(ctx, tenant, ids) // optional: deletes the files now instead of at the next sweep
//
// The quote route must be idempotent (Idempotency-Key honoured) and record
// its response inside the same transaction (idempotency.Record). The HTTP
// layer then replays 400 and 404 answers to a retry with the same key and
// runs 409, 410 and 424 again (R-IDEM-11, R-IDEM-12).
//
// # Files and the sweeper
//
// A row is the durable marker of its file. An upload writes the row PENDING,
// then the file, then makes the row UPLOADED; a failure or a crash in
// between is cleaned up (at once, or by the sweeper after PendingTimeout).
// Attaching only changes rows inside the quote's transaction, so a rollback
// keeps every file; the file of an ATTACHED row is deleted after commit, by
// ReleaseFiles or by Sweep. Sweep also deletes the files of documents that
// expired more than ExpiredFileGrace ago without being attached.
// RunMaintenance runs Sweep every minute; the server starts it once per
// node (httpapi.Server.RunPaymentDocumentWork).
//
// # Sandbox
//
// In the sandbox environment, attaching a document whose fileName contains
// "attachment-failed" (any case) fails with 424
// PAYMENT_DOCUMENT_ATTACHMENT_FAILED and changes nothing; see
// SandboxAttachmentFailureMarker.
package paymentdocs
