package file_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/file"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
)

func TestOpenFileWrongIdentity(t *testing.T) {
	v := newFileVault(t)
	other := filepath.Join(t.TempDir(), "other-identity.txt")
	if _, _, err := identity.Ensure(other, time.Now()); err != nil {
		t.Fatal(err)
	}
	f, err := file.Open(v.path, other, nil)
	if err == nil {
		f.Close()
		t.Fatal("OpenFile with another identity succeeded")
	}
	if !strings.Contains(err.Error(), "identity cannot unwrap the data key") {
		t.Errorf("OpenFile with another identity: %v, want it to say the identity cannot unwrap the data key", err)
	}
}

func TestOpenFileMissing(t *testing.T) {
	v := newFileVault(t)
	for _, tc := range []struct {
		name, path, idPath, mention string
	}{
		{"vault", filepath.Join(v.dir, "nope.vault"), v.idPath, "nope.vault"},
		{"identity", v.path, filepath.Join(v.dir, "nope.txt"), "nope.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := file.Open(tc.path, tc.idPath, nil)
			if err == nil {
				f.Close()
				t.Fatal("OpenFile succeeded")
			}
			for _, want := range []string{"arca init", tc.mention, "does not exist"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("OpenFile: %v, want it to mention %q", err, want)
				}
			}
		})
	}
}

func TestOpenFileNotAVault(t *testing.T) {
	v := newFileVault(t)
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"truncated", "{\"arca_vault\":{\"format\""},
		{"other json", "{\"records\":{}}\n"},
		{"identity file", "AGE-SECRET-KEY-1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := replaceBytes(v.path, []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			f, err := file.Open(v.path, v.idPath, nil)
			if err == nil {
				f.Close()
				t.Fatal("OpenFile succeeded")
			}
			if !strings.Contains(err.Error(), "corrupt") {
				t.Errorf("OpenFile: %v, want it to say the vault is corrupt", err)
			}
		})
	}
}

func TestCreateFileKeepsExistingVault(t *testing.T) {
	v := newFileVault(t)
	f := v.open(t)
	ctx := context.Background()
	if _, err := f.Apply(ctx, vault.Write{Kind: vault.Put, Name: "app/k", Value: vault.NewSecret([]byte("v"))}, approveAll); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(v.path)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := identity.Load(v.idPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	created, err := file.Create(v.path, identity.RecipientsOf(ids))
	if err != nil || created {
		t.Fatalf("second CreateFile: created %t, %v; want false, nil", created, err)
	}
	after, err := os.ReadFile(v.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("second CreateFile changed the vault file (new data key?)")
	}
	r, err := v.open(t).Get(ctx, "app/k")
	if err != nil || string(r.Value.Reveal()) != "v" {
		t.Errorf("record after second CreateFile: %v", err)
	}
}

func TestEnsureIdentityKeepsExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arca", "identity.txt")
	rcpt, created, err := identity.Ensure(path, time.Now())
	if err != nil || !created || !strings.HasPrefix(rcpt, "age1") {
		t.Fatalf("EnsureIdentity: %q %t %v", rcpt, created, err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	again, created, err := identity.Ensure(path, time.Now().Add(time.Hour))
	if err != nil || created || again != rcpt {
		t.Fatalf("second EnsureIdentity: %q %t %v; want %q false nil", again, created, err, rcpt)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("second EnsureIdentity rewrote the identity file")
	}
}

func TestEnsureIdentityRefusesGarbage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "identity.txt")
	if err := os.WriteFile(path, []byte("not an identity\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := identity.Ensure(path, time.Now()); err == nil {
		t.Fatal("EnsureIdentity accepted a file with no identity")
	}
	if b, _ := os.ReadFile(path); string(b) != "not an identity\n" {
		t.Error("EnsureIdentity replaced an existing file")
	}
}

func TestFileModes(t *testing.T) {
	v := newFileVault(t)
	f := v.open(t)
	if _, err := f.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: "app/k", Value: vault.NewSecret([]byte("v"))}, approveAll); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		v.path:                 0o600,
		filepath.Dir(v.path):   0o700,
		v.idPath:               0o600,
		filepath.Dir(v.idPath): 0o700,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", path, got, want)
		}
	}
}

func TestCheckReportsReadableFiles(t *testing.T) {
	for _, tc := range []struct {
		what string
		path func(fileVault) string
	}{
		{"vault", func(v fileVault) string { return v.path }},
		{"identity", func(v fileVault) string { return v.idPath }},
	} {
		t.Run(tc.what, func(t *testing.T) {
			v := newFileVault(t)
			f := v.open(t)
			p := tc.path(v)
			if err := os.Chmod(p, 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := f.Check(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], p) || !strings.Contains(rep.Problems[0], "0644") {
				t.Errorf("Check with a 0644 %s: problems %q, want one naming %s and its mode", tc.what, rep.Problems, p)
			}
		})
	}
}

func TestRewriteRestoresMode(t *testing.T) {
	v := newFileVault(t)
	f := v.open(t)
	if err := os.Chmod(v.path, 0o644); err != nil {
		t.Fatal(err)
	}
	// A leftover temp file from a crashed writer, readable by others.
	if err := os.WriteFile(v.path+".tmp", []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Apply(context.Background(), vault.Write{Kind: vault.Put, Name: "app/k", Value: vault.NewSecret([]byte("v"))}, approveAll); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(v.path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("vault after a write: mode %04o, want 0600", fi.Mode().Perm())
	}
}

func approveAll(vault.Meta) error { return nil }
