package apierr

import "net/http"

// Signed-retry codes beyond Part B's list: a Request-Id whose request
// expired, and one whose request already completed (burned). Both are 401,
// as the spec wants for a retry that no pending challenge matches.
const (
	CodeRequestExpired          = "REQUEST_EXPIRED"
	CodeRequestAlreadyCompleted = "REQUEST_ALREADY_COMPLETED"
)

func init() {
	register(http.StatusUnauthorized, CodeRequestExpired, CodeRequestAlreadyCompleted)
}
