package serve

import (
	"encoding/json"
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
	b = append(b, `{"id":`...)
	b = appendID(b, id)
	b = append(b, `,"ok":false,"error":{"code":`...)
	b = jsonstr.Append(b, code)
	b = append(b, `,"message":`...)
	b = jsonstr.Append(b, msg)
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

// AppendGet encodes a get result as the result.get schema says. This is
// the one place a value is encoded as JSON: for serve's wire, and for
// `arca get --json`.
func AppendGet(b []byte, r *ops.GetResult) []byte {
	b = append(b, `{"ref":`...)
	b = jsonstr.Append(b, r.Ref)
	b = append(b, `,"env":`...)
	b = jsonstr.Append(b, r.Env)
	b = append(b, `,"value":`...)
	b = jsonstr.Append(b, r.Value.Reveal())
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, r.Version, 10)
	b = append(b, `,"created_at":"`...)
	b = audit.AppendTime(b, r.CreatedAt.Time)
	b = append(b, `","updated_at":"`...)
	b = audit.AppendTime(b, r.UpdatedAt.Time)
	b = append(b, '"')
	if !r.RotatedAt.IsZero() {
		b = append(b, `,"rotated_at":"`...)
		b = audit.AppendTime(b, r.RotatedAt.Time)
		b = append(b, '"')
	}
	return append(b, '}')
}

// marshalResult encodes any other result; they hold no value.
func marshalResult(v any) ([]byte, error) { return json.Marshal(v) }
