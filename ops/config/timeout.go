package config

import "fmt"

// Every timeout_ms key (a [vaults.NAME] table of kind etcd, [serve.pdp])
// follows one rule: omitted, it is DefaultTimeoutMS; given, it must be 1 to
// MaxTimeoutMS. An explicit 0 is refused like any other value out of range,
// so that no one writes 0 believing it means "no timeout" or "the default".
// A Config from Load or Parse holds every timeout resolved.
const (
	DefaultTimeoutMS = 5000
	MaxTimeoutMS     = 600_000
)

// timeoutMS is a decoded timeout_ms resolved: DefaultTimeoutMS when omitted
// (nil).
func timeoutMS(ms *int) int {
	if ms == nil {
		return DefaultTimeoutMS
	}
	return *ms
}

// timeoutProblem describes, starting with key, what makes a decoded
// timeout_ms invalid, or returns "". Omitted (nil) is valid.
func timeoutProblem(key string, ms *int) string {
	if ms == nil || 1 <= *ms && *ms <= MaxTimeoutMS {
		return ""
	}
	return fmt.Sprintf("%s is %d, must be 1..%d (unset: %d)", key, *ms, MaxTimeoutMS, DefaultTimeoutMS)
}
