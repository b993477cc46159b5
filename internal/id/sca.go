package id

// Resource type prefixes of strong customer authentication (package sca).
const (
	// ScaChallenge is a challenge a quote carries until it is authorized.
	ScaChallenge = "ScaChallenge"
	// ScaFactor is an enrolled factor's credentialId.
	ScaFactor = "ScaFactor"
	// ScaReset is a factor reset (POST /sca/factors/reset).
	ScaReset = "ScaReset"
	// ScaLogin is an SMS_OTP login challenge (POST /sca/login/start).
	ScaLogin = "ScaLogin"
	// ScaDecision is one stored SCA decision (audit).
	ScaDecision = "ScaDecision"
)
