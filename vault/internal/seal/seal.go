// Package seal is how every vault backend seals records: a random 256-bit
// data key, wrapped with age to the vault's recipients, from which HKDF
// derives a record key, a slot key, a header MAC key and a continuity key.
// A record's slot id is a keyed hash of its name; its name, value and
// metadata are sealed together with XChaCha20-Poly1305 under associated data
// that binds it to its slot and its vault. Backends store what this package
// produces; they never see a key.
package seal

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"time"

	"filippo.io/age"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/arca-secrets/arca/vault"
)

// Sizes of the envelope's parts.
const (
	DataKeySize = 32 // the vault's data key
	VaultIDSize = 16 // random, bound into every record
	SlotSize    = 16 // truncated keyed hash of "ns/name"
	recordFmt   = 1  // first byte of a record's plaintext
	MaxWrapped  = 64 << 10
)

// ErrAuth is a record that fails to authenticate: tampered, truncated,
// moved from another slot or sealed under another key.
var ErrAuth = errors.New("failed to authenticate")

// Keys are the working keys HKDF derives from a vault's data key.
type Keys struct {
	dataKey []byte // what the rest derive from, kept to wrap it to other recipients
	vaultID []byte
	aead    interface {
		Seal(dst, nonce, plaintext, ad []byte) []byte
		Open(dst, nonce, ciphertext, ad []byte) ([]byte, error)
		NonceSize() int
	}
	slotKey []byte
	slotMAC hash.Hash         // HMAC(slotKey), built on first use
	slots   map[string]string // name → slot id, at most slotCacheSize
	macKey  []byte
	scratch []byte // reused input buffers, under the backend's lock
	adBuf   []byte
	plain   []byte // a record's plaintext while it is sealed; cleared after
}

// Derive returns the working keys of a data key and vault id.
func Derive(dataKey, vaultID []byte) (*Keys, error) {
	derive := func(info string) ([]byte, error) {
		return hkdf.Key(sha256.New, dataKey, vaultID, info, 32)
	}
	rk, err := derive("arca record key v1")
	if err != nil {
		return nil, err
	}
	sk, err := derive("arca slot key v1")
	if err != nil {
		return nil, err
	}
	mk, err := derive("arca header mac key v1")
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.NewX(rk)
	if err != nil {
		return nil, err
	}
	return &Keys{dataKey: dataKey, vaultID: vaultID, aead: aead, slotKey: sk, macKey: mk}, nil
}

// Slot returns the slot id of name: a keyed hash, so ids reveal no names.
// The HMAC state is reused; callers hold the backend's lock.
func (k *Keys) Slot(name string) string {
	if id, ok := k.slots[name]; ok {
		return id
	}
	id := k.computeSlot(name)
	if len(k.slots) >= slotCacheSize || k.slots == nil {
		k.slots = make(map[string]string, 64) // start over rather than grow without bound
	}
	k.slots[name] = id
	return id
}

// slotCacheSize bounds the names whose slot ids a vault remembers. Slot ids
// are derived from names, never from values, so remembering them keeps
// nothing secret in memory that the encrypted vault does not already hold.
const slotCacheSize = 1024

func (k *Keys) computeSlot(name string) string {
	id := k.SlotBytes(name)
	var out [2 * SlotSize]byte
	hex.Encode(out[:], id[:])
	return string(out[:])
}

// SlotBytes is the slot id of name in binary, computed afresh: for a bulk
// write, whose names would only churn the cache of Slot. It allocates
// nothing.
func (k *Keys) SlotBytes(name string) (id [SlotSize]byte) {
	if k.slotMAC == nil {
		k.slotMAC = hmac.New(sha256.New, k.slotKey)
	}
	k.slotMAC.Reset()
	k.scratch = append(k.scratch[:0], name...)
	k.slotMAC.Write(k.scratch)
	var sum [sha256.Size]byte
	copy(id[:], k.slotMAC.Sum(sum[:0]))
	return id
}

