package vault

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

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

// errRecipientsChanged is a recipients change made from a list that is no
// longer the vault's.
var errRecipientsChanged = errors.New("its recipients changed since they were read; nothing was changed: run it again")

// parseRecipients parses the recipients a header lists.
func parseRecipients(rs []string) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(rs))
	for _, s := range rs {
		r, err := age.ParseX25519Recipient(s)
		if err != nil {
			return nil, fmt.Errorf("recipient %q is not an age X25519 public key", s)
		}
		out = append(out, r)
	}
	return out, nil
}

// newHeader is a header of format for keys k, the data key wrapped to rs
// and a MAC over format, vault id and recipients.
func newHeader(format string, k *keys, rs []age.Recipient) (header, error) {
	if len(rs) == 0 {
		return header{}, fmt.Errorf("a vault needs at least one recipient")
	}
	wrapped, err := wrapKey(k.dataKey, rs)
	if err != nil {
		return header{}, fmt.Errorf("wrap data key: %w", err)
	}
	// The bound every read checks, checked before writing: a header over
	// it would leave a vault no one can open.
	if len(wrapped) > maxWrapped {
		return header{}, fmt.Errorf("%d recipients are too many: the wrapped data key would be larger than %d bytes", len(rs), maxWrapped)
	}
	h := header{Format: format, VaultID: hex.EncodeToString(k.vaultID), DataKey: wrapped}
	for _, r := range rs {
		h.Recipients = append(h.Recipients, fmt.Sprint(r))
	}
	h.MAC = k.headerMAC(h.Format, h.Recipients)
	return h, nil
}
