package customers

import "slices"

// ProviderRule is what the provider serving a customer requires. Which
// provider serves a customer follows from the customer's region and
// currencies (the spec leaves the mapping to the service):
//
//   - EEA: customers whose region is a European Economic Area country, or
//     who use EUR. The provider verifies email and phone with one-time codes
//     before KYC begins (R-CONTACT-02, R-CONTACT-06), so both are required,
//     and it opens accounts in the customer's own name ("direct
//     customer-owned accounts"), so a business needs businessInfo.taxId and
//     businessInfo.incorporatedOn (R-CUST-08).
//   - default: every other customer. No contact verification (verify-email
//     and verify-phone answer 409), no direct accounts.
type ProviderRule struct {
	Name            string
	VerifiesContact bool
	DirectAccounts  bool
}

// Provider rules.
var (
	ProviderDefault = ProviderRule{Name: "default"}
	ProviderEEA     = ProviderRule{Name: "EEA", VerifiesContact: true, DirectAccounts: true}
)

// ProviderRuleFor returns the rule of the provider serving a customer with
// profile p.
func ProviderRuleFor(p Profile) ProviderRule {
	if (p.Region != nil && eea[*p.Region]) || slices.Contains(p.Currencies, "EUR") {
		return ProviderEEA
	}
	return ProviderDefault
}
