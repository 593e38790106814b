package ops

import (
	"strings"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops/ref"
)

// Withhold records that a value Get returned goes no further: its get was
// audited ok, and this second event, an error for the same env and ref,
// carries err's code and message. It returns err, or the failure to write
// the event. Unlike Change.Fail, its event is an error whatever err's code:
// the get it follows was let through.
func (s *Service) Withhold(res GetResult, err *Error) error {
	ev := audit.Event{Event: "error", Op: "get", Outcome: outcomeOf(err.Code), Env: res.Env,
		Ref: strings.TrimPrefix(res.Ref, ref.Scheme), Code: string(err.Code), Message: err.Msg}
	if werr := s.write(ev); werr != nil {
		return werr
	}
	return err
}
