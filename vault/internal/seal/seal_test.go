package seal

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// The slot cache gives the same ids as computing them, and never holds more
// than slotCacheSize names however many are asked for.
func TestSlotCacheBounded(t *testing.T) {
	k, err := Derive(make([]byte, 32), []byte("vault-id-for-test"))
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for i := range 3 * slotCacheSize {
			name := fmt.Sprintf("ns/name-%d", i)
			if got, want := k.Slot(name), k.computeSlot(name); got != want {
				t.Fatalf("round %d: slot(%q) = %s, computed %s", round, name, got, want)
			}
			if len(k.slots) > slotCacheSize {
				t.Fatalf("cache holds %d names, cap %d", len(k.slots), slotCacheSize)
			}
		}
	}
	if k.Slot("a/b") == k.Slot("a/c") {
		t.Fatal("two names share a slot id")
	}
}

// SealedSize is what Seal makes, for names and values of every length a
// record may have, rotated or not.
func TestSealedSize(t *testing.T) {
	k, err := Derive(make([]byte, 32), []byte("vault-id-for-test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, name := range []string{"a/b", "ns/" + strings.Repeat("n", 200)} {
		for _, n := range []int{1, 40, 1000, 64 << 10} {
			r := vault.Record{Meta: vault.Meta{Name: name, Version: 3, CreatedAt: now, UpdatedAt: now}, Value: vault.NewSecret(bytes.Repeat([]byte("v"), n))}
			if n == 40 {
				r.RotatedAt = now
			}
			sealed, err := k.Seal(k.Slot(name), r)
			if err != nil {
				t.Fatal(err)
			}
			if got := SealedSize(r); got != len(sealed) {
				t.Errorf("name of %d bytes, value of %d: SealedSize %d, sealed %d bytes", len(name), n, got, len(sealed))
			}
		}
	}
}

// AppendSeal appends to what dst holds, opens to the record, and leaves
// no plaintext in its own buffer.
func TestAppendSeal(t *testing.T) {
	k, err := Derive(make([]byte, 32), []byte("vault-id-for-test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := vault.Record{Meta: vault.Meta{Name: "app/db", Version: 2, CreatedAt: now, UpdatedAt: now}, Value: vault.NewSecret([]byte("canary-value-0123"))}
	slot := k.Slot(r.Name)
	prefix := []byte("kept")
	out, err := k.AppendSeal(prefix, slot, r)
	if err != nil {
		t.Fatal(err)
	}
	if string(out[:4]) != "kept" || len(out) != 4+SealedSize(r) {
		t.Fatalf("AppendSeal gave %d bytes starting %q; want the prefix and %d sealed", len(out), out[:4], SealedSize(r))
	}
	got, err := k.Open(slot, out[4:])
	if err != nil || got.Name != r.Name || got.Version != 2 || string(got.Value.Reveal()) != "canary-value-0123" {
		t.Fatalf("Open: %+v, %v", got, err)
	}
	if bytes.Contains(k.plain[:cap(k.plain)], []byte("canary-value")) {
		t.Fatal("the plaintext stays in the sealing buffer")
	}
	if id := k.SlotBytes(r.Name); hex.EncodeToString(id[:]) != slot {
		t.Fatalf("SlotBytes %x, Slot %s", id, slot)
	}
}
