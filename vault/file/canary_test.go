package file_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/vaulttest"
)

// TestFileCanary: the vault's files never hold the name or value in the
// clear, and no error or problem about them quotes them.
func TestFileCanary(t *testing.T) {
	v := newFileVault(t)
	f := v.open(t)
	ctx := context.Background()
	apply := func(k vault.Kind, name string, approve vault.Approve) error {
		_, err := f.Apply(ctx, vault.Write{Kind: k, Name: name, Value: vault.NewSecret([]byte(vaulttest.CanaryValue))}, approve)
		return err
	}
	for _, k := range []vault.Kind{vault.Put, vault.Rotate, vault.Put} {
		if err := apply(k, vaulttest.CanaryName, approveAll); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := f.Get(ctx, vaulttest.CanaryName); err != nil || string(r.Value.Reveal()) != vaulttest.CanaryValue {
		t.Fatalf("Get: %v", err)
	}
	for _, name := range dirFiles(t, v.dir) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		vaulttest.WantNoCanary(t, name, string(data))
	}

	var errs []error
	missing := vaulttest.CanaryName + "-missing"
	_, err := f.Get(ctx, missing)
	errs = append(errs, err, apply(vault.Rotate, missing, approveAll), apply(vault.Remove, missing, approveAll),
		apply(vault.Put, vaulttest.CanaryName, func(vault.Meta) error { return errors.New("refused") }))
	if err := corruptFirstRecord(v.path); err != nil {
		t.Fatal(err)
	}
	_, err = f.Get(ctx, vaulttest.CanaryName)
	errs = append(errs, err, apply(vault.Put, vaulttest.CanaryName, approveAll), apply(vault.Rotate, vaulttest.CanaryName, approveAll))
	_, err = f.List(ctx)
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("error %d: the operation succeeded", i)
			continue
		}
		vaulttest.WantNoCanary(t, fmt.Sprintf("error %d (%v)", i, err), err.Error())
	}
	rep, err := f.Check(ctx)
	if err != nil || len(rep.Problems) == 0 {
		t.Fatalf("Check of the corrupted vault: %v %v", rep, err)
	}
	vaulttest.WantNoCanary(t, "Check problems", strings.Join(rep.Problems, "\n"))
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil || len(out) < 2 {
		t.Fatalf("walk %s: %v %v", dir, out, err)
	}
	return out
}
