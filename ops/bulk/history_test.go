package bulk

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
)

const twoVaults = `
[envs.dev]
vault = "dev"
[envs.copy]
vault = "copy"
[vaults.dev]
kind = "file"
[vaults.copy]
kind = "file"
`

// apply applies w to env's store, failing the test on an error.
func (f *fixture) apply(t *testing.T, env string, w vault.Write) vault.Meta {
	t.Helper()
	st, err := f.svc.Store(env)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Apply(context.Background(), w, func(vault.Meta) error { return nil })
	if err != nil {
		t.Fatalf("%v of %s in %s: %v", w.Kind, w.Name, env, err)
	}
	return m
}

// chain is the chain of name in env's vault.
func (f *fixture) chain(t *testing.T, env, name string) vault.Chain {
	t.Helper()
	st, err := f.svc.Store(env)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Chain(context.Background(), name)
	if err != nil {
		t.Fatalf("chain of %s in %s: %v", name, env, err)
	}
	return c
}

// historyVault fills env dev with app/a at version 3 (two earlier
// versions), app/gone removed at version 2 (soft-deleted, two versions
// kept), and app/erased, every version of it destroyed (its highest, 1,
// kept alone).
func historyVault(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	for _, w := range []struct{ op, ref, value string }{
		{"put", "app/a", "a1"}, {"rotate", "app/a", "a2"}, {"rotate", "app/a", "a3"},
		{"put", "app/gone", "g1"}, {"put", "app/gone", "g2"}, {"rm", "app/gone", ""}, {"put", "app/erased", "e1"},
	} {
		req := ops.Request{Env: "dev", Ref: "arca://" + w.ref, Value: secret(w.value)}
		var err error
		switch w.op {
		case "put":
			_, err = f.svc.Put(ctx, req)
		case "rotate":
			_, err = f.svc.Rotate(ctx, req)
		case "rm":
			_, err = f.svc.Rm(ctx, req)
		}
		if err != nil {
			t.Fatalf("%s %s: %v", w.op, w.ref, err)
		}
	}
	f.apply(t, "dev", vault.Write{Kind: vault.Destroy, Name: "app/erased"})
}

// sameChain fails unless got holds what want does: every version with its
// value and times, the soft delete and the highest version.
func sameChain(t *testing.T, got, want vault.Chain) {
	t.Helper()
	recs := func(c vault.Chain) []vault.Record {
		if c.HasCurrent {
			return append([]vault.Record{c.Current}, c.Previous...)
		}
		return c.Previous
	}
	g, w := recs(got), recs(want)
	same := got.HasCurrent == want.HasCurrent && got.Highest == want.Highest && got.DeletedAt.Equal(want.DeletedAt) && len(g) == len(w)
	for i := 0; same && i < len(g); i++ {
		same = g[i].Version == w[i].Version && g[i].CreatedAt.Equal(w[i].CreatedAt) && g[i].UpdatedAt.Equal(w[i].UpdatedAt) &&
			g[i].RotatedAt.Equal(w[i].RotatedAt) && string(g[i].Value.Reveal()) == string(w[i].Value.Reveal())
	}
	if !same {
		t.Fatalf("%s: versions %v (current %v, highest %d, deleted %v), want %v (current %v, highest %d, deleted %v)", want.Name,
			versionsOf(g), got.HasCurrent, got.Highest, got.DeletedAt, versionsOf(w), want.HasCurrent, want.Highest, want.DeletedAt)
	}
}

func versionsOf(rs []vault.Record) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.Version
	}
	return out
}

