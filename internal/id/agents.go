package id

// Prefix of agent actions (R-CONV-02); Agent itself is in wallets_refs.go,
// where delegated keys first needed it.
const AgentAction = "AgentAction"

// AgentDeposit prefixes agent deposits (R-AGENT-35).
const AgentDeposit = "AgentDeposit"

// AgentCardAudit prefixes audit entries of agents' card data (R-AGENT-43).
const AgentCardAudit = "AgentCardAudit"
