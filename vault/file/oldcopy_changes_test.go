package file

import (
	"slices"
	"testing"
)

// A vault file put back from an older copy (a file backup restored by
// hand, a checkout of the dotfiles) lowers its generation; writes after it
// reach the generation of a cursor given before it again, with other
// lines. A client holding that cursor must then be told to list again
// (reset), or be told every name whose state differs from what it saw:
// never nothing, or a cache keeps a value the vault no longer has.
func TestChangesAfterOlderCopy(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/a", "1"))
	older := fileBytes(t, path)
	do(t, f, putV("app/b", "1"))
	do(t, f, putV("app/a", "2"))
	seen := changes(t, f, "", 0).Cursor // the client has b and a at version 2

	if err := renameOver(path, older); err != nil {
		t.Fatal(err)
	}
	g := reopen(t, path, idPath, clk)
	do(t, g, putV("app/c", "1"))
	do(t, g, putV("app/d", "1"))

	ch := changes(t, g, seen, 0)
	if ch.Reset {
		return
	}
	got := changed(ch)
	for _, want := range []string{"app/a:current", "app/b:erased"} {
		if !slices.Contains(got, want) {
			t.Errorf("changes since a cursor from before the file was put back: %q, reset %t; want a reset or %s among them", got, ch.Reset, want)
		}
	}
}