// A backup holds every name whole: each kept version with its value and
// times, the soft-deleted name with when it was deleted, the erased name's
// highest version. Restored into an empty vault every name is as it was,
// and its numbering continues there.
func TestBackupRestoreKeepsHistory(t *testing.T) {
	f := newFixture(t, twoVaults)
	ctx := context.Background()
	historyVault(t, f)
	path := filepath.Join(t.TempDir(), "dev.backup")
	b, err := Backup(ctx, f.svc, "dev", path)
	if err != nil || b.Records != 1 || b.Versions != 4 || b.Deleted != 2 || b.Held() != "4 earlier versions, 2 deleted names" {
		t.Fatalf("backup: %+v (%q) %v", b, b.Held(), err)
	}
	if !strings.Contains(f.events.String(), `"message":"1 records (4 earlier versions, 2 deleted names) to `+path) {
		t.Fatalf("the backup event does not say what it holds:\n%s", f.events)
	}
	if chk, err := CheckBackup(ctx, f.svc, "copy", path); err != nil || !chk.Healthy {
		t.Fatalf("check of the backup: %+v %v", chk, err)
	}
	before := len(f.lines(t))
	res, err := Restore(ctx, f.svc, "copy", path, false, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{{"app/a", 3, ActionCreate, false}, {"app/erased", 1, ActionDeleted, true}, {"app/gone", 2, ActionDeleted, true}}
	if !slices.Equal(res.Rows, want) {
		t.Fatalf("rows %+v, want %+v", res.Rows, want)
	}
	ev := f.lines(t)[before:]
	var puts []string
	for _, e := range ev {
		if e.Event == "put" && e.Outcome == audit.OK {
			puts = append(puts, e.Ref+" "+e.Message)
		}
	}
	if strings.Join(puts, "|") != "app/a |app/erased "+msgErased+"|app/gone "+msgDeleted {
		t.Fatalf("put events %q", puts)
	}
	for _, name := range []string{"app/a", "app/gone", "app/erased"} {
		sameChain(t, f.chain(t, "copy", name), f.chain(t, "dev", name))
	}
	// The numbering goes on where it stopped.
	if m := f.apply(t, "copy", vault.Write{Kind: vault.Undelete, Name: "app/gone"}); m.Version != 3 {
		t.Fatalf("undelete of the restored app/gone made version %d, want 3", m.Version)
	}
	if m := f.apply(t, "copy", vault.Write{Kind: vault.Put, Name: "app/erased", Value: secret("e2")}); m.Version != 2 {
		t.Fatalf("a put of the restored app/erased made version %d, want 2", m.Version)
	}
	if strings.Contains(f.events.String(), "a1") && strings.Contains(f.events.String(), "g1") {
		t.Fatal("a value reached the audit trail")
	}
}

// A restore into a vault that holds the names lowers no version, with or
// without --overwrite: a name the vault holds at a higher version gets the
// backup's value as a new version (overwrite) or is skipped; one it holds
// at a lower version gets the backup's versions above its own; a deleted
// name the vault knows is left as the vault holds it.
func TestRestoreNeverLowers(t *testing.T) {
	f := newFixture(t, twoVaults)
	ctx := context.Background()
	historyVault(t, f)
	path := filepath.Join(t.TempDir(), "dev.backup")
	if _, err := Backup(ctx, f.svc, "dev", path); err != nil {
		t.Fatal(err)
	}
	for _, w := range []vault.Write{
		{Kind: vault.Put, Name: "app/a", Value: secret("c1")}, // version 1, below the backup's 3
		{Kind: vault.Put, Name: "app/gone", Value: secret("c1")},
		{Kind: vault.Put, Name: "app/gone", Value: secret("c2")},
		{Kind: vault.Put, Name: "app/gone", Value: secret("c3")},
		{Kind: vault.Put, Name: "app/gone", Value: secret("c4")}, // version 4, above the backup's deleted 2
	} {
		f.apply(t, "copy", w)
	}
	res, err := Restore(ctx, f.svc, "copy", path, false, false)
	if err != nil || !slices.Equal(res.Rows, []Row{{"app/a", 0, ActionSkip, false}, {"app/erased", 1, ActionDeleted, true}, {"app/gone", 0, ActionSkip, true}}) {
		t.Fatalf("restore: %+v %v", res.Rows, err)
	}
	res, err = Restore(ctx, f.svc, "copy", path, true, false)
	if err != nil || !slices.Equal(res.Rows, []Row{{"app/a", 3, ActionOverwrite, false}, {"app/erased", 0, ActionSkip, true}, {"app/gone", 0, ActionSkip, true}}) {
		t.Fatalf("restore --overwrite: %+v %v", res.Rows, err)
	}
	a := f.chain(t, "copy", "app/a")
	if got := versionsOf(append([]vault.Record{a.Current}, a.Previous...)); !slices.Equal(got, []uint64{3, 2, 1}) || string(a.Current.Value.Reveal()) != "a3" ||
		string(a.Previous[0].Value.Reveal()) != "a2" || string(a.Previous[1].Value.Reveal()) != "c1" {
		t.Fatalf("app/a after restore --overwrite: versions %v", got)
	}
	if g := f.chain(t, "copy", "app/gone"); g.Current.Version != 4 || string(g.Current.Value.Reveal()) != "c4" {
		t.Fatalf("app/gone after restore --overwrite: version %d", g.Current.Version)
	}
	// The vault's app/a is now above the backup's: --overwrite writes the
	// backup's value as a new version, never back to 3.
	f.apply(t, "copy", vault.Write{Kind: vault.Put, Name: "app/a", Value: secret("c5")}) // version 4
	res, err = Restore(ctx, f.svc, "copy", path, true, false)
	if err != nil || res.Rows[0] != (Row{"app/a", 5, ActionOverwrite, false}) {
		t.Fatalf("restore --overwrite over a higher version: %+v %v", res.Rows, err)
	}
	if a := f.chain(t, "copy", "app/a"); a.Current.Version != 5 || string(a.Current.Value.Reveal()) != "a3" || a.Previous[0].Version != 4 {
		t.Fatalf("app/a: version %d, previous %v", a.Current.Version, versionsOf(a.Previous))
	}
}

// A dry run plans the deleted names too and writes nothing; a guardrail on
// put holds for a deleted name as for a record.
func TestRestoreDeletedPlanAndGuardrails(t *testing.T) {
	f := newFixture(t, twoVaults+`
[[guardrails.rule]]
env = "copy"
ref = "app/gone"
ops = ["put"]
reason = "gone stays gone"
`)
	ctx := context.Background()
	historyVault(t, f)
	path := filepath.Join(t.TempDir(), "dev.backup")
	if _, err := Backup(ctx, f.svc, "dev", path); err != nil {
		t.Fatal(err)
	}
	_, err := Restore(ctx, f.svc, "copy", path, false, true)
	wantError(t, err, "denied", "app/gone", "1 of 3")
	if _, err := f.svc.Store("copy"); err != nil {
		t.Fatal(err)
	}
	st, _ := f.svc.Store("copy")
	if cs, err := st.Chains(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("a refused restore wrote %d names (%v)", len(cs), err)
	}
	f2 := newFixture(t, twoVaults)
	historyVault(t, f2)
	path2 := filepath.Join(t.TempDir(), "dev.backup")
	if _, err := Backup(ctx, f2.svc, "dev", path2); err != nil {
		t.Fatal(err)
	}
	res, err := Restore(ctx, f2.svc, "copy", path2, false, true)
	if err != nil || !res.DryRun || res.Count(ActionDeleted) != 2 || res.Count(ActionCreate) != 1 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	st2, _ := f2.svc.Store("copy")
	if cs, err := st2.Chains(ctx); err != nil || len(cs) != 0 {
		t.Fatalf("a dry run wrote %d names (%v)", len(cs), err)
	}
}

// A backup made before vaults kept history (testdata/old.backup: app/db
// at version 2, app/api at 1, made by arca before history) restores as it
// did: current records with their versions and times.
func TestOldBackupRestores(t *testing.T) {
	id, err := filepath.Abs("testdata/old.identity")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "[envs.old]\nvault = \"old\"\n[vaults.old]\nkind = \"file\"\nidentity = \""+id+"\"\n")
	ctx := context.Background()
	res, err := Restore(ctx, f.svc, "old", "testdata/old.backup", false, false)
	if err != nil || !slices.Equal(res.Rows, []Row{{"app/api", 1, ActionCreate, false}, {"app/db", 2, ActionCreate, false}}) {
		t.Fatalf("restore of an old backup: %+v %v", res.Rows, err)
	}
	c := f.chain(t, "old", "app/db")
	want := time.Date(2026, 12, 6, 16, 50, 9, 538296682, time.UTC) // when the backup's vault was made
	if string(c.Current.Value.Reveal()) != "two" || len(c.Previous) != 0 || !c.Current.CreatedAt.Equal(want) || c.Highest != 2 {
		t.Fatalf("app/db from the old backup: version %d, %d previous, created %v", c.Current.Version, len(c.Previous), c.Current.CreatedAt)
	}
	if m := f.apply(t, "old", vault.Write{Kind: vault.Put, Name: "app/db", Value: secret("three")}); m.Version != 3 {
		t.Fatalf("a put after the restore made version %d, want 3", m.Version)
	}
}

