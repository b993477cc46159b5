package id

// Resource type prefixes of stablecoin issuance.
const (
	StablecoinProviderAccount = "StablecoinProviderAccount"
	Stablecoin                = "Stablecoin"
	StablecoinOperation       = "StablecoinOperation"
)
