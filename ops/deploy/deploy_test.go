package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/ops/deploy"
	"github.com/arca-secrets/arca/ops/opstest"
	"github.com/arca-secrets/arca/vault"
)

// fixture is a Service on a fresh file vault in a temp home, auditing to
// events, and a directory for templates and targets.
type fixture struct {
	svc    *ops.Service
	events *bytes.Buffer
	dir    string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{events: &bytes.Buffer{}, dir: t.TempDir()}
	f.svc = opstest.New(t, opstest.Options{Audit: f.events}).Service
	return f
}

func (f *fixture) put(t testing.TB, ref, value string) {
	t.Helper()
	if _, err := f.svc.Put(context.Background(), ops.Request{Ref: ref, Value: vault.NewSecret([]byte(value))}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) file(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const canary = "CANARY-d3pl0y"

// Every secret is read before any file is written: one missing secret
// leaves every target as it was, and what was read is withheld.
func TestFailingRefLeavesEveryTarget(t *testing.T) {
	f := newFixture(t)
	f.put(t, "arca://app/db", canary)
	a := deploy.Target{Name: "a", Template: f.file(t, "a.tmpl", "pw={{ arca://app/db }}\n"), Out: filepath.Join(f.dir, "a.conf"), Mode: 0o600}
	b := deploy.Target{Name: "b", Template: f.file(t, "b.tmpl", "x={{ arca://app/missing }}\n"), Out: filepath.Join(f.dir, "b.conf"), Mode: 0o600}
	f.file(t, "a.conf", "old a\n")
	_, err := deploy.Run(context.Background(), f.svc, []deploy.Target{a, b}, deploy.Options{})
	if ops.CodeOf(err) != manifest.NotFound || !strings.Contains(err.Error(), "target b (") || strings.Contains(err.Error(), canary) {
		t.Fatalf("err %v; want not_found naming target b", err)
	}
	if want := b.Template + ":1:3: arca://app/missing not found"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v; want it to say where: %s", err, want)
	}
	if read(t, a.Out) != "old a\n" {
		t.Fatal("a target was written although a ref of another failed")
	}
	if _, err := os.Stat(b.Out); !os.IsNotExist(err) {
		t.Fatal("the failing target was written")
	}
	ev := f.events.String()
	if !strings.Contains(ev, `"event":"get","op":"get","outcome":"ok","env":"default","ref":"app/db","version":1,"message":"for target a (`) ||
		!strings.Contains(ev, `"event":"error","op":"get","outcome":"not_found"`) || strings.Count(ev, `"ref":"app/db"`) != 3 {
		t.Fatalf("events: %s", ev)
	}
	if strings.Contains(ev, canary) {
		t.Fatal("a value reached the audit trail")
	}
}

// An unchanged target is not rewritten (its mtime stays); a changed one
// is, atomically, with its mode; --check writes nothing and says what
// would change.
func TestUnchangedAndCheck(t *testing.T) {
	f := newFixture(t)
	f.put(t, "arca://app/db", "one")
	tg := deploy.Target{Name: "app", Template: f.file(t, "app.tmpl", "pw={{ arca://app/db }}\n"), Out: filepath.Join(f.dir, "app.conf"), Mode: 0o640}
	run := func(o deploy.Options) deploy.Status {
		t.Helper()
		res, err := deploy.Run(context.Background(), f.svc, []deploy.Target{tg}, o)
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Status
	}
	if st := run(deploy.Options{}); st != deploy.Written || read(t, tg.Out) != "pw=one\n" {
		t.Fatalf("first deploy: %v %q", st, read(t, tg.Out))
	}
	if fi, _ := os.Stat(tg.Out); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(tg.Out, old, old); err != nil {
		t.Fatal(err)
	}
	if st := run(deploy.Options{}); st != deploy.Unchanged {
		t.Fatalf("second deploy: %v, want unchanged", st)
	}
	if fi, _ := os.Stat(tg.Out); !fi.ModTime().Equal(old) {
		t.Fatal("an unchanged target was rewritten")
	}
	f.put(t, "arca://app/db", "two")
	if st := run(deploy.Options{Check: true}); st != deploy.WouldChange || read(t, tg.Out) != "pw=one\n" {
		t.Fatalf("check: %v, file %q", st, read(t, tg.Out))
	}
	if st := run(deploy.Options{DryRun: true}); st != deploy.Listed {
		t.Fatalf("dry run: %v", st)
	}
	if st := run(deploy.Options{}); st != deploy.Written || read(t, tg.Out) != "pw=two\n" {
		t.Fatalf("deploy after a change: %v %q", st, read(t, tg.Out))
	}
	if left, _ := filepath.Glob(filepath.Join(f.dir, ".app.conf.arca-*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}

// BenchmarkDeploy100x1000 deploys 100 targets that together reference
// 1,000 secrets (10 each) from a file vault, each target rewritten.
func BenchmarkDeploy100x1000(b *testing.B) {
	f := newFixture(b)
	var targets []deploy.Target
	for i := range 100 {
		var tpl strings.Builder
		for k := range 10 {
			n := i*10 + k
			f.put(b, fmt.Sprintf("arca://app/s%04d", n), fmt.Sprintf("value-%d", n))
			fmt.Fprintf(&tpl, "key%d = {{ arca://app/s%04d }}\n", k, n)
		}
		targets = append(targets, deploy.Target{Name: fmt.Sprintf("t%03d", i), Template: f.file(b, fmt.Sprintf("t%03d.tmpl", i), tpl.String()), Out: filepath.Join(f.dir, fmt.Sprintf("t%03d.conf", i)), Mode: 0o600})
	}
	for b.Loop() {
		b.StopTimer()
		for _, tg := range targets {
			os.Remove(tg.Out)
		}
		f.events.Reset()
		b.StartTimer()
		if _, err := deploy.Run(context.Background(), f.svc, targets, deploy.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A FIFO where a target goes is refused at once, never waited on.
func TestFIFOTargetRefused(t *testing.T) {
	f := newFixture(t)
	f.put(t, "arca://app/db", "v")
	out := filepath.Join(f.dir, "fifo")
	if err := syscall.Mkfifo(out, 0o600); err != nil {
		t.Fatal(err)
	}
	tg := deploy.Target{Name: "f", Template: f.file(t, "f.tmpl", "{{ arca://app/db }}"), Out: out, Mode: 0o600}
	_, err := deploy.Run(context.Background(), f.svc, []deploy.Target{tg}, deploy.Options{})
	if err == nil || !strings.Contains(err.Error(), "is not a regular file") {
		t.Fatalf("err %v, want the FIFO refused", err)
	}
}

// A target that cannot be written, the last one here, stops the deploy
// before any file is written and any secret is read, naming the target
// and the path.
func TestUnwritableTargetWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  func(f *fixture) string
		want string
	}{
		{"missing directory", func(f *fixture) string { return filepath.Join(f.dir, "no-such", "c.conf") },
			"directory " + "DIR/no-such does not exist"},
		{"a file for a directory", func(f *fixture) string { return filepath.Join(f.file(t, "plain", ""), "c.conf") },
			"DIR/plain is not a directory"},
		{"a directory for the file", func(f *fixture) string {
			d := filepath.Join(f.dir, "c.conf")
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			return d
		}, "DIR/c.conf is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.put(t, "arca://app/db", canary)
			events := f.events.Len()
			tmpl := f.file(t, "t.tmpl", "pw={{ arca://app/db }}\n")
			a := deploy.Target{Name: "a", Template: tmpl, Out: filepath.Join(f.dir, "a.conf"), Mode: 0o600}
			b := deploy.Target{Name: "b", Template: tmpl, Out: filepath.Join(f.dir, "b.conf"), Mode: 0o600}
			c := deploy.Target{Name: "c", Template: tmpl, Out: tc.out(f), Mode: 0o600}
			f.file(t, "b.conf", "old b\n")
			_, err := deploy.Run(context.Background(), f.svc, []deploy.Target{a, b, c}, deploy.Options{})
			want := "target c (" + c.Out + "): " + strings.ReplaceAll(tc.want, "DIR", f.dir) + "; nothing was written"
			if ops.CodeOf(err) != manifest.OpError || err.Error() != want {
				t.Fatalf("err %v; want op_error %q", err, want)
			}
			if _, err := os.Stat(a.Out); !os.IsNotExist(err) {
				t.Error("target a was written")
			}
			if read(t, b.Out) != "old b\n" {
				t.Error("target b was written")
			}
			if ev := f.events.String()[events:]; ev != "" {
				t.Errorf("secrets were read for a deploy that cannot write: %s", ev)
			}
		})
	}
}
