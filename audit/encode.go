package audit

import (
	"strconv"
	"time"

	"github.com/arca-secrets/arca/internal/jsonstr"
)

// appendEvent appends e as one JSON object, fields in declaration order,
// empty optional fields omitted: what encoding/json would write, without
// reflection on the hot path. The order is part of the trail's layout
// (the chain hashes the exact line): v, ts, seq, event, op, outcome, id,
// actor, client, attestation_sha256, env, ref, version, code, message,
// policy, grant, approval, the use's fields, user, host, then source and,
// last, prev, where trail's verifier looks for them. A new field goes
// before user.
//
// A zero TS is written as stamp, formatted straight into b by st; prev,
// when not nil, is written as the link (hex) in place of e.Prev.
func appendEvent(b []byte, e *Event, st *stamper, stamp time.Time, prev []byte) []byte {
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(e.V), 10)
	if e.TS == "" && !stamp.IsZero() {
		b = append(b, `,"ts":"`...)
		b = append(st.append(b, stamp), '"')
	} else {
		b = appendField(b, "ts", e.TS, true)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = appendField(b, "event", e.Event, true)
	b = appendField(b, "op", e.Op, false)
	b = appendField(b, "outcome", e.Outcome, false)
	if len(e.ID) > 0 {
		b = append(append(b, `,"id":`...), e.ID...)
	}
	b = appendField(b, "actor", e.Actor, false)
	b = appendField(b, "client", e.Client, false)
	b = appendField(b, "attestation_sha256", e.AttestationSHA256, false)
	b = appendField(b, "env", e.Env, false)
	b = appendField(b, "ref", e.Ref, false)
	if e.Version != 0 {
		b = append(b, `,"version":`...)
		b = strconv.AppendUint(b, e.Version, 10)
	}
	b = appendField(b, "code", e.Code, false)
	b = appendField(b, "message", e.Message, false)
	if e.Policy != nil {
		b = append(b, `,"policy":`...)
		b = AppendPolicy(b, e.Policy)
	}
	b = appendField(b, "grant", e.Grant, false)
	if e.Approval != nil {
		b = appendApproval(b, e.Approval)
	}
	if e.Use != nil {
		b = appendUse(b, e.Use)
	}
	b = appendField(b, "user", e.User, false)
	b = appendField(b, "host", e.Host, false)
	b = appendField(b, "source", e.Source, true)
	if prev != nil {
		b = append(append(append(b, `,"prev":"`...), prev...), '"')
	} else {
		b = appendField(b, "prev", e.Prev, false)
	}
	return append(b, '}')
}

// AppendPolicy appends a verdict as a JSON object.
func AppendPolicy(b []byte, p *Policy) []byte {
	b = append(b, `{"allow":`...)
	b = strconv.AppendBool(b, p.Allow)
	b = appendField(b, "reason", p.Reason, false)
	if len(p.Obligations) > 0 {
		b = append(b, `,"obligations":[`...)
		for i, o := range p.Obligations {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, o)
		}
		b = append(b, ']')
	}
	if p.Degraded {
		b = append(b, `,"degraded":true`...)
	}
	return append(b, '}')
}

func appendField(b []byte, name, v string, always bool) []byte {
	if v == "" && !always {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonstr.Append(b, v)
}

// appendUse appends the fields of a use's event, as encoding/json would
// write the embedded Use.
func appendUse(b []byte, u *Use) []byte {
	b = appendField(b, "service", u.Service, false)
	b = appendField(b, "action", u.Action, false)
	b = appendField(b, "method", u.Method, false)
	b = appendField(b, "path", u.Path, false)
	b = appendField(b, "via", u.Via, false)
	if u.Status != 0 {
		b = strconv.AppendInt(append(b, `,"status":`...), int64(u.Status), 10)
	}
	if u.ExitCode != nil {
		b = strconv.AppendInt(append(b, `,"exit_code":`...), int64(*u.ExitCode), 10)
	}
	b = appendField(b, "cause", u.Cause, false)
	b = strconv.AppendInt(append(b, `,"bytes_in":`...), u.BytesIn, 10)
	b = strconv.AppendInt(append(b, `,"bytes_out":`...), u.BytesOut, 10)
	b = strconv.AppendInt(append(b, `,"elapsed_ms":`...), u.ElapsedMS, 10)
	return strconv.AppendInt(append(b, `,"redactions":`...), int64(u.Redactions), 10)
}

// appendApproval appends an event's approval object, as encoding/json
// would write it.
func appendApproval(b []byte, a *Approval) []byte {
	b = append(b, `,"approval":{"id":`...)
	b = jsonstr.Append(b, a.ID)
	b = appendField(b, "fingerprint", a.Fingerprint, false)
	b = appendField(b, "decision", a.Decision, false)
	b = appendField(b, "approver", a.Approver, false)
	b = appendField(b, "via", a.Via, false)
	if a.Uses != 0 {
		b = strconv.AppendInt(append(b, `,"uses":`...), int64(a.Uses), 10)
	}
	if a.TTLS != 0 {
		b = strconv.AppendInt(append(b, `,"ttl_s":`...), int64(a.TTLS), 10)
	}
	return append(b, '}')
}
