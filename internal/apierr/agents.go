package apierr

import "net/http"

// Agent purchase-card preconditions beyond Part B's list (R-AGENT-38, whose
// status the spec does not state): the agent's policy is not in USD, or the
// agent holds no ACTIVE delegated key. Both are states of the agent that
// the platform or customer must change first, so 409.
const (
	CodeAgentPolicyNotUSD        = "AGENT_POLICY_CURRENCY_NOT_USD"
	CodeAgentDelegatedKeyMissing = "AGENT_DELEGATED_KEY_REQUIRED"
)

func init() {
	register(http.StatusConflict, CodeAgentPolicyNotUSD, CodeAgentDelegatedKeyMissing)
}
