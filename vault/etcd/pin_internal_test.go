package etcd

import (
	"errors"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault/internal/seal"
)

func testKeys(t *testing.T) *seal.Keys {
	t.Helper()
	k, err := seal.Fresh()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkChain follows real rekeys from the pinned key, and refuses a chain
// that copies the real history and appends a key the last real one did not
// sign, or that skips the pinned key.
func TestCheckChain(t *testing.T) {
	k1, k2, k3, evil := testKeys(t), testKeys(t), testKeys(t), testKeys(t)
	c1, _ := extendChain(nil, nil, k1)
	c2, _ := extendChain(c1, k1, k2)
	c3, _ := extendChain(c2, k2, k3)
	pin1 := c1[0].Pub
	hdr := func(k *seal.Keys, chain []link) header {
		return header{Header: seal.Header{VaultID: k.VaultIDHex()}, Chain: chain}
	}
	if err := checkChain(hdr(k3, c3), k3, pin1); err != nil {
		t.Fatalf("two real rekeys from the pin: %v", err)
	}
	if err := checkChain(hdr(k3, c3), k3, ""); err != nil {
		t.Fatalf("no pin: %v", err)
	}
	// The real history, then a key signed by a key of the forger's own.
	forged, _ := extendChain(c3, evil, evil)
	if err := checkChain(hdr(evil, forged), evil, pin1); !errors.Is(err, errSubstituted) {
		t.Errorf("forged last link: %v", err)
	}
	// A link whose signature was made over another key.
	bad, _ := extendChain(c2, k2, k3)
	bad[2].Sig = c2[1].Sig
	if err := checkChain(hdr(k3, bad), k3, pin1); !errors.Is(err, errSubstituted) {
		t.Errorf("a signature moved from another link: %v", err)
	}
	// A chain that does not end at the header's data key.
	if err := checkChain(hdr(k3, c2), k3, ""); err == nil {
		t.Error("a chain ending at another key was accepted")
	}
	if err := checkChain(hdr(k3, nil), k3, ""); err == nil {
		t.Error("a header without a chain was accepted")
	}
	// A pin the history does not hold at all.
	if err := checkChain(hdr(k3, c3), k3, strings.Repeat("ab", 32)); !errors.Is(err, errSubstituted) {
		t.Errorf("a pin not in the history: %v", err)
	}
	// A last link naming another vault id than the header's.
	if err := checkChain(hdr(k1, c3), k3, ""); err == nil {
		t.Error("a last link of another vault id was accepted")
	}
}
