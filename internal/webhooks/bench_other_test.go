//go:build !unix

package webhooks

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
