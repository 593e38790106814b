package file

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
)

// A soft-deleted name past keep_deleted is still listed by Chain (reads
// show what is kept) and its sealed versions are still in the file until
// a write erases them. An explicit destroy of it is that write: it erases
// them, and answers what it erased, rather than answer not found and leave
// the versions the caller asked to erase in the file.
func TestDestroyPastKeepDeleted(t *testing.T) {
	ctx := context.Background()
	f, path, _, clk := histVault(t)
	f.SetHistory(vault.History{MaxVersions: 10, KeepDeleted: time.Hour})
	do(t, f, putV("app/k", "one"))
	do(t, f, putV("app/k", "two"))
	do(t, f, vault.Write{Kind: vault.Remove, Name: "app/k"})
	clk.tick(2 * time.Hour)
	if got := values(chainOf(t, f, "app/k")); len(got) != 2 {
		t.Fatalf("before the destroy, the chain keeps %d versions, want 2", len(got))
	}
	before := len(fileBytes(t, path))

	m, err := f.Apply(ctx, vault.Write{Kind: vault.Destroy, Name: "app/k"}, approveAll)
	if err != nil {
		t.Errorf("destroy of a name past keep_deleted: %v, want its versions erased", err)
	} else if m.Touch == nil || len(m.Touch.Erased) != 2 {
		t.Errorf("destroy of a name past keep_deleted: %+v, want versions 1 and 2 erased", m)
	}
	if c, err := f.Chain(ctx, "app/k"); !errors.Is(err, vault.ErrNotFound) && len(c.Previous) != 0 {
		t.Errorf("after the destroy the chain still keeps %d versions", len(c.Previous))
	}
	if after := len(fileBytes(t, path)); after >= before {
		t.Errorf("after the destroy the file is %d bytes, it was %d: the sealed versions are still there", after, before)
	}
}
