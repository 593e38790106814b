package identity

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"filippo.io/age"
)

// KeyEnv is the variable that may hold the identity itself (for CI): an
// AGE-SECRET-KEY-1… line, or the whole text of an identity file.
const KeyEnv = "ARCA_IDENTITY_KEY"

// KeyPath is the identity "file" of a vault whose identity is $KeyEnv:
// ops/config gives it when the variable is set, and Keys.Load reads the
// variable's value for it. It is no file: nothing opens it.
const KeyPath = "$" + KeyEnv

// Keys loads the identities of a process: each identity file at most once,
// so a protected one's passphrase is asked for once, and the opened
// identity is held in memory only. The zero Keys loads plain files only; a
// nil *Keys is the zero Keys without its memory.
type Keys struct {
	// Pass gives a protected identity file's passphrase; nil: none can be
	// asked for, and a protected file does not open.
	Pass Passphrase
	// Key is $ARCA_IDENTITY_KEY's value, what KeyPath opens to.
	Key string
	// Prompt is what an age plugin identity's plugin talks to the person
	// through; nil: no terminal, and a plugin that asks for input fails.
	Prompt Prompter

	mu  sync.Mutex
	got map[string]loaded
}

type loaded struct {
	ids []age.Identity
	err error
}

// Load returns the identities of the identity file path (KeyPath: of
// Key). A protected file is opened once: its identities, or the error
// opening it gave (a wrong passphrase is not asked again), are kept in
// memory for the life of k.
func (k *Keys) Load(path string) ([]age.Identity, error) {
	if k == nil {
		return Load(path, nil)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if l, ok := k.got[path]; ok {
		return l.ids, l.err
	}
	ids, err, keep := k.load(path)
	if keep {
		if k.got == nil {
			k.got = map[string]loaded{}
		}
		k.got[path] = loaded{ids, err}
	}
	return ids, err
}

// load reads path; keep says whether what it gave is kept: a protected
// file whose passphrase was asked for, and $ARCA_IDENTITY_KEY. A plain
// file is read again at each load, as it was before Keys: a rotation
// replaces it in place.
func (k *Keys) load(path string) (ids []age.Identity, err error, keep bool) {
	var b []byte
	if path == KeyPath {
		if k.Key == "" {
			return nil, fmt.Errorf("$%s is empty", KeyEnv), false
		}
		b = []byte(k.Key) // a whole identity file's text, protected too
	} else if b, err = readFile(path); err != nil {
		return nil, err, false
	}
	text, protected := string(b), Protected(b)
	if protected {
		if text, err = Unprotect(path, b, k.Pass); err != nil {
			return nil, err, k.Pass != nil
		}
	}
	ids, err = ParseWith(path, text, k.Prompt)
	return ids, err, protected || path == KeyPath && err == nil
}

// Missing reports whether err says an identity file is not there.
func Missing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
