package id

// Resource type prefixes of the accounts capability: internal accounts and
// the transactions that report the money moving through them.
const (
	InternalAccount = "InternalAccount"
	Transaction     = "Transaction"
)
