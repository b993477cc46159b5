package id

// Resource type prefixes of the external accounts capability.
const (
	ExternalAccount = "ExternalAccount"
	// OwnershipChallenge identifies an external account's ownership
	// verification challenge (kept internally; the API never shows it).
	OwnershipChallenge = "OwnershipChallenge"
)
