package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arca-secrets/arca/vault"
)

// Check implements vault.Store: the vault opens and its key unwraps, every record
// authenticates and sits in the slot its name hashes to, and neither the
// vault, its directory nor the identity is open to other users.
func (f *Vault) Check(_ context.Context) (vault.Report, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rep := vault.Report{Problems: PermissionProblems(f.path, f.idPath)}
	if err := f.refreshByPath(); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	if err := f.index(); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	rep.Records = len(f.cur.entries)
	f.eachMeta(func(slot string, m vault.Meta, err error) error {
		switch {
		case err != nil:
			rep.Problems = append(rep.Problems, fmt.Sprintf("record %s: %v", slot, err))
		case f.k.Slot(m.Name) != slot:
			rep.Problems = append(rep.Problems, fmt.Sprintf("record %s: stored in the wrong slot", slot))
		}
		return nil
	})
	return rep, nil
}

// PermissionProblems reports a file vault, its directory or its identity
// that other users can read; a missing file is not reported. For a vault
// path that is a symlink, the directory is the one the vault file is in.
func PermissionProblems(vaultPath, idPath string) []string {
	var out []string
	dir := filepath.Dir(vaultPath)
	if dest, err := target(vaultPath); err == nil {
		dir = filepath.Dir(dest)
	}
	for _, p := range []struct{ what, path string }{
		{"vault", vaultPath},
		{"vault directory", dir},
		{"identity", idPath},
	} {
		fi, err := os.Stat(p.path)
		if err != nil {
			continue // a missing vault or identity is reported by opening it
		}
		if mode := fi.Mode().Perm(); mode&0o077 != 0 {
			out = append(out, fmt.Sprintf("%s %s is readable by other users (mode %04o): chmod go-rwx %s", p.what, p.path, mode, p.path))
		}
	}
	return out
}
