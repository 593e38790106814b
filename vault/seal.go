package vault

import (
	"bytes"
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
	"time"

	"filippo.io/age"
	"golang.org/x/crypto/chacha20poly1305"
)

// Sizes of the envelope's parts.
const (
	dataKeySize = 32 // the vault's data key
	vaultIDSize = 16 // random, bound into every record
	slotSize    = 16 // truncated keyed hash of "ns/name"
	recordFmt   = 1  // first byte of a record's plaintext
	maxWrapped  = 64 << 10
)

// errAuth is a record that fails to authenticate: tampered, truncated,
// moved from another slot or sealed under another key.
var errAuth = errors.New("failed to authenticate")

// keys are the working keys HKDF derives from a vault's data key.
type keys struct {
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
	scratch []byte // reused input buffers, under the File's lock
	adBuf   []byte
}

func deriveKeys(dataKey, vaultID []byte) (*keys, error) {
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
	return &keys{dataKey: dataKey, vaultID: vaultID, aead: aead, slotKey: sk, macKey: mk}, nil
}

// slot returns the slot id of name: a keyed hash, so ids reveal no names.
// The HMAC state is reused; callers hold the File's lock.
func (k *keys) slot(name string) string {
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

func (k *keys) computeSlot(name string) string {
	if k.slotMAC == nil {
		k.slotMAC = hmac.New(sha256.New, k.slotKey)
	}
	k.slotMAC.Reset()
	k.scratch = append(k.scratch[:0], name...)
	k.slotMAC.Write(k.scratch)
	var sum [sha256.Size]byte
	var out [2 * slotSize]byte
	hex.Encode(out[:], k.slotMAC.Sum(sum[:0])[:slotSize])
	return string(out[:])
}

// headerMAC authenticates the vault's header fields.
func (k *keys) headerMAC(format string, recipients []string) string {
	m := hmac.New(sha256.New, k.macKey)
	fmt.Fprintf(m, "%s\x00%x\x00", format, k.vaultID)
	for _, r := range recipients {
		fmt.Fprintf(m, "%s\n", r)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// ad is a record's associated data; the buffer is reused (callers hold the
// File's lock).
func (k *keys) ad(slot string) []byte {
	k.adBuf = append(k.adBuf[:0], "arca-record-v1\x00"...)
	k.adBuf = append(k.adBuf, k.vaultID...)
	k.adBuf = append(k.adBuf, slot...)
	return k.adBuf
}

// seal encrypts r for slot: nonce || ciphertext.
func (k *keys) seal(slot string, r Record) ([]byte, error) {
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+64+len(r.Name)+r.Value.Len())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return k.aead.Seal(nonce, nonce, encodeRecord(r), k.ad(slot)), nil
}

// open decrypts a sealed record of slot. blob is overwritten.
func (k *keys) open(slot string, blob []byte) (Record, error) {
	n := k.aead.NonceSize()
	if len(blob) < n {
		return Record{}, errAuth
	}
	pt, err := k.aead.Open(blob[n:n], blob[:n], blob[n:], k.ad(slot))
	if err != nil {
		return Record{}, errAuth
	}
	return decodeRecord(pt)
}

// Record plaintext: format byte, version, created, updated, rotated (unix
// nanoseconds, 8 bytes each, big-endian; rotated 0 = never), name length
// (2 bytes), name, value.
const recordHeader = 1 + 8*4 + 2

func encodeRecord(r Record) []byte {
	b := make([]byte, recordHeader, recordHeader+len(r.Name)+r.Value.Len())
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
	b = append(b, r.Name...)
	return append(b, r.Value.Reveal()...)
}

func decodeRecord(pt []byte) (Record, error) {
	if len(pt) < recordHeader || pt[0] != recordFmt {
		return Record{}, errors.New("unknown record format")
	}
	nl := int(binary.BigEndian.Uint16(pt[33:]))
	if len(pt) < recordHeader+nl {
		return Record{}, errors.New("truncated record")
	}
	at := func(off int) time.Time {
		return time.Unix(0, int64(binary.BigEndian.Uint64(pt[off:]))).UTC()
	}
	r := Record{Meta: Meta{
		Name:      string(pt[recordHeader : recordHeader+nl]),
		Version:   binary.BigEndian.Uint64(pt[1:]),
		CreatedAt: at(9),
		UpdatedAt: at(17),
	}}
	if binary.BigEndian.Uint64(pt[25:]) != 0 {
		r.RotatedAt = at(25)
	}
	r.Value = NewSecret(pt[recordHeader+nl:])
	return r, nil
}

// freshKeys returns the keys of a fresh random data key and vault id.
func freshKeys() (*keys, error) {
	dataKey := make([]byte, dataKeySize)
	vaultID := make([]byte, vaultIDSize)
	if _, err := rand.Read(dataKey); err != nil {
		return nil, err
	}
	if _, err := rand.Read(vaultID); err != nil {
		return nil, err
	}
	return deriveKeys(dataKey, vaultID)
}

// wrapKey encrypts the data key with age to every recipient.
func wrapKey(dataKey []byte, recipients []age.Recipient) ([]byte, error) {
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

// unwrapKey decrypts a wrapped data key with the first identity that can.
func unwrapKey(wrapped []byte, ids []age.Identity) ([]byte, error) {
	r, err := age.Decrypt(bytes.NewReader(wrapped), ids...)
	if err != nil {
		var nm *age.NoIdentityMatchError
		if errors.As(err, &nm) {
			return nil, errors.New("the identity cannot unwrap the data key (wrong identity for this vault?)")
		}
		return nil, fmt.Errorf("cannot unwrap the data key: %w", err)
	}
	key, err := io.ReadAll(io.LimitReader(r, dataKeySize+1))
	if err != nil || len(key) != dataKeySize {
		return nil, errors.New("the wrapped data key is malformed")
	}
	return key, nil
}
