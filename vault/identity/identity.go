// Package identity keeps the age identity a machine opens its vaults with
// (a file of mode 0600) and parses the recipients a vault is wrapped to.
// Its errors name files and positions, never key material.
//
// An identity may be an age plugin's (a hardware key: plugin.go), run
// through age's plugin protocol. The bounds:
//
//	maxIdentityFile     an identity file, 64 KiB
//	MaxWorkFactor       a protected file's scrypt work factor, 2^20
//	MaxPassphraseFile   a passphrase file, 4 KiB
//	MaxPluginText       a plugin's message or prompt, 1 KiB
//	MaxPluginError      the part of a plugin's error arca quotes, 200 bytes
//	MaxPluginRecipient  an age1NAME1… recipient, 4 KiB
package identity

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault/fsio"
)

// maxIdentityFile bounds an identity file read.
const maxIdentityFile = 64 << 10

// Ensure makes an age X25519 identity at path (mode 0600, parent
// directories 0700) unless one is there, which is kept and never replaced.
// It returns the identity's recipient and whether it was created.
func Ensure(path string, now time.Time) (recipient string, created bool, err error) {
	return EnsureWith(path, now, nil, nil)
}

// EnsureWith is Ensure with the identities loaded through keys (an
// existing protected file, KeyPath) and, when protect is not nil, a new
// identity written protected by the passphrase protect gives: the file
// never holds the key in the clear.
func EnsureWith(path string, now time.Time, keys *Keys, protect Passphrase) (recipient string, created bool, err error) {
	if ids, err := keys.Load(path); err == nil {
		return recipientOf(ids)
	} else if !Missing(err) || path == KeyPath {
		return "", false, err
	}
	if what, ok := fsio.Dangling(path); ok {
		return "", false, fmt.Errorf("identity path %s is %s: restore the file it leads to, or remove the link", path, what)
	}
	text, recipient, err := New(now)
	if err != nil {
		return "", false, err
	}
	b := []byte(text)
	if protect != nil {
		p, err := protect(path)
		if err != nil {
			return "", false, fmt.Errorf("identity file %s: passphrase: %w", path, err)
		}
		if b, err = Protect(text, p); err != nil {
			return "", false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("identity directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create identity file: %w", err)
	}
	if _, err := f.Write(b); err != nil {
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
	return recipient, true, fsio.SyncDir(filepath.Dir(path))
}

// New makes an age X25519 identity: the text of its file (what Ensure
// writes) and its recipient.
func New(now time.Time) (text, recipient string, err error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", "", fmt.Errorf("generate identity: %w", err)
	}
	text = fmt.Sprintf("# created: %s\n# public key: %s\n%s\n",
		now.UTC().Format(time.RFC3339), id.Recipient(), id)
	return text, id.Recipient().String(), nil
}

// Load reads the age identities in path. A missing file is an error
// that wraps fs.ErrNotExist. A file protected by a passphrase (Protected)
// is opened with the one pass gives; with pass nil it is an error.
func Load(path string, pass Passphrase) ([]age.Identity, error) {
	if path == KeyPath {
		return nil, fmt.Errorf("the identity is in $%s, not in a file", KeyEnv)
	}
	text, err := ReadText(path, pass)
	if err != nil {
		return nil, err
	}
	return Parse(path, text)
}

// ReadText returns the plain text of the identity file path, opened with
// the passphrase pass gives when it is protected.
func ReadText(path string, pass Passphrase) (string, error) {
	b, err := readFile(path)
	if err != nil {
		return "", err
	}
	if Protected(b) {
		return Unprotect(path, b, pass)
	}
	return string(b), nil
}

// readFile reads the identity file path, bounded.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("identity file %s does not exist (run arca init): %w", path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("open identity file: %w", err)
	}
	defer f.Close()
	b, err := fsio.Read(f, maxIdentityFile)
	if errors.Is(err, fsio.ErrTooLarge) {
		return nil, fmt.Errorf("identity file %s is larger than %d bytes", path, maxIdentityFile)
	} else if err != nil {
		return nil, fmt.Errorf("read identity file %s: %w", path, err)
	}
	return b, nil
}

func recipientOf(ids []age.Identity) (string, bool, error) {
	rs := RecipientsOf(ids)
	if len(rs) > 0 {
		return fmt.Sprint(rs[0]), false, nil
	}
	if names := Plugins(ids); len(names) > 0 {
		return "", false, fmt.Errorf("identity file holds an age plugin identity (age-plugin-%s) but no comment naming its recipient: add the line \"# recipient: age1…\" with the recipient the plugin gave", names[0])
	}
	return "", false, errors.New("identity file holds no age X25519 identity")
}

// RecipientsOf returns the recipients of ids: each X25519 identity's
// public key, then each plugin identity's recipient its file's comment
// names (see ParseWith).
func RecipientsOf(ids []age.Identity) []age.Recipient {
	var rs []age.Recipient
	for _, id := range ids {
		if x, ok := id.(*age.X25519Identity); ok {
			rs = append(rs, x.Recipient())
		}
	}
	for _, id := range ids {
		if p, ok := id.(*pluginIdentity); ok && p.recipient != "" {
			rs = append(rs, &pluginRecipient{name: p.name, encoding: p.recipient})
		}
	}
	return rs
}

// ParseRecipient parses an age X25519 public key (age1…) or an age plugin
// recipient (age1NAME1…, wrapped to by running age-plugin-NAME). Its error
// says what kind of thing s was, never s itself: a secret key pasted by
// mistake must not reach a terminal or a log.
func ParseRecipient(s string) (age.Recipient, error) {
	if isPluginRecipient(s) {
		return parsePluginRecipient(s)
	}
	r, err := age.ParseX25519Recipient(s)
	if err == nil {
		return r, nil
	}
	if t := strings.ToUpper(strings.TrimSpace(s)); strings.HasPrefix(t, "AGE-SECRET-KEY-") || strings.HasPrefix(t, "AGE-PLUGIN-") {
		return nil, errors.New("is an age secret key, not a public key (age1…): keep it secret, and give its public key instead")
	}
	return nil, errors.New("is not an age X25519 public key (age1…)")
}
