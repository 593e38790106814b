package vault

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"
)

// maxIdentityFile bounds an identity file read.
const maxIdentityFile = 64 << 10

// EnsureIdentity makes an age X25519 identity at path (mode 0600, parent
// directories 0700) unless one is there, which is kept and never replaced.
// It returns the identity's recipient and whether it was created.
func EnsureIdentity(path string, now time.Time) (recipient string, created bool, err error) {
	if ids, err := LoadIdentity(path); err == nil {
		return recipientOf(ids)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", false, fmt.Errorf("generate identity: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("identity directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create identity file: %w", err)
	}
	text := fmt.Sprintf("# created: %s\n# public key: %s\n%s\n",
		now.UTC().Format(time.RFC3339), id.Recipient(), id)
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write identity file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write identity file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("write identity file %s: %w", path, err)
	}
	return id.Recipient().String(), true, syncDir(filepath.Dir(path))
}

// LoadIdentity reads the age identities in path. A missing file is an error
// that wraps fs.ErrNotExist.
func LoadIdentity(path string) ([]age.Identity, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("identity file %s does not exist (run arca init): %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("open identity file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIdentityFile+1))
	if err != nil {
		return nil, fmt.Errorf("read identity file %s: %w", path, err)
	}
	if len(b) > maxIdentityFile {
		return nil, fmt.Errorf("identity file %s is larger than %d bytes", path, maxIdentityFile)
	}
	ids, err := age.ParseIdentities(strings.NewReader(string(b)))
	if err != nil {
		// age's parse errors never quote key material, but say it plainly.
		return nil, fmt.Errorf("identity file %s holds no valid age identity", path)
	}
	return ids, nil
}

func recipientOf(ids []age.Identity) (string, bool, error) {
	for _, id := range ids {
		if x, ok := id.(*age.X25519Identity); ok {
			return x.Recipient().String(), false, nil
		}
	}
	return "", false, errors.New("identity file holds no age X25519 identity")
}

// RecipientsOf returns the X25519 recipients of ids.
func RecipientsOf(ids []age.Identity) []age.Recipient {
	var rs []age.Recipient
	for _, id := range ids {
		if x, ok := id.(*age.X25519Identity); ok {
			rs = append(rs, x.Recipient())
		}
	}
	return rs
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
