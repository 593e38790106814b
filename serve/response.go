package serve

import (
	"errors"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
)

var errBroken = errors.New("the audit wire (stderr) failed")

func appendID(b, id []byte) []byte {
	if len(id) == 0 {
		return append(b, "null"...)
	}
	return append(b, id...)
}

// appendError appends an error response.
func appendError(b, id []byte, code, msg string) []byte {
	return appendErrorPolicy(b, id, code, msg, nil)
}

// appendErrorPolicy appends an error response with the verdict, if any, of
// the policy decision point consulted for it.
func appendErrorPolicy(b, id []byte, code, msg string, p *audit.Policy) []byte {
	return appendErrorDetails(b, id, code, msg, "", p)
}

// appendErrorDetails appends an error response with its details (the
// cause of an upstream_failed; none when cause is "") and the verdict,
// if any.
func appendErrorDetails(b, id []byte, code, msg, cause string, p *audit.Policy) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, id)
	b = append(b, `,"ok":false,"error":{"code":`...)
	b = jsonstr.Append(b, code)
	b = append(b, `,"message":`...)
	b = jsonstr.Append(b, msg)
	if cause != "" {
		b = append(b, `,"details":{"cause":`...)
		b = append(jsonstr.Append(b, cause), '}')
	}
	b = append(b, '}')
	return append(appendPolicy(b, p), '}')
}

// appendOK appends a success response around an encoded result.
func appendOK(b, id, result []byte, p *audit.Policy) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, id)
	b = append(b, `,"ok":true,"result":`...)
	b = append(b, result...)
	return append(appendPolicy(b, p), '}')
}

// appendPolicy appends `,"policy":{…}` when the PDP was consulted.
func appendPolicy(b []byte, p *audit.Policy) []byte {
	if p == nil {
		return b
	}
	return audit.AppendPolicy(append(b, `,"policy":`...), p)
}
