package seal

import (
	"fmt"
	"testing"
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
