package pdp

import (
	"bytes"
	"encoding/json"
	"slices"
)

// AuthZEN 1.0 access evaluation (api authzen). The request maps arca's:
//
//	{"subject":  {"type":"actor","id":<actor>,"properties":{"attestation":<attestation>}},
//	 "action":   {"name":<op>},
//	 "resource": {"type":"secret","id":<ns/name>,"properties":{"env":<env>}}}
//
// A use (http, exec) adds the use object to the action's properties:
// "use_kind" (service or action), "use_name", "via", and for a service
// "method" and "path".
//
// subject.id is "" when the request claims no actor, and properties is
// left out without an attestation. list and check name no secret: their
// resource is {"type":"env","id":<env>,"properties":{"env":<env>}}. The
// request's context carries supported_obligations, the arca: obligations
// the caller enforces, when it lists any.
//
// The response is {"decision": <boolean>, "context": {…}}; decision is
// required and must be a JSON boolean. From context, when present (it must
// be an object):
//
//   - reason, a string, is the verdict's reason;
//   - failing that, reason_user — AuthZEN's Reason Field, an object of
//     strings keyed by language — gives the reason: its "en" entry, else the
//     entry of the first key in byte order. reason_admin is never used: the
//     specification says it must not reach the user, and a verdict's reason
//     reaches the client;
//   - obligations, an array, are the verdict's obligations. Each is a
//     string, taken as it is, or an object {"type": T, "properties": P}
//     (azObligation): T, a string, alone when P is absent or {}; "T=V"
//     when P is {"value": V} with V a string or a number; else "T=" and
//     P as compact JSON.
//
// Any of these of another type makes the response unusable. Other keys of
// the response and of context are ignored; decision, context, reason,
// reason_user or obligations given twice is refused.

type azEntity struct {
	Type       string            `json:"type"`
	ID         string            `json:"id"`
	Properties map[string]string `json:"properties,omitempty"`
}

type azAction struct {
	Name       string            `json:"name"`
	Properties map[string]string `json:"properties,omitempty"`
}

type azRequest struct {
	Subject  azEntity   `json:"subject"`
	Action   azAction   `json:"action"`
	Resource azEntity   `json:"resource"`
	Context  *azContext `json:"context,omitempty"`
}

type azContext struct {
	SupportedObligations []string  `json:"supported_obligations,omitempty"`
	Grant                *Grant    `json:"grant,omitempty"`
	Approval             *Approval `json:"approval,omitempty"`
}

func encodeAuthZEN(req Request) ([]byte, error) {
	r := azRequest{
		Subject:  azEntity{Type: "actor", ID: req.Actor},
		Action:   azAction{Name: req.Op},
		Resource: azEntity{Type: "secret", ID: req.Ref, Properties: map[string]string{"env": req.Env}},
	}
	if req.Attestation != "" || req.Client != "" {
		r.Subject.Properties = map[string]string{}
		if req.Attestation != "" {
			r.Subject.Properties["attestation"] = req.Attestation
		}
		if req.Client != "" {
			r.Subject.Properties["client"] = req.Client
		}
	}
	if req.Ref == "" {
		r.Resource.Type, r.Resource.ID = "env", req.Env
	}
	if len(req.SupportedObligations) > 0 || req.Grant != nil || req.Approval != nil {
		r.Context = &azContext{SupportedObligations: req.SupportedObligations, Grant: req.Grant, Approval: req.Approval}
	}
	if u := req.Use; u != nil {
		r.Action.Properties = map[string]string{"use_kind": u.Kind, "use_name": u.Name, "via": u.Via}
		if u.Method != "" {
			r.Action.Properties["method"], r.Action.Properties["path"] = u.Method, u.Path
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, unreachable("cannot encode request")
	}
	return buf.Bytes(), nil
}

func parseAuthZEN(b []byte) (Verdict, string) {
	m, why := members(b, "authzen response", "decision", "context")
	if why != "" {
		return Verdict{}, why
	}
	var v Verdict
	switch string(m[0]) {
	case "true":
		v.Allow = true
	case "false":
	default:
		return Verdict{}, "authzen response has no boolean decision"
	}
	if m[1] == nil {
		return v, ""
	}
	if m[1][0] != '{' {
		return Verdict{}, "authzen context is not a JSON object"
	}
	c, why := objectMembers(m[1], "authzen context", []string{"reason", "reason_user", "obligations"})
	if why != "" {
		return Verdict{}, why
	}
	if v.Reason, why = azReason(c[0], c[1]); why != "" {
		return Verdict{}, why
	}
	if c[2] != nil {
		obs, ok := azObligations(c[2])
		if !ok {
			return Verdict{}, "authzen context obligations is not an array of strings and obligation objects"
		}
		v.Obligations = obs
	}
	return v, ""
}

// azReason is the verdict's reason from context's reason or reason_user.
func azReason(reason, reasonUser json.RawMessage) (string, string) {
	if reason != nil {
		s, ok := jsonString(reason)
		if !ok {
			return "", "authzen context reason is not a string"
		}
		return s, ""
	}
	if reasonUser == nil {
		return "", ""
	}
	var field map[string]json.RawMessage
	if reasonUser[0] != '{' || json.Unmarshal(reasonUser, &field) != nil {
		return "", "authzen context reason_user is not an object of strings"
	}
	texts := make(map[string]string, len(field))
	for k, raw := range field {
		s, ok := jsonString(raw)
		if !ok {
			return "", "authzen context reason_user is not an object of strings"
		}
		texts[k] = s
	}
	if s, ok := texts["en"]; ok {
		return s, ""
	}
	keys := make([]string, 0, len(texts))
	for k := range texts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		return "", ""
	}
	return texts[keys[0]], ""
}

// azObligations decodes raw only if it is an array whose every element is
// a string or an obligation object (azObligation). An empty array gives nil.
func azObligations(raw json.RawMessage) ([]string, bool) {
	return jsonArray(raw, func(e json.RawMessage) (string, bool) {
		if s, ok := jsonString(e); ok {
			return s, true
		}
		return azObligation(e)
	})
}

// azObligation maps an obligation object {"type": T, "properties": P} to
// the string arca reads: T when P is absent or {}, "T=V" when P is
// {"value": V} with V a string or a number (its JSON text), else "T="
// followed by P as compact JSON. type is required and must be a string;
// properties, when present, an object; other keys are ignored.
func azObligation(raw json.RawMessage) (string, bool) {
	if raw[0] != '{' {
		return "", false
	}
	m, why := objectMembers(raw, "authzen obligation", []string{"type", "properties"})
	if why != "" {
		return "", false
	}
	typ, ok := jsonString(m[0])
	if !ok {
		return "", false
	}
	if m[1] == nil {
		return typ, true
	}
	var props map[string]json.RawMessage
	if m[1][0] != '{' || json.Unmarshal(m[1], &props) != nil {
		return "", false
	}
	if len(props) == 0 {
		return typ, true
	}
	if v, one := props["value"]; one && len(props) == 1 {
		if s, ok := jsonString(v); ok {
			return typ + "=" + s, true
		}
		if v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
			return typ + "=" + string(v), true
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, m[1]) != nil {
		return "", false
	}
	return typ + "=" + buf.String(), true
}