// A backup keeps what the vault held however old: checked long after a
// name was removed (past any keep_deleted), the backup still holds it, and
// a restore brings it back deleted, with when it was.
func TestBackupKeepsOldDeletes(t *testing.T) {
	f := newFixture(t, twoVaults)
	ctx := context.Background()
	historyVault(t, f)
	path := filepath.Join(t.TempDir(), "dev.backup")
	if _, err := Backup(ctx, f.svc, "dev", path); err != nil {
		t.Fatal(err)
	}
	f.later = 3 * vault.DefaultKeepDeleted
	if chk, err := CheckBackup(ctx, f.svc, "copy", path); err != nil || !chk.Healthy {
		t.Fatalf("check of the backup: %+v %v", chk, err)
	}
	res, err := Restore(ctx, f.svc, "copy", path, false, false)
	if err != nil || res.Rows[2] != (Row{"app/gone", 2, ActionDeleted, true}) {
		t.Fatalf("restore: %+v %v", res.Rows, err)
	}
	if got, want := f.chain(t, "copy", "app/gone"), f.chain(t, "dev", "app/gone"); !got.DeletedAt.Equal(want.DeletedAt) || len(got.Previous) != 2 {
		t.Fatalf("app/gone restored deleted at %v with %d versions, want %v and 2", got.DeletedAt, len(got.Previous), want.DeletedAt)
	}
}

