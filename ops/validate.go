package ops

import (
	"unicode"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// validate checks req as op, once for every door: the fields op needs and
// refuses (its row says which), then each field's cap and shape. Messages
// name the field and the cap.
func validate(op manifest.OpSpec, req *Request) error {
	if err := req.FieldsError(op); err != nil {
		return err
	}
	if req.Sent()&manifest.FieldValue != 0 {
		if err := validateValue(req.Value); err != nil {
			return err
		}
	}
	if err := validateVersions(req); err != nil {
		return err
	}
	switch {
	case len(req.Env) > manifest.MaxSegment:
		return Errorf(manifest.BadRequest, "env is longer than %d bytes", manifest.MaxSegment)
	case len(req.Attestation) > manifest.MaxAttestation:
		return Errorf(manifest.BadRequest, "attestation is larger than %d bytes", manifest.MaxAttestation)
	case req.Sent()&manifest.FieldApproval != 0 && !validID(req.Approval, "ap_"):
		return Errorf(manifest.BadRequest, badApprovalID)
	}
	if err := validateActor(req.Actor); err != nil {
		return err
	}
	return validateClaim("client name", req.Client)
}

// FieldsError says what is wrong with the fields r sends for op: a field
// op needs and r lacks, then one op refuses, then one it needs that r
// sends empty; nil when nothing is.
func (r *Request) FieldsError(op manifest.OpSpec) error {
	filled := r.filled()
	sent := r.sent | filled
	if missing := op.Needs &^ sent; missing != 0 {
		return Errorf(manifest.BadRequest, "%s needs field %q", op.Name, firstField(missing))
	}
	if refused := sent &^ op.Takes(); refused != 0 {
		return Errorf(manifest.BadRequest, "%s takes no field %q", op.Name, firstField(refused))
	}
	// scrub's text may be empty: the last chunk of a stream often is.
	if empty := op.Needs &^ filled &^ manifest.FieldText; empty != 0 {
		if empty&manifest.FieldValue != 0 {
			return Errorf(manifest.BadRequest, emptyValue)
		}
		return Errorf(manifest.BadRequest, "%s is empty", firstField(empty))
	}
	return nil
}

// firstField names the first field of s, in the order of the field table.
func firstField(s manifest.FieldSet) string { return s.Names()[0] }

// emptyValue is what an empty value to be stored is told.
const emptyValue = "value is empty (a secret needs at least one byte)"

// validateValue checks a value to be stored: at least one byte, at most
// manifest.MaxValue, UTF-8.
func validateValue(v vault.Secret) error {
	switch {
	case v.Len() == 0:
		return Errorf(manifest.BadRequest, emptyValue)
	case v.Len() > manifest.MaxValue:
		return Errorf(manifest.BadRequest, "value is larger than %d bytes", manifest.MaxValue)
	case !utf8.Valid(v.Reveal()):
		return Errorf(manifest.BadRequest, "value is not valid UTF-8")
	}
	return nil
}

// ValidActor reports whether a is an actor claim arca records: at most 256
// bytes of UTF-8 without control characters.
func ValidActor(a string) bool { return validateActor(a) == nil }

func validateActor(a string) error { return validateClaim("actor", a) }

// validateClaim checks a claim recorded as said (the actor, an MCP
// client's name): at most 256 bytes of UTF-8 without control characters.
func validateClaim(what, a string) error {
	if len(a) > manifest.MaxActor {
		return Errorf(manifest.BadRequest, "%s is longer than %d bytes", what, manifest.MaxActor)
	}
	if !utf8.ValidString(a) {
		return Errorf(manifest.BadRequest, "%s is not valid UTF-8", what)
	}
	for _, r := range a {
		if unicode.IsControl(r) {
			return Errorf(manifest.BadRequest, "%s contains a control character", what)
		}
	}
	return nil
}
