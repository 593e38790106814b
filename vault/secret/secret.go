// Package secret holds Secret, a value that cannot be printed. It imports
// the standard library only, so that a program that handles values but
// opens no vault (a client of serve) links no cryptography beyond it.
package secret

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
)

// Secret holds a secret value. It cannot be printed, logged or marshalled:
// every formatting path yields "<redacted>". The bytes are reached only
// through Reveal, so every place a value leaves arca can be found with grep.
type Secret struct {
	b []byte
}

const redacted = "<redacted>"

// New wraps b; the caller must not modify b afterwards.
func New(b []byte) Secret { return Secret{b: b} }

// Reveal returns the value's bytes. The caller must not modify them.
func (s Secret) Reveal() []byte { return s.b }

// Len is the value's length in bytes.
func (s Secret) Len() int { return len(s.b) }

// Equal compares two values in constant time.
func (s Secret) Equal(o Secret) bool { return subtle.ConstantTimeCompare(s.b, o.b) == 1 }

// String redacts.
func (Secret) String() string { return redacted }

// GoString redacts.
func (Secret) GoString() string { return redacted }

// Format redacts for every verb, %x and %q included.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// MarshalJSON redacts; a response that carries a value builds it from Reveal.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalText redacts.
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LogValue redacts in structured logs.
func (Secret) LogValue() slog.Value { return slog.StringValue(redacted) }
