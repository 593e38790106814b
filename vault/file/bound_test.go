package file

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// newVaultFiles creates an identity and an empty vault in a temp dir.
func newVaultFiles(t *testing.T) (path, idPath string) {
	t.Helper()
	dir := t.TempDir()
	path, idPath = filepath.Join(dir, "v", "default.vault"), filepath.Join(dir, "id", "identity.txt")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(path, identity.RecipientsOf(ids)); err != nil {
		t.Fatal(err)
	}
	return path, idPath
}

// openBounded opens the vault with writes bounded to maxWrite bytes and
// reads to maxRead.
func openBounded(t *testing.T, path, idPath string, maxRead, maxWrite int64) (*Vault, error) {
	t.Helper()
	f, err := open(path, idPath, nil, options{maxRead: maxRead, maxWrite: maxWrite, syncDir: fsio.SyncDir})
	if err == nil {
		t.Cleanup(func() { f.Close() })
	}
	return f, err
}

func apply(f *Vault, kind vault.Kind, name, value string, approved *int) (vault.Meta, error) {
	w := vault.Write{Kind: kind, Name: name, Value: vault.NewSecret([]byte(value))}
	return f.Apply(context.Background(), w, func(vault.Meta) error { *approved++; return nil })
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A put that would take the vault past what writes may make is refused
// before it is approved, changes nothing, and leaves a vault every op still
// reads; destroy makes room again (rm keeps what it removed).
func TestWriteBoundRefusesGrowth(t *testing.T) {
	path, idPath := newVaultFiles(t)
	const bound = 4096
	f, err := openBounded(t, path, idPath, bound+maxVaultSlack, bound)
	if err != nil {
		t.Fatal(err)
	}
	value := strings.Repeat("v", 500)
	approved, i := 0, 0
	for ; ; i++ {
		if _, err = apply(f, vault.Put, fmt.Sprintf("app/k%d", i), value, &approved); err != nil {
			break
		}
		if i > 20 {
			t.Fatalf("%d puts of 500 bytes fit in a %d-byte vault", i, bound)
		}
	}
	if !strings.Contains(err.Error(), "over its limit of 4096 bytes") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("the put past the bound: %v, want it to name the limit and say nothing changed", err)
	}
	if approved != i {
		t.Errorf("%d approvals for %d puts that landed: the refused put was approved", approved, i)
	}
	before := fileBytes(t, path)
	if int64(len(before)) > bound {
		t.Fatalf("the vault is %d bytes, past its %d-byte bound", len(before), bound)
	}
	if _, err := f.Get(context.Background(), fmt.Sprintf("app/k%d", i)); err != vault.ErrNotFound {
		t.Errorf("the refused record: %v, want not found", err)
	}
	g, err := openBounded(t, path, idPath, bound+maxVaultSlack, bound)
	if err != nil {
		t.Fatalf("a fresh handle after the refused put: %v", err)
	}
	if ms, err := g.List(context.Background()); err != nil || len(ms) != i {
		t.Fatalf("list after the refused put: %d records, %v; want %d", len(ms), err, i)
	}
	if _, err := apply(g, vault.Destroy, "app/k0", "", &approved); err != nil {
		t.Fatalf("destroy: %v", err)
	}
	if _, err := apply(g, vault.Put, fmt.Sprintf("app/k%d", i), value, &approved); err != nil {
		t.Fatalf("a put after destroy made room: %v", err)
	}
}

