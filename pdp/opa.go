package pdp

import "bytes"

// encodeOPA is the body of an OPA data API request: {"input": <the request
// an exec PDP reads>}.
func encodeOPA(req Request) ([]byte, error) {
	line, err := encodeRequest(req)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 0, len(line)+len(`{"input":}`))
	body = append(body, `{"input":`...)
	body = append(body, bytes.TrimSuffix(line, []byte("\n"))...)
	return append(body, '}'), nil
}

// parseOPA takes the verdict from an OPA data API response: its "result",
// a verdict object or a bare boolean. Other keys (decision_id, metrics,
// warning) are ignored; no "result" means the policy's result is
// undefined, which is never an allow.
func parseOPA(b []byte) (Verdict, string) {
	m, why := members(b, "opa response", "result")
	if why != "" {
		return Verdict{}, why
	}
	result := m[0]
	switch {
	case result == nil:
		return Verdict{}, "opa result is undefined (the response has no result)"
	case string(result) == "true":
		return Verdict{Allow: true}, ""
	case string(result) == "false":
		return Verdict{}, ""
	case result[0] == '{':
		return parseVerdict(result)
	}
	return Verdict{}, "opa result is neither a verdict object nor a boolean"
}
