package file

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

// marksOf is the commit marks of the vault file at path.
func marksOf(t *testing.T, path string) []string {
	t.Helper()
	c, err := parseVault(string(fileBytes(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return c.hdr.Commits
}

// setMarks writes the vault file at path again with marks as its header's
// commits, in the canonical layout (no MAC covers them).
func setMarks(t *testing.T, path string, marks []string) {
	t.Helper()
	text := string(fileBytes(t, path))
	old, err := json.Marshal(marksOf(t, path))
	if err != nil {
		t.Fatal(err)
	}
	repl, err := json.Marshal(marks)
	if err != nil {
		t.Fatal(err)
	}
	text = strings.Replace(text, `"commits":`+string(old), `"commits":`+string(repl), 1)
	if err := renameOver(path, []byte(text)); err != nil {
		t.Fatal(err)
	}
}

// Every commit adds one mark, at the generation it stamps: a put, a batch,
// a group, check's erase; the header keeps the newest 64. A change of
// recipients stamps no line and keeps them; a rekey starts them over.
func TestCommitMarksOnePerCommit(t *testing.T) {
	ctx := context.Background()
	f, path, idPath, clk := histVault(t)
	f.SetHistory(vault.History{MaxVersions: 10, KeepDeleted: time.Hour})
	want := func(what string, n int, gen uint64) {
		t.Helper()
		ms := marksOf(t, path)
		if len(ms) != n {
			t.Fatalf("%s: %d marks %q, want %d", what, len(ms), ms, n)
		}
		if g, _ := newestCommit(ms); g != gen {
			t.Fatalf("%s: the newest mark is of generation %d, want %d", what, g, gen)
		}
	}
	want("a new vault", 1, 0)
	do(t, f, putV("app/a", "1"))
	want("a put", 2, 1)
	if _, err := f.ApplyBatch(ctx, batchOf(vault.Put, 0, 10), func([]vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	want("a batch of 10", 3, 2)
	g, err := f.Group(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []vault.Write{putV("app/g1", "x"), putV("app/g2", "y"), putV("app/g1", "z")} {
		if _, err := g.Add(ctx, w, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	want("a group of 3", 4, 3)
	do(t, f, vault.Write{Kind: vault.Remove, Name: "app/a"})
	want("an rm", 5, 4)
	clk.tick(2 * time.Hour)
	if rep, err := f.Check(ctx); err != nil || rep.Erased != 1 {
		t.Fatalf("Check: %+v, %v", rep, err)
	}
	want("check's erase", 6, 5)
	before := marksOf(t, path)
	rs, err := f.Recipients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	more, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	cur := changes(t, f, "", 0).Cursor
	if err := f.SetRecipients(ctx, rs, append(identity.RecipientsOf(ids), more.Recipient())); err != nil {
		t.Fatal(err)
	}
	if got := marksOf(t, path); !slices.Equal(got, before) {
		t.Fatalf("a change of recipients: marks %q, were %q", got, before)
	}
	if ch := changes(t, reopen(t, path, idPath, clk), cur, 0); ch.Reset || len(ch.Changes) != 0 {
		t.Errorf("a cursor across a change of recipients: %+v", ch)
	}
	if _, err := f.Rekey(ctx); err != nil {
		t.Fatal(err)
	}
	want("a rekey", 1, 5)
}

// A cursor holds while the header keeps the mark of its generation: 63
// commits on, the changes since are answered; 64 and 65 on, its mark is
// gone and the answer is a reset.
func TestChangesCommitWindow(t *testing.T) {
	f, path, _, _ := histVault(t)
	do(t, f, putV("app/start", "1"))
	since := changes(t, f, "", 0).Cursor
	for i := range 63 {
		do(t, f, putV(fmt.Sprintf("app/k%02d", i), "v"))
	}
	if n := len(marksOf(t, path)); n != maxCommits {
		t.Fatalf("%d marks after 65 commits, want %d", n, maxCommits)
	}
	ch := changes(t, f, since, 0)
	if ch.Reset || len(ch.Changes) != 63 || ch.Changes[0].Name != "app/k00" {
		t.Fatalf("a cursor 63 commits old: reset %t, %d changes", ch.Reset, len(ch.Changes))
	}
	for i, name := range []string{"app/late1", "app/late2"} {
		do(t, f, putV(name, "v"))
		if ch := changes(t, f, since, 0); !ch.Reset || len(ch.Changes) != 0 {
			t.Errorf("a cursor %d commits old: reset %t, %d changes; want a reset", 64+i, ch.Reset, len(ch.Changes))
		}
	}
	if n := len(marksOf(t, path)); n != maxCommits {
		t.Errorf("%d marks after 67 commits, want %d", n, maxCommits)
	}
}

// The header's marks are read strictly: anything a commit does not write
// is a corrupt vault, in words that name the header.
func TestCommitMarksParsedStrictly(t *testing.T) {
	f, path, idPath, clk := histVault(t)
	do(t, f, putV("app/a", "1"))
	do(t, f, putV("app/b", "1"))
	good := fileBytes(t, path)
	ms := marksOf(t, path) // generations 0, 1, 2
	id := ms[2][len("2-"):]
	var full []string // gens 0 to 64
	for i := range maxCommits + 1 {
		full = append(full, fmt.Sprintf("%d-%s", i, id))
	}
	for _, c := range []struct {
		what  string
		marks []string
	}{
		{"a leading zero", []string{ms[0], ms[1], "02-" + id}},
		{"an uppercase id", []string{ms[0], ms[1], "2-" + strings.ToUpper(id)}},
		{"a short id", []string{ms[0], ms[1], "2-" + id[1:]}},
		{"a long id", []string{ms[0], ms[1], "2-" + id + "0"}},
		{"no dash", []string{ms[0], ms[1], "2" + id}},
		{"a signed generation", []string{ms[0], ms[1], "+2-" + id}},
		{"a generation twice", []string{ms[0], ms[1], ms[1], ms[2]}},
		{"out of order", []string{ms[1], ms[0], ms[2]}},
		{"newest not the lines' generation", []string{ms[0], ms[1]}},
		{"newest past the lines' generation", []string{ms[0], ms[1], ms[2], "3-" + id}},
		{"more than 64", full},
	} {
		if err := renameOver(path, good); err != nil {
			t.Fatal(err)
		}
		setMarks(t, path, c.marks)
		h, err := open(path, idPath, clk.now, defaultOptions())
		if err == nil {
			_, err = h.Changes(context.Background(), "", 0)
			h.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "is corrupt") || !strings.Contains(err.Error(), "header") {
			t.Errorf("%s: %v, want a corrupt vault naming the header", c.what, err)
		}
	}
	// An empty list is not the canonical form of no marks.
	text := strings.Replace(string(good), `"commits":["`+strings.Join(ms, `","`)+`"]`, `"commits":[]`, 1)
	if err := renameOver(path, []byte(text)); err != nil {
		t.Fatal(err)
	}
	if _, err := open(path, idPath, clk.now, defaultOptions()); err == nil || !strings.Contains(err.Error(), "is corrupt") {
		t.Errorf("an empty list of marks: %v, want a corrupt vault", err)
	}
	// The positive control: the marks as written open.
	if err := renameOver(path, good); err != nil {
		t.Fatal(err)
	}
	changes(t, reopen(t, path, idPath, clk), "", 0)
}

// A file no commit has marked (one an earlier arca wrote) is marked by
// the hash of its lines: a cursor on it holds while they are as they
// were, and resets once this arca writes it (what an earlier arca wrote
// before cannot be told apart), and after. A new vault's cursor, marked by
// its first commit, holds through the first write.
func TestChangesMarkOfUnmarkedFile(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 6, time.UTC)
	path, idPath := legacyVault(t, []vault.Record{legacyRecord("app/a", "alpha", 1, at)})
	clk := &clock{t: at.Add(time.Hour)}
	f := reopen(t, path, idPath, clk)
	seen := changes(t, f, "", 0).Cursor
	if ch := changes(t, reopen(t, path, idPath, clk), seen, 0); ch.Reset || len(ch.Changes) != 0 || ch.Cursor != seen {
		t.Fatalf("a cursor on an unmarked file as it was: %+v", ch)
	}
	do(t, f, putV("app/b", "1"))
	if n := len(marksOf(t, path)); n != 1 {
		t.Fatalf("the first write of an unmarked file: %d marks, want 1", n)
	}
	for _, g := range []*Vault{f, reopen(t, path, idPath, clk)} {
		if ch := changes(t, g, seen, 0); !ch.Reset {
			t.Errorf("a cursor from before this arca first wrote the file: %+v, want a reset", ch)
		}
	}

	n, _, _, _ := histVault(t)
	fresh := changes(t, n, "", 0).Cursor
	do(t, n, putV("app/a", "1"))
	if ch := changes(t, n, fresh, 0); ch.Reset || len(ch.Changes) != 1 {
		t.Errorf("a new vault's cursor after its first write: %+v", ch)
	}
}