// A vault already past the write bound (within the read bound) opens, and
// every write that does not grow it works: with no earlier version kept,
// rm, a rotate to a value of the same size. A write that grows it is
// refused; so are new recipients. A vault past the read bound is refused
// with its size named.
func TestOverBoundVaultShrinks(t *testing.T) {
	path, idPath := newVaultFiles(t)
	big, err := Open(path, idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	approved := 0
	for i := range 8 {
		if _, err := apply(big, vault.Put, fmt.Sprintf("app/k%d", i), strings.Repeat("v", 500), &approved); err != nil {
			t.Fatal(err)
		}
	}
	size := int64(len(fileBytes(t, path)))
	bound := size - 1000 // three records too many
	if _, err := openBounded(t, path, idPath, size-1, bound); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a vault past the read bound: %v, want it refused as too large", err)
	}
	f, err := openBounded(t, path, idPath, size, bound)
	if err != nil {
		t.Fatalf("a vault past the write bound, within the read bound: %v", err)
	}
	f.SetHistory(vault.History{MaxVersions: 1})
	if _, err := apply(f, vault.Put, "app/new", "x", &approved); err == nil || !strings.Contains(err.Error(), "over its limit") {
		t.Errorf("a put that grows an over-bound vault: %v, want it refused", err)
	}
	if _, err := apply(f, vault.Rotate, "app/k1", strings.Repeat("w", 500), &approved); err != nil {
		t.Errorf("a rotate that keeps the size: %v", err)
	}
	if n, err := f.Rekey(context.Background()); err != nil || n != 8 {
		t.Errorf("a rekey, which keeps the size: %d, %v", n, err)
	}
	rs, err := f.Recipients(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	more, err := seal.ParseRecipients(append(rs, otherRecipient(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SetRecipients(context.Background(), rs, more); err == nil || !strings.Contains(err.Error(), "over its limit") {
		t.Errorf("a recipient added to an over-bound vault: %v, want it refused", err)
	}
	for i := range 3 {
		if _, err := apply(f, vault.Remove, fmt.Sprintf("app/k%d", i), "", &approved); err != nil {
			t.Fatalf("rm %d of an over-bound vault: %v", i, err)
		}
	}
	if _, err := apply(f, vault.Put, "app/new", "x", &approved); err != nil {
		t.Errorf("a put once rm made room: %v", err)
	}
}

// otherRecipient is the public key of a fresh identity.
func otherRecipient(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "other.txt")
	pub, _, err := identity.Ensure(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// The bound is exact: a batch whose file comes to exactly the bound lands,
// one byte less refuses it, unapproved, with the file as it was. The batch
// mixes new records between old ones, overwrites and removals.
func TestWriteBoundIsExact(t *testing.T) {
	path, idPath := newVaultFiles(t)
	f, err := Open(path, idPath, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.ApplyBatch(ctx, batchOf(vault.Put, 0, 40), func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	f.Close()
	before := fileBytes(t, path)
	ws := append(batchOf(vault.Put, 30, 90), batchOf(vault.Remove, 0, 10)...)
	// The size the batch makes, measured on a copy.
	probe := filepath.Join(t.TempDir(), "probe.vault")
	if err := os.WriteFile(probe, before, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := Open(probe, idPath, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.ApplyBatch(ctx, ws, func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	size := int64(len(fileBytes(t, probe)))
	if size <= int64(len(before)) {
		t.Fatalf("the batch does not grow the vault (%d to %d bytes)", len(before), size)
	}
	for _, bound := range []int64{size - 1, size} {
		calls := 0
		h, err := openBounded(t, path, idPath, 1<<20, bound)
		if err != nil {
			t.Fatal(err)
		}
		h.now = fixedNow
		_, err = h.ApplyBatch(ctx, ws, func([]vault.Meta) error { calls++; return nil })
		if bound < size {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over its limit of %d bytes", bound)) || calls != 0 {
				t.Fatalf("bound %d, one byte short: %v, %d approve calls; want the limit named and none", bound, err, calls)
			}
			if !bytes.Equal(before, fileBytes(t, path)) {
				t.Fatal("a refused batch changed the vault file")
			}
			if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
				t.Fatalf("a refused batch left its temp file: %v", err)
			}
			continue
		}
		if err != nil || calls != 1 {
			t.Fatalf("bound %d, exactly the size: %v, %d approve calls", bound, err, calls)
		}
		if got := int64(len(fileBytes(t, path))); got != size {
			t.Fatalf("the vault is %d bytes, want %d", got, size)
		}
	}
}

// fixedNow stamps every record with one time, so two runs of a batch make
// files of one size.
func fixedNow() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
