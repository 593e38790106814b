package access

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/audit"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/file"
)

// The rotation tests run over two file vaults, a and b, one identity.
const rotateConfig = `default_env = "a"
[envs.a]
vault = "a"
[envs.b]
vault = "b"
[vaults.a]
kind = "file"
path = "%[1]s/a.vault"
[vaults.b]
kind = "file"
path = "%[1]s/b.vault"
`

// rotateFixture is a home with vaults a and b made by Init, each holding
// app/db, and a copy of the identity they open with.
type rotateFixture struct {
	dir, id, oldCopy string
	fail             map[string]bool // vault paths whose key changes fail
}

func newRotateFixture(t *testing.T) *rotateFixture {
	t.Helper()
	f := &rotateFixture{dir: t.TempDir(), fail: map[string]bool{}}
	f.id = filepath.Join(f.dir, "identity.txt")
	f.oldCopy = filepath.Join(f.dir, "old-identity.txt")
	s, _ := f.service(t)
	for _, env := range []string{"a", "b"} {
		if _, err := Init(s, env); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(context.Background(), ops.Request{Env: env, Ref: "arca://app/db", Value: vault.NewSecret([]byte("value of " + env))}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(f.id)
	if err == nil {
		err = os.WriteFile(f.oldCopy, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// service is a fresh Service on the fixture's config, auditing to a sink.
func (f *rotateFixture) service(t testing.TB) (*ops.Service, *sink) {
	t.Helper()
	s, out, err := f.newService()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, out
}

func (f *rotateFixture) newService() (*ops.Service, *sink, error) {
	cfg, err := ops.ParseConfig([]byte(fmt.Sprintf(rotateConfig, f.dir)), filepath.Join(f.dir, "arca.toml"), func(k string) string {
		switch k {
		case "HOME":
			return f.dir
		case "ARCA_IDENTITY":
			return f.id
		}
		return ""
	})
	if err != nil {
		return nil, nil, err
	}
	out := &sink{}
	s := ops.New(ops.Options{Config: cfg, Audit: audit.NewWriter(out, audit.SourceCLI, nil), Backends: pathFailing{f.fail}})
	return s, out, nil
}

// opens reports which of vaults a and b the identity file idPath opens,
// reading each one's record.
func (f *rotateFixture) opens(t testing.TB, idPath string) []string {
	t.Helper()
	var out []string
	for _, env := range []string{"a", "b"} {
		st, err := file.Open(filepath.Join(f.dir, env+".vault"), idPath, time.Now)
		if err != nil {
			continue
		}
		r, err := st.Get(context.Background(), "app/db")
		st.Close()
		if err != nil {
			t.Fatalf("vault %s opens with %s but its record does not: %v", env, idPath, err)
		}
		if got := string(r.Value.Reveal()); got != "value of "+env {
			t.Fatalf("vault %s holds %q", env, got)
		}
		out = append(out, env)
	}
	return out
}

// done checks the end of a rotation: both vaults list the new key alone
// and open with the identity file, the old identity opens neither, and
// nothing of the rotation is left beside the identity file.
func (f *rotateFixture) done(t *testing.T, newKey string) {
	t.Helper()
	if got := f.opens(t, f.id); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("the identity file opens %v, want a and b", got)
	}
	if got := f.opens(t, f.oldCopy); len(got) != 0 {
		t.Fatalf("the old identity still opens %v", got)
	}
	if key, err := publicKey(f.id); err != nil || key != newKey {
		t.Fatalf("the identity file holds %s (%v), want %s", key, err, newKey)
	}
	s, _ := f.service(t)
	for _, env := range []string{"a", "b"} {
		res, err := Recipients(context.Background(), s, env)
		if err != nil || !slices.Equal(res.Recipients, []string{newKey}) {
			t.Fatalf("vault %s lists %v (%v), want %s alone", env, res.Recipients, err, newKey)
		}
	}
	left, err := filepath.Glob(f.id + ".*")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("left beside the identity: %v", left)
	}
}

// pathFailing opens file vaults whose rekey fails for the vault files
// named in fail.
type pathFailing struct{ fail map[string]bool }

func (b pathFailing) Open(_ string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	st, err := file.Open(vc.Path, vc.Identity, now)
	if err != nil {
		return nil, err
	}
	return rekeyFailing{Vault: st, fail: b.fail[filepath.Base(vc.Path)]}, nil
}

// rekeyFailing is a file vault whose Rekey fails when fail is set.
type rekeyFailing struct {
	*file.Vault
	fail bool
}

func (k rekeyFailing) Rekey(ctx context.Context) (int, error) {
	if k.fail {
		return 0, errors.New("disk full")
	}
	return k.Vault.Rekey(ctx)
}

func (pathFailing) Create(ctx context.Context, name string, vc ops.VaultConfig, rs []age.Recipient) (bool, error) {
	return fileBackends{}.Create(ctx, name, vc, rs)
}

func (pathFailing) Problems(ops.VaultConfig) []string { return nil }

// rotationPoints are the points a whole rotation of the fixture passes.
func rotationPoints(t *testing.T) []string {
	t.Helper()
	f := newRotateFixture(t)
	s, _ := f.service(t)
	var points []string
	if _, err := RotateIdentityAt(context.Background(), s, "", func(p string) error {
		points = append(points, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"made the new identity", "added a", "added b", "kept the old identity", "replaced the identity file",
		"removed the old key of a", "re-keyed a", "noted a", "removed the old key of b", "re-keyed b", "noted b", "removed the old identity"}
	if !slices.Equal(points, want) {
		t.Fatalf("points %q, want %q", points, want)
	}
	return points
}

var errStopped = errors.New("stopped here")

// A rotation stopped after any change it makes leaves the identity file
// opening both vaults, and run again it finishes, with the new identity
// the stopped run made, each change made once (but a rekey whose noting
// was cut off, made again).
func TestRotateIdentityStoppedAnywhere(t *testing.T) {
	for _, stop := range rotationPoints(t) {
		t.Run(stop, func(t *testing.T) {
			f := newRotateFixture(t)
			s, out := f.service(t)
			_, err := RotateIdentityAt(context.Background(), s, "", func(p string) error {
				// At every point the identity file opens both vaults.
				if got := f.opens(t, f.id); !slices.Equal(got, []string{"a", "b"}) {
					t.Fatalf("at %q the identity file opens %v", p, got)
				}
				if p == stop {
					return errStopped
				}
				return nil
			})
			if !errors.Is(err, errStopped) {
				t.Fatalf("rotation: %v, want it stopped", err)
			}
			newKey, err := publicKey(f.id + ".next")
			if err != nil {
				newKey, err = publicKey(f.id)
			}
			if err != nil {
				t.Fatal(err)
			}
			again, out2 := f.service(t)
			rot, err := RotateIdentity(context.Background(), again, "")
			if err != nil {
				t.Fatalf("run again: %v", err)
			}
			if rot.NewKey != newKey || !slices.Equal(rot.Vaults, []string{"a", "b"}) {
				t.Fatalf("rotation %+v, want new key %s", rot, newKey)
			}
			if old, _ := publicKey(f.oldCopy); rot.OldKey != old {
				t.Fatalf("old key %s, want %s", rot.OldKey, old)
			}
			f.done(t, newKey)
			count := map[string]int{}
			for _, e := range append(out.events(t), out2.events(t)...) {
				if e.Outcome != "ok" {
					t.Fatalf("event %+v", e)
				}
				verb, _, _ := strings.Cut(e.Message, " age1")
				count[e.Env+" "+e.Op+" "+verb]++
			}
			want := map[string]int{
				"a recipients add": 1, "a recipients remove": 1, "a rekey replace the data key and re-seal every record": 1,
				"b recipients add": 1, "b recipients remove": 1, "b rekey replace the data key and re-seal every record": 1,
			}
			if v, ok := strings.CutPrefix(stop, "re-keyed "); ok {
				want[v+" rekey replace the data key and re-seal every record"]++
			}
			if fmt.Sprint(count) != fmt.Sprint(want) {
				t.Fatalf("changes made %v, want %v", count, want)
			}
		})
	}
}

// The rotation of the issue: stopped in the rekey of the second vault,
// after the first was done and the second had dropped the old key. The
// identity file opens both meanwhile, the message says what to keep, and
// run again it finishes.
func TestRotateIdentityStoppedOnSecondVault(t *testing.T) {
	f := newRotateFixture(t)
	f.fail["b.vault"] = true
	s, _ := f.service(t)
	_, err := RotateIdentity(context.Background(), s, "")
	want := fmt.Sprintf(`identity rotation stopped at re-keying vault "b": rekey of env "b" was audited but did not land: disk full; %[1]s holds the new identity and %[1]s.old the old one: keep both and run arca identity rotate again to carry on`, f.id)
	if err == nil || err.Error() != want {
		t.Fatalf("rotation: %v\nwant: %s", err, want)
	}
	if got := f.opens(t, f.id); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("the stopped rotation leaves the identity file opening %v", got)
	}
	newKey, err := publicKey(f.id)
	if err != nil {
		t.Fatal(err)
	}
	f.fail["b.vault"] = false
	again, _ := f.service(t)
	if _, err := RotateIdentity(context.Background(), again, ""); err != nil {
		t.Fatalf("run again: %v", err)
	}
	f.done(t, newKey)
}

// killAtVar names the point where the child process of
// TestRotateIdentityKilled kills itself; killDirVar, its fixture.
const (
	killAtVar  = "ACCESS_TEST_ROTATE_KILL_AT"
	killDirVar = "ACCESS_TEST_ROTATE_DIR"
)

func TestMain(m *testing.M) {
	if at := os.Getenv(killAtVar); at != "" {
		os.Exit(rotateUntilKilled(at, os.Getenv(killDirVar)))
	}
	os.Exit(m.Run())
}

// rotateUntilKilled rotates the identity of the fixture in dir and sends
// itself SIGKILL at the point at. It returns only if it was not killed.
func rotateUntilKilled(at, dir string) int {
	f := &rotateFixture{dir: dir, id: filepath.Join(dir, "identity.txt"), fail: map[string]bool{}}
	s, _, err := f.newService()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	_, err = RotateIdentityAt(context.Background(), s, "", func(p string) error {
		if p == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return nil
	})
	fmt.Fprintf(os.Stderr, "not killed at %q: %v\n", at, err)
	return 3
}

// A rotation whose process is killed (SIGKILL) after any change it makes
// is finished by the next run.
func TestRotateIdentityKilled(t *testing.T) {
	for _, at := range rotationPoints(t) {
		t.Run(at, func(t *testing.T) {
			f := newRotateFixture(t)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), killAtVar+"="+at, killDirVar+"="+f.dir)
			outb, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("child: %v\n%s", err, outb)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v, want it killed\n%s", err, outb)
			}
			if got := f.opens(t, f.id); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("killed at %q, the identity file opens %v", at, got)
			}
			newKey, err := publicKey(f.id + ".next")
			if err != nil {
				newKey, err = publicKey(f.id)
			}
			if err != nil {
				t.Fatal(err)
			}
			s, _ := f.service(t)
			if _, err := RotateIdentity(context.Background(), s, ""); err != nil {
				t.Fatalf("run again: %v", err)
			}
			f.done(t, newKey)
		})
	}
}

