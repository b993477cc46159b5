package id

// Prefixes of resources that delegated keys refer to, owned by the cards
// and agents capabilities.
const (
	Card              = "Card"
	CardFundingSource = "CardFundingSource"
	Agent             = "Agent"
)
