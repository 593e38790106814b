package identity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// Passphrase returns the passphrase of the protected identity file named
// file. Its errors never hold the passphrase.
type Passphrase func(file string) (string, error)

// WorkFactor is the scrypt work factor (log2 N) a protected identity is
// written with: age's own default, what `age -p` writes.
const WorkFactor = 18

// MaxWorkFactor bounds the scrypt work factor (log2 N) of a protected
// identity read: 2^20, four times what arca and age write, a few seconds
// at most. A file asking for more is refused before any scrypt work, so a
// hostile file cannot make arca spin for minutes.
const MaxWorkFactor = 20

// maxIdentityText bounds the plain text a protected identity file opens to.
const maxIdentityText = maxIdentityFile

// Protected reports whether b is an age-encrypted file (armored or not):
// an identity file protected by a passphrase.
func Protected(b []byte) bool {
	t := bytes.TrimLeft(b, " \t\r\n")
	return bytes.HasPrefix(t, []byte("age-encryption.org/")) || bytes.HasPrefix(t, []byte(armor.Header))
}

// Protect returns text, an identity file's plain text, encrypted to
// passphrase in age's scrypt format, armored: the file `age -d` opens with
// the passphrase, as it does one `age -p -a` wrote.
func Protect(text, passphrase string) ([]byte, error) {
	r, err := age.NewScryptRecipient(passphrase)
	if err != nil {
		return nil, errors.New("the passphrase is empty")
	}
	r.SetWorkFactor(WorkFactor)
	var out bytes.Buffer
	aw := armor.NewWriter(&out)
	w, err := age.Encrypt(aw, r)
	if err != nil {
		return nil, fmt.Errorf("protect identity: %w", err)
	}
	if _, err := io.WriteString(w, text); err != nil {
		return nil, fmt.Errorf("protect identity: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("protect identity: %w", err)
	}
	if err := aw.Close(); err != nil {
		return nil, fmt.Errorf("protect identity: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Unprotect opens b, a protected identity file named path, with the
// passphrase pass gives, and returns its plain text. A wrong passphrase,
// a file not protected by a passphrase alone, and a work factor above
// MaxWorkFactor are errors naming path.
func Unprotect(path string, b []byte, pass Passphrase) (string, error) {
	if pass == nil {
		return "", fmt.Errorf("%s is protected by a passphrase, and none can be asked for here: set ARCA_PASSPHRASE_FILE, or run from a terminal", Named(path))
	}
	if err := checkWorkFactor(path, b); err != nil {
		return "", err
	}
	p, err := pass(path)
	if err != nil {
		return "", fmt.Errorf("%s: passphrase: %w", Named(path), err)
	}
	if p == "" {
		return "", fmt.Errorf("%s: the passphrase is empty", Named(path))
	}
	id, err := age.NewScryptIdentity(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", Named(path), err)
	}
	id.SetMaxWorkFactor(MaxWorkFactor)
	var r io.Reader = bytes.NewReader(bytes.TrimLeft(b, " \t\r\n"))
	if bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(armor.Header)) {
		r = armor.NewReader(r)
	}
	d, err := age.Decrypt(r, id)
	var noMatch *age.NoIdentityMatchError
	switch {
	case errors.As(err, &noMatch):
		return "", fmt.Errorf("%s: wrong passphrase (or not protected by a passphrase alone)", Named(path))
	case err != nil:
		return "", fmt.Errorf("%s: cannot open it: %v", Named(path), err)
	}
	var sb strings.Builder
	if _, err := io.Copy(&sb, io.LimitReader(d, maxIdentityText+1)); err != nil {
		return "", fmt.Errorf("%s: wrong passphrase, or the file is damaged", Named(path))
	}
	if sb.Len() > maxIdentityText {
		return "", fmt.Errorf("%s opens to more than %d bytes", Named(path), maxIdentityText)
	}
	return sb.String(), nil
}

// checkWorkFactor refuses a file whose scrypt stanza asks for more work
// than MaxWorkFactor, before a passphrase is asked for: age would refuse
// it too, but only after the passphrase.
func checkWorkFactor(path string, b []byte) error {
	var r io.Reader = bytes.NewReader(bytes.TrimLeft(b, " \t\r\n"))
	if bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(armor.Header)) {
		r = armor.NewReader(r)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(r, head)
	for _, line := range strings.Split(string(head[:n]), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "->" || f[1] != "scrypt" {
			continue
		}
		var logN int
		if _, err := fmt.Sscanf(f[3], "%d", &logN); err != nil || logN > MaxWorkFactor || logN < 1 {
			return fmt.Errorf("%s asks for an scrypt work factor of %.12q, above the %d arca accepts: it was not written by arca or age, or was tampered with", Named(path), f[3], MaxWorkFactor)
		}
	}
	return nil
}