// An IDENTITY.old the rotation did not make (a copy kept by hand, say) is
// never taken for the old identity of a rotation, nor removed.
func TestRotateIdentityLeavesAnOldItDidNotMake(t *testing.T) {
	f := newRotateFixture(t)
	other := newRotateFixture(t)
	mine, err := os.ReadFile(other.id)
	if err != nil {
		t.Fatal(err)
	}
	for _, withNext := range []bool{false, true} {
		if err := os.WriteFile(f.id+".old", mine, 0o600); err != nil {
			t.Fatal(err)
		}
		if withNext {
			if err := os.WriteFile(f.id+".next", mine, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.id+".old", []byte("# mine\n"+string(mine)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before, err := os.ReadFile(f.id + ".old")
		if err != nil {
			t.Fatal(err)
		}
		s, out := f.service(t)
		if _, err := RotateIdentity(context.Background(), s, ""); err == nil || !strings.Contains(err.Error(), f.id+".old") {
			t.Fatalf("rotation with a stray %s.old (next: %v): %v", f.id, withNext, err)
		}
		if after, err := os.ReadFile(f.id + ".old"); err != nil || string(after) != string(before) {
			t.Fatalf("the stray file was changed: %v", err)
		}
		if ev := out.events(t); len(ev) != 0 {
			t.Fatalf("events %+v, want none", ev)
		}
		if got := f.opens(t, f.oldCopy); !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("the identity opens %v", got)
		}
	}
}

// A vault the identity does not open stops the rotation before the new
// identity takes the file's place, that vault unchanged; once it opens,
// the rotation carries on.
func TestRotateIdentityStopsAtAVaultItDoesNotOpen(t *testing.T) {
	f := newRotateFixture(t)
	other := newRotateFixture(t)
	b := filepath.Join(f.dir, "b.vault")
	mine, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.ReadFile(filepath.Join(other.dir, "b.vault"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := f.service(t)
	_, err = RotateIdentity(context.Background(), s, "")
	if err == nil || !strings.Contains(err.Error(), `stopped at adding the new key of vault "b": `) || !strings.Contains(err.Error(), "cannot unwrap the data key") {
		t.Fatalf("rotation: %v", err)
	}
	if after, err := os.ReadFile(b); err != nil || string(after) != string(theirs) {
		t.Fatalf("the vault it does not open was changed (%v)", err)
	}
	if got := f.opens(t, f.id); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("the identity file opens %v", got)
	}
	newKey, err := publicKey(f.id + ".next")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, mine, 0o600); err != nil {
		t.Fatal(err)
	}
	again, _ := f.service(t)
	if _, err := RotateIdentity(context.Background(), again, ""); err != nil {
		t.Fatalf("run again: %v", err)
	}
	f.done(t, newKey)
}

// An IDENTITY.old removed by hand in step 4 does not keep the rotation
// from finishing: the journal names the old key each vault drops.
func TestRotateIdentityOldRemovedInStep4(t *testing.T) {
	f := newRotateFixture(t)
	s, _ := f.service(t)
	if _, err := RotateIdentityAt(context.Background(), s, "", func(p string) error {
		if p == "noted a" {
			return errStopped
		}
		return nil
	}); !errors.Is(err, errStopped) {
		t.Fatalf("rotation: %v, want it stopped", err)
	}
	if err := os.Remove(f.id + ".old"); err != nil {
		t.Fatal(err)
	}
	newKey, err := publicKey(f.id)
	if err != nil {
		t.Fatal(err)
	}
	again, out := f.service(t)
	if _, err := RotateIdentity(context.Background(), again, ""); err != nil {
		t.Fatalf("run again: %v", err)
	}
	f.done(t, newKey)
	var got []string
	for _, e := range out.events(t) {
		got = append(got, e.Event+" "+e.Env)
	}
	if want := []string{"recipients b", "rekey b"}; !slices.Equal(got, want) {
		t.Fatalf("events of the second run %q, want %q", got, want)
	}
}
