package identity

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/internal/ownerfile"
	"github.com/arca-secrets/arca/vault/fsio"
)

// PassphraseFileEnv names the file a passphrase is read from instead of
// the terminal: its first line.
const PassphraseFileEnv = "ARCA_PASSPHRASE_FILE"

// NewPassphraseFileEnv names the file a changed passphrase's new one is
// read from (arca identity passphrase on a protected file), the current
// one coming from PassphraseFileEnv.
const NewPassphraseFileEnv = "ARCA_NEW_PASSPHRASE_FILE"

// MaxPassphraseFile bounds a passphrase file.
const MaxPassphraseFile = 4 << 10

// SetPassphrase protects the identity file path by the passphrase next
// gives (the old one, if it is protected, from old), or, when next is nil,
// removes its passphrase. The file is replaced whole (fsio.WriteWhole:
// a temp file beside it, mode 0600, synced, renamed): when protecting, no
// file ever holds the key in the clear.
func SetPassphrase(path string, old, next Passphrase) error {
	b, err := readFile(path)
	if err != nil {
		return err
	}
	protected := Protected(b)
	if next == nil && !protected {
		return fmt.Errorf("identity file %s has no passphrase to remove", path)
	}
	text := string(b)
	if protected {
		if text, err = Unprotect(path, b, old); err != nil {
			return err
		}
	}
	if _, err := Parse(path, text); err != nil {
		return err
	}
	out := []byte(text)
	if next != nil {
		p, err := next(path)
		if err != nil {
			return fmt.Errorf("identity file %s: new passphrase: %w", path, err)
		}
		if out, err = Protect(text, p); err != nil {
			return fmt.Errorf("identity file %s: %w", path, err)
		}
	}
	if err := fsio.WriteWhole(path, out, 0o600); err != nil {
		return fmt.Errorf("write identity file %s: %w", path, err)
	}
	return nil
}

// ReadPassphraseFile returns the first line of file, a passphrase. The
// file must be a regular file no one but its owner may read or write
// (mode 0600 or stricter) of at most MaxPassphraseFile bytes. Its errors
// never hold the passphrase.
func ReadPassphraseFile(file string) (string, error) {
	p, err := readPassphraseFile(file)
	if err != nil {
		return "", fmt.Errorf("passphrase file %s ($%s): %w", file, PassphraseFileEnv, err)
	}
	return p, nil
}

func readPassphraseFile(file string) (string, error) {
	b, err := ownerfile.Read(file, MaxPassphraseFile)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", errors.New("its first line is empty")
	}
	return line, nil
}
