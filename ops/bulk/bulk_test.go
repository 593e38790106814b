package bulk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/access"
)

func items(kv ...string) ItemList {
	var out ItemList
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Item{Ref: kv[i], Value: secret(kv[i+1]), Where: fmt.Sprintf("line %d", i/2+1)})
	}
	return out
}

func (f *fixture) value(t *testing.T, ref string) string {
	t.Helper()
	r, err := f.svc.Get(context.Background(), ops.Request{Ref: "arca://" + ref})
	if err != nil {
		t.Fatalf("get %s: %v", ref, err)
	}
	return string(r.Value.Reveal())
}

func TestImportPlansAndWrites(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/old", Value: secret("kept")}); err != nil {
		t.Fatal(err)
	}
	in := items("app/new", "n1", "app/old", "replacement")
	before := len(f.lines(t))
	plan, err := Import(ctx, f.svc, Request{Items: in, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Rows[0].Action != ActionCreate || plan.Rows[1].Action != ActionSkip || !plan.DryRun {
		t.Fatalf("dry run rows %+v", plan.Rows)
	}
	if ev := f.lines(t)[before:]; len(ev) != 1 || ev[0].Event != "list" {
		t.Fatalf("a dry run wrote events %+v, want one list", ev)
	}
	if _, err := f.svc.Get(ctx, ops.Request{Ref: "arca://app/new"}); ops.CodeOf(err) != manifest.NotFound {
		t.Fatalf("a dry run wrote a record: %v", err)
	}

	before = len(f.lines(t))
	res, err := Import(ctx, f.svc, Request{Items: in})
	if err != nil {
		t.Fatal(err)
	}
	if res.Count(ActionCreate) != 1 || res.Count(ActionSkip) != 1 || res.Rows[0].Version != 1 {
		t.Fatalf("rows %+v", res.Rows)
	}
	if f.value(t, "app/old") != "kept" || f.value(t, "app/new") != "n1" {
		t.Fatal("import without overwrite changed an existing record or missed a new one")
	}
	ev := f.lines(t)[before:]
	if len(ev) < 1 || ev[0].Event != "put" || ev[0].Ref != "app/new" || ev[0].Version != 1 || ev[0].Outcome != audit.OK {
		t.Fatalf("events %+v, want one put of app/new first", ev)
	}

	res, err = Import(ctx, f.svc, Request{Items: in, Overwrite: true})
	if err != nil || res.Count(ActionOverwrite) != 2 || res.Rows[1].Version != 2 {
		t.Fatalf("overwrite: rows %+v, err %v", res.Rows, err)
	}
	if f.value(t, "app/old") != "replacement" {
		t.Fatal("overwrite did not replace")
	}
}

// Nothing is written when any item is refused, and a refusal names where
// the item was read, never its value.
func TestImportRefusesWhole(t *testing.T) {
	f := newFixture(t, `
[[guardrails.rule]]
ref = "prod/*"
ops = ["put"]
reason = "prod is written by the deploy pipeline"
`)
	ctx := context.Background()
	for name, tc := range map[string]struct {
		in    ItemList
		code  manifest.Code
		parts []string
	}{
		"bad name":  {items("app/ok", "v", "app/bad name", canary), manifest.BadRequest, []string{"line 2"}},
		"empty":     {items("app/ok", "v", "app/empty", ""), manifest.BadRequest, []string{"line 2", "empty"}},
		"too big":   {items("app/ok", "v", "app/big", strings.Repeat("x", manifest.MaxValue+1)), manifest.BadRequest, []string{"line 2", "larger"}},
		"not utf-8": {items("app/ok", "v", "app/bin", "\xff\xfe"+canary), manifest.BadRequest, []string{"line 2", "UTF-8"}},
		"twice":     {items("app/ok", "v", "app/ok", canary), manifest.BadRequest, []string{"line 2", "line 1"}},
		"guardrail": {items("app/ok", "v", "prod/db", canary, "prod/api", canary), manifest.Denied, []string{"2 of 3", "prod/db"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Import(ctx, f.svc, Request{Items: tc.in})
			wantError(t, err, tc.code, tc.parts...)
			if strings.Contains(err.Error(), canary) {
				t.Errorf("error quotes a value: %v", err)
			}
			if _, err := f.svc.Get(ctx, ops.Request{Ref: "arca://app/ok"}); ops.CodeOf(err) != manifest.NotFound {
				t.Errorf("a refused import wrote app/ok: %v", err)
			}
		})
	}
	var denied int
	for _, e := range f.lines(t) {
		if e.Event == "denied" && e.Op == "put" && strings.HasPrefix(e.Ref, "prod/") {
			denied++
		}
	}
	if denied != 2 {
		t.Errorf("%d denied events, want one per denied record (2)", denied)
	}
	if strings.Contains(f.events.String(), canary) {
		t.Error("a value reached the audit trail")
	}
}

// A commit that fails after its events were written is followed by an
// error event for every record of it; a record that appeared between the
// plan and the write stops the import before anything of it is audited.
func TestImportCommitFailures(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	if _, err := f.svc.List(ctx, ops.Request{}); err != nil { // opens the store
		t.Fatal(err)
	}
	f.store.failCommit = true
	before := len(f.lines(t))
	_, err := Import(ctx, f.svc, Request{Items: items("app/a", "1", "app/b", "2")})
	wantError(t, err, manifest.OpError, "disk full")
	ev := f.lines(t)[before:]
	if len(ev) != 4 || ev[0].Outcome != audit.OK || ev[1].Outcome != audit.OK || ev[2].Outcome != audit.Error || ev[3].Outcome != audit.Error ||
		ev[2].Ref != "app/a" || ev[3].Ref != "app/b" || !strings.Contains(ev[3].Message, "not committed") {
		t.Fatalf("events %+v; want two puts then an error for each", ev)
	}

	f.store.failCommit = false
	if _, err := f.svc.Put(ctx, ops.Request{Ref: "arca://app/b", Value: secret("theirs")}); err != nil {
		t.Fatal(err)
	}
	f.store.hideList = true
	before = len(f.lines(t))
	_, err = Import(ctx, f.svc, Request{Items: items("app/a", "1", "app/b", "mine")})
	wantError(t, err, manifest.OpError, "app/b", "another writer")
	if ev := f.lines(t)[before:]; len(ev) != 0 {
		t.Fatalf("a refused unit wrote events %+v", ev)
	}
	f.store.hideList = false
	if f.value(t, "app/b") != "theirs" {
		t.Fatal("the other writer's record was overwritten")
	}
}

// A backup holds every record with its version and times; restored into
// an empty vault they come back as they were, and check verifies the file.
func TestBackupRestore(t *testing.T) {
	f := newFixture(t, `
[envs.dev]
vault = "dev"
[envs.copy]
vault = "copy"
[vaults.dev]
kind = "file"
[vaults.copy]
kind = "file"
`)
	ctx := context.Background()
	for i := range 5 {
		if _, err := f.svc.Put(ctx, ops.Request{Env: "dev", Ref: fmt.Sprintf("arca://app/k%d", i), Value: secret(fmt.Sprintf("v%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.Rotate(ctx, ops.Request{Env: "dev", Ref: "arca://app/k1", Value: secret("rotated")}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil { // a backup may sit where others list files
		t.Fatal(err)
	}
	path := filepath.Join(dir, "dev.backup")
	b, err := Backup(ctx, f.svc, "dev", path)
	if err != nil || b.Records != 5 {
		t.Fatalf("backup: %+v %v", b, err)
	}
	if _, err := Backup(ctx, f.svc, "dev", path); ops.CodeOf(err) != manifest.BadRequest {
		t.Fatalf("a backup over an existing file: %v, want bad_request", err)
	}
	chk, err := CheckBackup(ctx, f.svc, "copy", path)
	if err != nil || !chk.Healthy || chk.Records != 5 {
		t.Fatalf("check of the backup: %+v %v", chk, err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	chk, err = CheckBackup(ctx, f.svc, "copy", path)
	if err != nil || chk.Healthy || len(chk.Problems) != 1 || !strings.Contains(chk.Problems[0], "backup file "+path+" is readable by other users (mode 0644)") {
		t.Fatalf("check of a backup others can read: %+v %v", chk, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Into a vault that is not there yet: made, wrapped as the backup is.
	_, vc, _ := f.svc.Config().VaultFor("copy")
	if err := os.Remove(vc.Path); err != nil {
		t.Fatal(err)
	}
	res, err := Restore(ctx, f.svc, "copy", path, false, false)
	if err != nil || res.Count(ActionCreate) != 5 {
		t.Fatalf("restore: %+v %v", res, err)
	}
	if rs, err := access.Recipients(ctx, f.svc, "copy"); err != nil || strings.Join(rs.Recipients, " ") != strings.Join(b.Recipients, " ") {
		t.Fatalf("restored vault wrapped to %v (%v), want the backup's %v", rs.Recipients, err, b.Recipients)
	}
	want, _ := f.svc.Get(ctx, ops.Request{Env: "dev", Ref: "arca://app/k1"})
	got, err := f.svc.Get(ctx, ops.Request{Env: "copy", Ref: "arca://app/k1"})
	if err != nil || got.Version != 2 || got.Stamp != want.Stamp || string(got.Value.Reveal()) != "rotated" {
		t.Fatalf("restored app/k1: version %d %+v, err %v; want version 2 %+v", got.Version, got.Stamp, err, want.Stamp)
	}
	again, err := Restore(ctx, f.svc, "copy", path, false, false)
	if err != nil || again.Count(ActionSkip) != 5 {
		t.Fatalf("restore over itself: %+v %v, want every record skipped", again, err)
	}
}

// A get guardrail holds for a backup (restored elsewhere, it would hand
// the values out there), a list guardrail for a bulk write's plan, and a
// refused restore makes no vault.
func TestBulkGuardrails(t *testing.T) {
	f := newFixture(t, `
[envs.prod]
vault = "prod"
[envs.dev]
vault = "dev"
[envs.ops]
vault = "ops"
[vaults.prod]
kind = "file"
[vaults.dev]
kind = "file"
[vaults.ops]
kind = "file"
[[guardrails.rule]]
env = "prod"
ref = "billing/*"
ops = ["get"]
reason = "billing keys stay in prod"
[[guardrails.rule]]
env = "dev"
ops = ["list"]
reason = "no listing dev"
[[guardrails.rule]]
env = "dev"
ref = "billing/*"
ops = ["put"]
reason = "billing keys are not for dev"
`)
	ctx := context.Background()
	if _, err := f.svc.Put(ctx, ops.Request{Env: "prod", Ref: "arca://billing/stripe", Value: secret(canary)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prod.backup")
	_, err := Backup(ctx, f.svc, "prod", path)
	wantError(t, err, manifest.Denied, "billing/stripe")
	if _, serr := os.Stat(path); !os.IsNotExist(serr) {
		t.Fatal("a refused backup left a file")
	}
	_, err = Import(ctx, f.svc, Request{Env: "dev", Items: items("app/a", "1")})
	wantError(t, err, manifest.Denied, "no listing dev", "lists the vault first")

	// A backup of a vault without the rule, restored where billing is
	// refused: nothing is made.
	if _, err := f.svc.Put(ctx, ops.Request{Env: "ops", Ref: "arca://billing/stripe", Value: secret(canary)}); err != nil {
		t.Fatal(err)
	}
	if _, err := Backup(ctx, f.svc, "ops", path); err != nil {
		t.Fatal(err)
	}
	_, vc, _ := f.svc.Config().VaultFor("dev")
	if err := os.Remove(vc.Path); err != nil {
		t.Fatal(err)
	}
	_, err = Restore(ctx, f.svc, "dev", path, false, false)
	wantError(t, err, manifest.Denied, "billing/stripe")
	if _, serr := os.Stat(vc.Path); !os.IsNotExist(serr) {
		t.Fatal("a refused restore made the vault")
	}
}