// A backup keeps every version the vault keeps, beyond the default
// max_versions; a restore keeps as many as the vault it writes to does.
func TestBackupKeepsEveryVersion(t *testing.T) {
	f := newFixture(t, twoVaults)
	ctx := context.Background()
	h := vault.History{MaxVersions: 30, KeepDeleted: vault.DefaultKeepDeleted}
	for _, env := range []string{"dev", "copy"} {
		st, err := f.svc.Store(env)
		if err != nil {
			t.Fatal(err)
		}
		st.SetHistory(h)
	}
	for i := range 25 {
		f.apply(t, "dev", vault.Write{Kind: vault.Put, Name: "app/k", Value: secret(string(rune('a' + i)))})
	}
	path := filepath.Join(t.TempDir(), "dev.backup")
	b, err := Backup(ctx, f.svc, "dev", path)
	if err != nil || b.Versions != 24 {
		t.Fatalf("backup: %+v %v", b, err)
	}
	if _, err := Restore(ctx, f.svc, "copy", path, false, false); err != nil {
		t.Fatal(err)
	}
	sameChain(t, f.chain(t, "copy", "app/k"), f.chain(t, "dev", "app/k"))
}

// Into a vault that holds names soft-deleted: a name the backup holds
// deleted too is planned and left as the vault holds it, a dry run saying
// so; a record the backup holds comes back over the deleted name, as a
// version above the vault's highest.
func TestRestoreOverDeletedNames(t *testing.T) {
	f := newFixture(t, twoVaults)
	ctx := context.Background()
	historyVault(t, f)
	path := filepath.Join(t.TempDir(), "dev.backup")
	if _, err := Backup(ctx, f.svc, "dev", path); err != nil {
		t.Fatal(err)
	}
	for _, w := range []vault.Write{
		{Kind: vault.Put, Name: "app/a", Value: secret("c1")}, {Kind: vault.Put, Name: "app/a", Value: secret("c2")},
		{Kind: vault.Put, Name: "app/a", Value: secret("c3")}, {Kind: vault.Remove, Name: "app/a"},
		{Kind: vault.Put, Name: "app/gone", Value: secret("c1")}, {Kind: vault.Remove, Name: "app/gone"},
	} {
		f.apply(t, "copy", w)
	}
	want := []Row{{"app/a", 0, ActionCreate, false}, {"app/erased", 0, ActionDeleted, true}, {"app/gone", 0, ActionSkip, true}}
	if res, err := Restore(ctx, f.svc, "copy", path, false, true); err != nil || !slices.Equal(res.Rows, want) {
		t.Fatalf("dry run: %+v %v, want %+v", res.Rows, err, want)
	}
	res, err := Restore(ctx, f.svc, "copy", path, false, false)
	want[0].Version, want[1].Version = 4, 1
	if err != nil || !slices.Equal(res.Rows, want) {
		t.Fatalf("restore: %+v %v, want %+v", res.Rows, err, want)
	}
	a := f.chain(t, "copy", "app/a")
	if a.Deleted() || a.Current.Version != 4 || string(a.Current.Value.Reveal()) != "a3" || a.Previous[0].Version != 3 || string(a.Previous[0].Value.Reveal()) != "c3" {
		t.Fatalf("app/a: version %d, previous %v, deleted %v", a.Current.Version, versionsOf(a.Previous), a.DeletedAt)
	}
	if g := f.chain(t, "copy", "app/gone"); !g.Deleted() || len(g.Previous) != 1 || string(g.Previous[0].Value.Reveal()) != "c1" {
		t.Fatalf("app/gone: %d versions, deleted %v: the vault's own should stand", len(g.Previous), g.DeletedAt)
	}
}
