package id

// Resource type prefixes of quotes and receiver lookups.
const (
	Quote  = "Quote"
	Lookup = "Lookup"
)
