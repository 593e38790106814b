package ops

import (
	"unicode"
	"unicode/utf8"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// validate checks the fields every door shares: which fields the op takes,
// and each field's cap and shape. Messages name the field and the cap.
func validate(req Request) error {
	op, ok := manifest.Op(req.Op)
	if !ok {
		return Errorf(manifest.UnknownOp, "unknown op %q", req.Op)
	}
	needsRef, needsValue := op.TakesRef, op.TakesValue
	switch {
	case needsRef && req.Ref == "":
		return Errorf(manifest.BadRequest, "%s needs a ref", req.Op)
	case !needsRef && req.Ref != "":
		return Errorf(manifest.BadRequest, "%s takes no ref", req.Op)
	case !needsValue && req.Value.Len() > 0:
		return Errorf(manifest.BadRequest, "%s takes no value", req.Op)
	case needsValue:
		if err := validateValue(req.Value); err != nil {
			return err
		}
	}
	switch {
	case len(req.Env) > manifest.MaxSegment:
		return Errorf(manifest.BadRequest, "env is longer than %d bytes", manifest.MaxSegment)
	case len(req.Attestation) > manifest.MaxAttestation:
		return Errorf(manifest.BadRequest, "attestation is larger than %d bytes", manifest.MaxAttestation)
	}
	return validateActor(req.Actor)
}

// validateValue checks a value to be stored: at least one byte, at most
// manifest.MaxValue, UTF-8.
func validateValue(v vault.Secret) error {
	switch {
	case v.Len() == 0:
		return Errorf(manifest.BadRequest, "value is empty (a secret needs at least one byte)")
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

func validateActor(a string) error {
	if len(a) > manifest.MaxActor {
		return Errorf(manifest.BadRequest, "actor is longer than %d bytes", manifest.MaxActor)
	}
	if !utf8.ValidString(a) {
		return Errorf(manifest.BadRequest, "actor is not valid UTF-8")
	}
	for _, r := range a {
		if unicode.IsControl(r) {
			return Errorf(manifest.BadRequest, "actor contains a control character")
		}
	}
	return nil
}
