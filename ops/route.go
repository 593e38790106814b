package ops

import (
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
)

// ParseRef parses s as an arca:// ref (see package ref). Every failure is
// bad_request.
func ParseRef(s string) (ref.Ref, error) {
	r, err := ref.Parse(s)
	if err != nil {
		return ref.Ref{}, &Error{Code: manifest.BadRequest, Msg: err.Error(), Err: err}
	}
	return r, nil
}

// scheme starts every ref.
const scheme = ref.Scheme
