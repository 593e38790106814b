package vault

import (
	"context"
	"errors"

	"filippo.io/age"
)

// Keyed is a Store whose data key can be wrapped to other recipients and
// replaced: how a team adds and removes people.
type Keyed interface {
	// Recipients lists the age recipients the data key is wrapped to.
	Recipients(ctx context.Context) ([]string, error)
	// SetRecipients wraps the same data key to rs instead, if the
	// recipients are still from (what the caller read): a change made in
	// between is never overwritten. Whoever could unwrap the key before and
	// kept it can still read the records: removing a recipient is finished
	// by Rekey.
	SetRecipients(ctx context.Context, from []string, rs []age.Recipient) error
	// Rekey replaces the data key and vault id and re-seals every record,
	// in one consistent pass. It returns how many records it re-sealed.
	Rekey(ctx context.Context) (int, error)
}

// ErrRecipientsChanged is a recipients change made from a list that is no
// longer the vault's.
var ErrRecipientsChanged = errors.New("its recipients changed since they were read; nothing was changed: run it again")

// ErrUnknownOutcome is a change whose commit was sent but whose answer
// never came: it may or may not have landed.
var ErrUnknownOutcome = errors.New("the cluster did not confirm the change; it may have landed (read it back)")
