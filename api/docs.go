package api

// docsHTML is replaced by the real renderer.
func docsHTML() []byte {
	return []byte("<!doctype html><title>paymentsd API</title><p>See <a href=\"/openapi.yaml\">openapi.yaml</a>.")
}
