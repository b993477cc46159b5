package signedretry

import "testing"

// The worked example of docs/wallet-signatures.md parses and verifies.
func TestDocWorkedExample(t *testing.T) {
	const payload = `{"operation":"SESSION_REVOKE","requestId":"Request:019abf00-0000-7000-8000-000000000001","accountId":"InternalAccount:019abf00-0000-7000-8000-000000000002","parameters":{"sessionId":"Session:019abf00-0000-7000-8000-000000000003"},"bodySha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","timestampMs":"1764115200000"}`
	const header = "eyJwdWJsaWNLZXkiOiIwMzYwZmVkNGJhMjU1YTlkMzFjOTYxZWI3NGM2MzU2ZDY4YzA0OWI4OTIzYjYxZmE2Y2U2Njk2MjJlNjBmMjlmYjYiLCJzY2hlbWUiOiJTSUdOQVRVUkVfU0NIRU1FX0FQSV9QMjU2Iiwic2lnbmF0dXJlIjoiMzA0NDAyMjAwMjZhYjA5ZDM0NTgyNDQ4OTliZmEyOGJkOTc3MmY1MDBlNDQ0ODFlOThlNTkwM2IyZTAxOTM3YTZjYWI4NTIzMDIyMDU2YTA3MmEyN2I2NjE3ODdmMjYzNzI0MjhlNWQ5YjVmYTA0MDU4NTdiNGVhN2RiOTJhMWI0NDM0Mzc5ZDAwY2MifQ"
	s, err := ParseStamp(header)
	if err != nil {
		t.Fatal(err)
	}
	if s.PublicKey != "0360fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6" {
		t.Fatalf("public key %s", s.PublicKey)
	}
	if !s.Verify(payload) {
		t.Fatal("the documented stamp does not verify")
	}
}