// HeaderMAC authenticates the vault's header fields.
func (k *Keys) HeaderMAC(format string, recipients []string) string {
	m := hmac.New(sha256.New, k.macKey)
	fmt.Fprintf(m, "%s\x00%x\x00", format, k.vaultID)
	for _, r := range recipients {
		fmt.Fprintf(m, "%s\n", r)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// ad is a record's associated data; the buffer is reused (callers hold the
// File's lock).
func (k *Keys) ad(slot string) []byte {
	k.adBuf = append(k.adBuf[:0], "arca-record-v1\x00"...)
	k.adBuf = append(k.adBuf, k.vaultID...)
	k.adBuf = append(k.adBuf, slot...)
	return k.adBuf
}

// Seal encrypts r for slot: nonce || ciphertext.
func (k *Keys) Seal(slot string, r vault.Record) ([]byte, error) {
	return k.AppendSeal(make([]byte, 0, SealedSize(r)), slot, r)
}

// AppendSeal appends what Seal makes of r to dst. The plaintext is put
// together in a buffer of k's own, cleared once sealed, so that a bulk
// write sealing record after record into one buffer allocates nothing.
func (k *Keys) AppendSeal(dst []byte, slot string, r vault.Record) ([]byte, error) {
	n := k.aead.NonceSize()
	dst = slices.Grow(dst, SealedSize(r))
	nonce := dst[len(dst) : len(dst)+n]
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	k.plain = appendRecord(k.plain[:0], r)
	out := k.aead.Seal(dst[:len(dst)+n], nonce, k.plain, k.ad(slot))
	clear(k.plain)
	return out, nil
}

// SealedSize is the length of what Seal makes of r, known before it is
// sealed: the nonce, the encoded record, the tag.
func SealedSize(r vault.Record) int {
	return chacha20poly1305.NonceSizeX + recordHeader + len(r.Name) + r.Value.Len() + chacha20poly1305.Overhead
}

// Open decrypts a sealed record of slot. blob is overwritten.
func (k *Keys) Open(slot string, blob []byte) (vault.Record, error) {
	n := k.aead.NonceSize()
	if len(blob) < n {
		return vault.Record{}, ErrAuth
	}
	pt, err := k.aead.Open(blob[n:n], blob[:n], blob[n:], k.ad(slot))
	if err != nil {
		return vault.Record{}, ErrAuth
	}
	return decodeRecord(pt)
}

// Record plaintext: format byte, version, created, updated, rotated (unix
// nanoseconds, 8 bytes each, big-endian; rotated 0 = never), name length
// (2 bytes), name, value.
const recordHeader = 1 + 8*4 + 2

// appendRecord appends the plaintext of r to dst.
func appendRecord(dst []byte, r vault.Record) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recordHeader)...)
	b := dst[start:]
	b[0] = recordFmt
	binary.BigEndian.PutUint64(b[1:], r.Version)
	binary.BigEndian.PutUint64(b[9:], uint64(r.CreatedAt.UnixNano()))
	binary.BigEndian.PutUint64(b[17:], uint64(r.UpdatedAt.UnixNano()))
	var rot int64
	if !r.RotatedAt.IsZero() {
		rot = r.RotatedAt.UnixNano()
	}
	binary.BigEndian.PutUint64(b[25:], uint64(rot))
	binary.BigEndian.PutUint16(b[33:], uint16(len(r.Name)))
	dst = append(dst, r.Name...)
	return append(dst, r.Value.Reveal()...)
}

func decodeRecord(pt []byte) (vault.Record, error) {
	if len(pt) < recordHeader || pt[0] != recordFmt {
		return vault.Record{}, errors.New("unknown record format")
	}
	nl := int(binary.BigEndian.Uint16(pt[33:]))
	if len(pt) < recordHeader+nl {
		return vault.Record{}, errors.New("truncated record")
	}
	at := func(off int) time.Time {
		return time.Unix(0, int64(binary.BigEndian.Uint64(pt[off:]))).UTC()
	}
	r := vault.Record{Meta: vault.Meta{
		Name:      string(pt[recordHeader : recordHeader+nl]),
		Version:   binary.BigEndian.Uint64(pt[1:]),
		CreatedAt: at(9),
		UpdatedAt: at(17),
	}}
	if binary.BigEndian.Uint64(pt[25:]) != 0 {
		r.RotatedAt = at(25)
	}
	r.Value = vault.NewSecret(pt[recordHeader+nl:])
	return r, nil
}

// Fresh returns the keys of a fresh random data key and vault id.
func Fresh() (*Keys, error) {
	dataKey := make([]byte, DataKeySize)
	vaultID := make([]byte, VaultIDSize)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, err
	}
	if _, err := rand.Read(vaultID); err != nil {
		return nil, err
	}
	return Derive(dataKey, vaultID)
}

// wrap encrypts the data key with age to every recipient.
func wrap(dataKey []byte, recipients []age.Recipient) ([]byte, error) {
	var buf bytes.Buffer
	w, err := age.Encrypt(&buf, recipients...)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(dataKey); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unwrap decrypts a wrapped data key with the first identity that can.
func unwrap(wrapped []byte, ids []age.Identity) ([]byte, error) {
	r, err := age.Decrypt(bytes.NewReader(wrapped), ids...)
	if err != nil {
		var nm *age.NoIdentityMatchError
		if errors.As(err, &nm) {
			return nil, errors.New("the identity cannot unwrap the data key (wrong identity for this vault?)")
		}
		return nil, fmt.Errorf("cannot unwrap the data key: %w", err)
	}
	key, err := io.ReadAll(io.LimitReader(r, DataKeySize+1))
	if err != nil || len(key) != DataKeySize {
		return nil, errors.New("the wrapped data key is malformed")
	}
	return key, nil
}

// VaultID is the vault id the keys are bound to.
func (k *Keys) VaultID() []byte { return k.vaultID }

// VaultIDHex is the vault id as headers carry it.
func (k *Keys) VaultIDHex() string { return hex.EncodeToString(k.vaultID) }

// Continuity derives the data key's continuity key: an Ed25519 key whose
// public half a shared vault's key history lists, so that a machine can
// trace a new data key back to one it held.
func (k *Keys) Continuity() (ed25519.PrivateKey, error) {
	seed, err := hkdf.Key(sha256.New, k.dataKey, k.vaultID, "arca continuity key v1", ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), nil
}
