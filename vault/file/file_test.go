package file_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault/file"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/identity"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

func TestFileConformance(t *testing.T) {
	vaulttest.Run(t, func(t *testing.T, now func() time.Time) vaulttest.Harness {
		v := newFileVault(t)
		return vaulttest.Harness{
			Open: func() (vault.Store, error) {
				return file.Open(v.path, v.idPath, now)
			},
			Corrupt: func() error { return corruptFirstRecord(v.path) },
		}
	})
}

// The same suite with every file read by pages, lines longer than a page
// among them: what a one-shot get does with a large vault.
func TestFileConformanceByPages(t *testing.T) {
	vaulttest.Run(t, func(t *testing.T, now func() time.Time) vaulttest.Harness {
		v := newFileVault(t)
		return vaulttest.Harness{
			Open: func() (vault.Store, error) {
				return file.OpenByPages(v.path, v.idPath, now, 64)
			},
			Corrupt: func() error { return corruptFirstRecord(v.path) },
		}
	})
}

// fileVault is an empty file vault laid out the way arca init lays one out:
// identity and vault in directories the package creates, so their modes are
// the package's doing and not the temp dir's.
type fileVault struct {
	dir, path, idPath string
}

func newFileVault(t testing.TB) fileVault {
	t.Helper()
	dir := t.TempDir()
	v := fileVault{
		dir:    dir,
		path:   filepath.Join(dir, "data", "arca", "default.vault"),
		idPath: filepath.Join(dir, "config", "arca", "identity.txt"),
	}
	if _, created, err := identity.Ensure(v.idPath, time.Now()); err != nil || !created {
		t.Fatalf("EnsureIdentity: created %t, %v", created, err)
	}
	ids, err := identity.Load(v.idPath, nil)
	if err != nil {
		t.Fatalf("LoadIdentity: %v", err)
	}
	if created, err := file.Create(v.path, identity.RecipientsOf(ids)); err != nil || !created {
		t.Fatalf("CreateFile: created %t, %v", created, err)
	}
	return v
}

func (v fileVault) open(t testing.TB) *file.Vault {
	t.Helper()
	f, err := file.Open(v.path, v.idPath, nil)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// corruptFirstRecord flips one byte of the ciphertext of the vault's first
// record, keeping the file well formed, and replaces the file by rename as
// a writer would.
func corruptFirstRecord(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) < 4 {
		return errors.New("vault holds no record")
	}
	line := lines[1] // "<slot>":"<blob>"[,]
	start := bytes.Index(line, []byte(`":"`)) + 3
	end := bytes.LastIndexByte(line, '"')
	if dot := bytes.IndexByte(line[start:], '.'); dot >= 0 {
		end = start + dot // the current record, before the generation and history
	}
	if start < 3 || end <= start {
		return fmt.Errorf("unexpected record line %q", line)
	}
	blob, err := base64.StdEncoding.DecodeString(string(line[start:end]))
	if err != nil {
		return err
	}
	blob[len(blob)/2] ^= 0x01 // past the 24-byte nonce: the ciphertext
	lines[1] = bytes.Join([][]byte{line[:start], []byte(base64.StdEncoding.EncodeToString(blob)), line[end:]}, nil)
	return replaceBytes(path, bytes.Join(lines, []byte("\n")))
}

// replaceBytes puts data at path by temp file and rename, so a handle that
// holds the old file notices the change.
func replaceBytes(path string, data []byte) error {
	tmp := path + ".test"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
