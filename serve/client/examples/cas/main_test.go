package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/serve/client"
)

// The compare-and-set loop: update is held to what it promises with
// another writer made to win the first round, and the command runs as an
// embedder would run it.

// arcaBin is the arca binary the tests spawn: $ARCA_BIN, else built once.
var arcaBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arca-cas-test-")
	if err != nil {
		panic(err)
	}
	arcaBin = filepath.Join(dir, "arca")
	if bin := os.Getenv("ARCA_BIN"); bin != "" {
		arcaBin, err = filepath.Abs(bin)
	} else if out, berr := exec.Command("go", "build", "-o", arcaBin, "../../../../cmd/arca").CombinedOutput(); berr != nil {
		err = fmt.Errorf("build arca: %v\n%s", berr, out)
	}
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

const ref = "arca://app/keys"

// seeded is a client on a fresh home whose ref holds "key-a", and the
// environment that home has.
func seeded(t *testing.T) (*client.Client, []string) {
	t.Helper()
	dir := t.TempDir()
	env := []string{"HOME=" + dir, "PATH=" + filepath.Dir(arcaBin) + string(os.PathListSeparator) + os.Getenv("PATH")}
	setup := exec.Command(arcaBin, "init")
	setup.Env = env
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("arca init: %v: %s", err, out)
	}
	// The config the command pins: an empty one, the defaults.
	if err := os.MkdirAll(filepath.Join(dir, ".config", "arca"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".config", "arca", "arca.toml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.Start(context.Background(), client.Options{Binary: arcaBin, Environ: env, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Put(context.Background(), client.Request{Ref: ref, Value: []byte("key-a")}); err != nil {
		t.Fatal(err)
	}
	return c, env
}

func value(t *testing.T, c *client.Client) string {
	t.Helper()
	g, err := c.Get(context.Background(), client.Request{Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	return string(g.Value.Reveal())
}

func TestAWriteBetweenReadAndPutIsKept(t *testing.T) {
	c, _ := seeded(t)
	var calls []string
	put, err := update(context.Background(), c, ref, func(v client.Secret) []byte {
		calls = append(calls, string(v.Reveal()))
		if len(calls) == 1 { // another writer, between this get and this put
			if _, err := c.Put(context.Background(), client.Request{Ref: ref, Value: []byte(string(v.Reveal()) + "\nkey-b")}); err != nil {
				t.Error(err)
			}
		}
		return []byte(string(v.Reveal()) + "\nkey-c")
	}, 10)
	if err != nil || put.Version != 3 {
		t.Fatalf("update: %v, version %d, want 3", err, put.Version)
	}
	if want := []string{"key-a", "key-a\nkey-b"}; !slices.Equal(calls, want) {
		t.Fatalf("change saw %q, want %q", calls, want)
	}
	if got := value(t, c); got != "key-a\nkey-b\nkey-c" {
		t.Fatalf("value %q after update", got)
	}
}

func TestItGivesUpAfterItsTries(t *testing.T) {
	c, _ := seeded(t)
	_, err := update(context.Background(), c, ref, func(v client.Secret) []byte {
		if _, err := c.Put(context.Background(), client.Request{Ref: ref, Value: []byte(string(v.Reveal()) + "\nother")}); err != nil {
			t.Error(err)
		}
		return []byte("never-written")
	}, 3)
	if err == nil || !strings.Contains(err.Error(), "changed under each of 3 tries") || strings.Contains(err.Error(), "never-written") {
		t.Fatalf("update that always loses: %v", err)
	}
	if got := value(t, c); strings.Contains(got, "never-written") {
		t.Fatal("a losing write was written")
	}
}

func TestTheCommandAppendsALine(t *testing.T) {
	c, env := seeded(t)
	// Where it runs, an arca.toml whose PDP denies everything: the command
	// pins its config, so serve never reads this one.
	cwd := t.TempDir()
	deny := "[serve.pdp]\nexec = \"echo '{\\\"allow\\\": false}'\"\n"
	if err := os.WriteFile(filepath.Join(cwd, "arca.toml"), []byte(deny), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "cas")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build the example: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, ref)
	cmd.Env, cmd.Stdin, cmd.Dir = env, strings.NewReader("key-d\n"), cwd
	out, err := cmd.Output()
	if err != nil || string(out) != "version 2\n" {
		t.Fatalf("cas: %v, printed %q", err, out)
	}
	if got := value(t, c); got != "key-a\nkey-d" {
		t.Fatalf("value %q after the command", got)
	}
}
