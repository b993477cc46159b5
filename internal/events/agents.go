package events

// Agent actions (issue 22): an action that waits for the platform's
// approval, and each decision on one. The reference names
// AGENT_ACTION.PENDING_APPROVAL; the decisions follow its form with the
// status the action reached.
const (
	AgentActionPendingApproval = "AGENT_ACTION.PENDING_APPROVAL"
	AgentActionApproved        = "AGENT_ACTION.APPROVED"
	AgentActionRejected        = "AGENT_ACTION.REJECTED"
	AgentActionFailed          = "AGENT_ACTION.FAILED"
)

// AgentAction is the event type of an action entering status.
func AgentAction(status string) string { return "AGENT_ACTION." + status }
