package seal

import (
	"encoding/hex"
	"fmt"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault/identity"
)

// Header is what a vault stores beside its records: the data key wrapped to
// the recipients, and a MAC that binds format, vault id and recipients to
// the data key. Its JSON form is the backends' stored form; a backend that
// stores more embeds it (fields after these).
//
// Commits is the file vault's marks of its latest commits, for its changes
// cursors (vault/file); other backends leave it empty, and omitempty keeps
// their headers as they were. The MAC does not cover it: it only tells a
// cursor whether the file is still the one the cursor was given on, and
// whoever can write the file can put an older copy back anyway.
type Header struct {
	Format     string   `json:"format"`
	VaultID    string   `json:"vault_id"`
	Recipients []string `json:"recipients"`
	DataKey    []byte   `json:"data_key"`
	Commits    []string `json:"commits,omitempty"` // before the MAC, so that the header line ends in what authenticates it
	MAC        string   `json:"mac"`
}

// NewHeader is a header of format for keys k, the data key wrapped to rs
// and a MAC over format, vault id and recipients.
func NewHeader(format string, k *Keys, rs []age.Recipient) (Header, error) {
	if len(rs) == 0 {
		return Header{}, fmt.Errorf("a vault needs at least one recipient")
	}
	wrapped, err := wrap(k.dataKey, rs)
	if err != nil {
		return Header{}, fmt.Errorf("wrap data key: %w", err)
	}
	// The bound every read checks, checked before writing: a header over
	// it would leave a vault no one can open.
	if len(wrapped) > MaxWrapped {
		return Header{}, fmt.Errorf("%d recipients are too many: the wrapped data key would be larger than %d bytes", len(rs), MaxWrapped)
	}
	h := Header{Format: format, VaultID: hex.EncodeToString(k.vaultID), DataKey: wrapped}
	for _, r := range rs {
		h.Recipients = append(h.Recipients, fmt.Sprint(r))
	}
	h.MAC = k.HeaderMAC(h.Format, h.Recipients)
	return h, nil
}

// Keys unwraps the header's data key with ids and derives its keys. The
// caller has checked the vault id's form; the MAC is the caller's to check.
func (h Header) Keys(ids []age.Identity) (*Keys, error) {
	dataKey, err := unwrap(h.DataKey, ids)
	if err != nil {
		return nil, err
	}
	vaultID, err := hex.DecodeString(h.VaultID)
	if err != nil {
		return nil, fmt.Errorf("malformed vault id")
	}
	return Derive(dataKey, vaultID)
}

// ParseRecipients parses the recipients a header lists.
func ParseRecipients(rs []string) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(rs))
	for i, s := range rs {
		r, err := identity.ParseRecipient(s)
		if err != nil {
			return nil, fmt.Errorf("recipients[%d] %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}
