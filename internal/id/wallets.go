package id

// Resource type prefixes of embedded wallets: credentials (AuthMethod),
// sessions, signed-retry requests and delegated keys.
const (
	AuthMethod   = "AuthMethod"
	Session      = "Session"
	Request      = "Request"
	DelegatedKey = "DelegatedKey"
	// SandboxMessage is an email or SMS the sandbox recorded instead of
	// sending.
	SandboxMessage = "SandboxMessage"
)
