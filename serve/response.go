package serve

import (
	"errors"
	"strconv"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/internal/jsonstr"
	"github.com/arca-secrets/arca/ops"
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
	return appendErrorDetails(b, id, code, msg, details{}, p)
}

// details are an error response's details: the cause of an
// upstream_failed or of a denial, or the approval an approval_required
// names with the url of its page ("" when serve runs none), or the
// current version a conflict names.
type details struct {
	cause    string
	approval *ops.ApprovalDetails
	url      string
	current  uint64
	conflict bool
}

// appendDetails appends `,"details":{…}` when d holds anything.
func appendDetails(b []byte, d details) []byte {
	if d.cause == "" && d.approval == nil && !d.conflict {
		return b
	}
	b = append(b, `,"details":{`...)
	if d.cause != "" {
		b = append(jsonstr.Append(append(b, `"cause":`...), d.cause), ',')
	}
	if a := d.approval; a != nil {
		b = append(b, `"approval":{"id":`...)
		b = jsonstr.Append(b, a.ID)
		b = jsonstr.Append(append(b, `,"summary":`...), a.Summary)
		b = jsonstr.Append(append(b, `,"fingerprint":`...), a.Fingerprint)
		b = append(audit.AppendTime(append(b, `,"expires_at":"`...), a.ExpiresAt), '"')
		if d.url != "" {
			b = jsonstr.Append(append(b, `,"url":`...), d.url)
		}
		b = append(b, '}', ',')
	}
	if d.conflict {
		b = append(strconv.AppendUint(append(b, `"current_version":`...), d.current, 10), ',')
	}
	b[len(b)-1] = '}'
	return b
}

// appendErrorDetails appends an error response with its details, if
// any, and the verdict, if any.
func appendErrorDetails(b, id []byte, code, msg string, d details, p *audit.Policy) []byte {
	b = append(b, `{"id":`...)
	b = appendID(b, id)
	b = append(b, `,"ok":false,"error":{"code":`...)
	b = jsonstr.Append(b, code)
	b = append(b, `,"message":`...)
	b = jsonstr.Append(b, msg)
	b = append(appendDetails(b, d), '}')
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
