package etcd

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// A shared vault's header carries the history of its data keys, so that a
// machine can tell a teammate's rekey from a substituted header. Each data
// key has a continuity key, an Ed25519 key derived from it; the chain lists
// the public continuity key of every data key the vault has had, each link
// signed by the one before. The last link must be the current data key's.
//
// A machine pins the continuity key it last used (a public key, in a file
// of its own). When the header's key changes, the chain must lead from the
// pinned key to the new one; whoever can write etcd but never held a data
// key cannot forge that. A machine that has pinned nothing trusts what it
// finds first.

// link is one data key in a shared vault's history.
type link struct {
	VaultID string `json:"vault_id"`
	Pub     string `json:"pub"`           // the continuity key, hex
	Sig     string `json:"sig,omitempty"` // by the previous link's key; none on the first
}

// maxChain bounds a vault's key history; a rekey past it forgets the
// oldest link (a machine pinned to it must trust the vault anew).
const maxChain = 1000

func linkMessage(vaultID, pub string) []byte {
	return []byte("arca-chain-v1\x00" + vaultID + "\x00" + pub)
}

// extendChain returns chain with next's link appended, signed by prev's
// continuity key (chain empty, prev nil: the first link).
func extendChain(chain []link, prev, next *seal.Keys) ([]link, error) {
	nk, err := next.Continuity()
	if err != nil {
		return nil, err
	}
	l := link{VaultID: next.VaultIDHex(), Pub: hex.EncodeToString(nk.Public().(ed25519.PublicKey))}
	if prev != nil {
		pk, err := prev.Continuity()
		if err != nil {
			return nil, err
		}
		l.Sig = hex.EncodeToString(ed25519.Sign(pk, linkMessage(l.VaultID, l.Pub)))
	}
	out := append(append([]link{}, chain...), l)
	if len(out) > maxChain {
		out = out[len(out)-maxChain:]
	}
	return out, nil
}

// checkChain checks that h's last link is k's continuity key and, when
// pinned is not "", that the links lead from pinned to it, each signed by
// the one before.
func checkChain(h header, k *seal.Keys, pinned string) error {
	if len(h.Chain) == 0 || len(h.Chain) > maxChain {
		return errors.New("its key history is missing or too long")
	}
	ck, err := k.Continuity()
	if err != nil {
		return err
	}
	last := h.Chain[len(h.Chain)-1]
	if last.VaultID != h.VaultID || last.Pub != hex.EncodeToString(ck.Public().(ed25519.PublicKey)) {
		return errors.New("its key history does not end at its data key")
	}
	if pinned == "" || pinned == last.Pub {
		return nil
	}
	from := -1
	for i, l := range h.Chain {
		if l.Pub == pinned {
			from = i
		}
	}
	if from < 0 {
		return errSubstituted
	}
	for i := from + 1; i < len(h.Chain); i++ {
		pub, err := hex.DecodeString(h.Chain[i-1].Pub)
		sig, serr := hex.DecodeString(h.Chain[i].Sig)
		if err != nil || serr != nil || len(pub) != ed25519.PublicKeySize ||
			!ed25519.Verify(pub, linkMessage(h.Chain[i].VaultID, h.Chain[i].Pub), sig) {
			return errSubstituted
		}
	}
	return nil
}

// errSubstituted is a data key the pinned one does not lead to.
var errSubstituted = errors.New("its data key was replaced by one this machine cannot trace to the key it used before: the header may have been substituted by whoever can write the cluster")

// Pin files hold one line: "arca-pin-1 <continuity key>\n".
const (
	pinMagic   = "arca-pin-1 "
	maxPinFile = 256
)

// readPin returns the pinned continuity key; "" when there is no pin.
func readPin(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("pin file %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := fsio.Read(f, maxPinFile)
	if err != nil && !errors.Is(err, fsio.ErrTooLarge) {
		return "", err
	}
	pub, ok := strings.CutPrefix(strings.TrimSuffix(string(b), "\n"), pinMagic)
	if err != nil || !ok || len(pub) != 2*ed25519.PublicKeySize {
		return "", fmt.Errorf("pin file %s is malformed", path)
	}
	return strings.ToLower(pub), nil
}

// writePin pins pub: a 0600 file in a 0700 directory, by temp file and
// rename.
func writePin(path, pub string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pin-*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(pinMagic + pub + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return fsio.SyncDir(filepath.Dir(path))
}

// checkPin checks h (whose data key k was just unwrapped) against this
// machine's pin, and pins its key when it is trusted. Callers hold e.mu.
func (e *Vault) checkPin(h header, k *seal.Keys) error {
	pinned := ""
	if e.pinFile != "" {
		// One process at a time reads, checks and moves the pin, so a
		// pin never moves back to a key that does not lead to it.
		if err := os.MkdirAll(filepath.Dir(e.pinFile), 0o700); err != nil {
			return fmt.Errorf("%s: pin: %w", e.where(), err)
		}
		unlock, err := fsio.Lock(e.pinFile + ".lock")
		if err != nil {
			return fmt.Errorf("%s: pin: %w", e.where(), err)
		}
		defer unlock()
		if pinned, err = readPin(e.pinFile); err != nil {
			return fmt.Errorf("%s: %w", e.where(), err)
		}
	}
	if err := checkChain(h, k, pinned); err != nil {
		if errors.Is(err, errSubstituted) {
			return fmt.Errorf("%s: %w (if the vault was rebuilt on purpose, delete %s to trust it)", e.where(), err, e.pinFile)
		}
		return fmt.Errorf("%s is corrupt: %w", e.where(), err)
	}
	last := h.Chain[len(h.Chain)-1].Pub
	if e.pinFile == "" || last == pinned {
		return nil
	}
	if err := writePin(e.pinFile, last); err != nil {
		return fmt.Errorf("%s: pin %s: %w", e.where(), e.pinFile, err)
	}
	return nil
}
