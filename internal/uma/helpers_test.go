package uma

import (
	"encoding/pem"
	"errors"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func pemOf(der []byte) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
