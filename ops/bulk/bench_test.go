package bulk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/arca-secrets/arca/ops/secretfile"
	"github.com/arca-secrets/arca/vault"
)

// benchDotenv is a dotenv file of n secrets of about 40 bytes.
func benchDotenv(n int) []byte {
	var b []byte
	for i := range n {
		b = fmt.Appendf(b, "KEY_%05d=\"value %d: %x with a \\\"quote\\\"\"\n", i, i, i*7919)
	}
	return b
}

// BenchmarkMigrate10k parses a dotenv file of 10,000 secrets and imports it
// into an empty file vault: the work of arca migrate, in process.
func BenchmarkMigrate10k(b *testing.B) {
	in := benchDotenv(10_000)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b, "")
		b.StartTimer()
		items := packDotenv(b, in)
		if _, err := Import(context.Background(), f.svc, Request{Items: items}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBackupRestore10k backs up a file vault of 10,000 records and
// restores the backup into an empty one.
func BenchmarkBackupRestore10k(b *testing.B) {
	f := newFixture(b, "[envs.default]\nvault = \"a\"\n[envs.copy]\nvault = \"b\"\n[vaults.a]\nkind = \"file\"\n[vaults.b]\nkind = \"file\"\n")
	items := packDotenv(b, benchDotenv(10_000))
	ctx := context.Background()
	if _, err := Import(ctx, f.svc, Request{Items: items}); err != nil {
		b.Fatal(err)
	}
	_, copyVault, _ := f.svc.Config().VaultFor("copy")
	for i := 0; b.Loop(); i++ {
		path := filepath.Join(b.TempDir(), fmt.Sprintf("b%d.backup", i))
		if _, err := Backup(ctx, f.svc, "default", path); err != nil {
			b.Fatal(err)
		}
		os.Remove(copyVault.Path)
		if res, err := Restore(ctx, f.svc, "copy", path, false, false); err != nil || res.Count(ActionCreate) != items.Len() {
			b.Fatalf("restore: %d created, %v", res.Count(ActionCreate), err)
		}
	}
}

// BenchmarkBackupRestore10kVersions is BenchmarkBackupRestore10k over a
// vault whose 10,000 records each keep three versions, and 1,000 names of
// which are removed (soft-deleted, kept): what a backup of history costs.
func BenchmarkBackupRestore10kVersions(b *testing.B) {
	f := newFixture(b, "[envs.default]\nvault = \"a\"\n[envs.copy]\nvault = \"b\"\n[vaults.a]\nkind = \"file\"\n[vaults.b]\nkind = \"file\"\n")
	items := packDotenv(b, benchDotenv(10_000))
	ctx := context.Background()
	for range 3 {
		if _, err := Import(ctx, f.svc, Request{Items: items, Overwrite: true}); err != nil {
			b.Fatal(err)
		}
	}
	st, err := f.svc.Store("default")
	if err != nil {
		b.Fatal(err)
	}
	rms := make(vault.Writes, 1000)
	for i := range rms {
		rms[i] = vault.Write{Kind: vault.Remove, Name: items.At(i).Ref}
	}
	if _, err := st.ApplyBatch(ctx, rms, func([]vault.Meta) error { return nil }); err != nil {
		b.Fatal(err)
	}
	_, copyVault, _ := f.svc.Config().VaultFor("copy")
	for i := 0; b.Loop(); i++ {
		path := filepath.Join(b.TempDir(), fmt.Sprintf("b%d.backup", i))
		res, err := Backup(ctx, f.svc, "default", path)
		if err != nil || res.Versions != 21_000 || res.Deleted != 1000 {
			b.Fatalf("backup: %+v %v", res, err)
		}
		os.Remove(copyVault.Path)
		if res, err := Restore(ctx, f.svc, "copy", path, false, false); err != nil || res.Count(ActionCreate) != 9000 || res.Count(ActionDeleted) != 1000 {
			b.Fatalf("restore: %d created, %d deleted, %v", res.Count(ActionCreate), res.Count(ActionDeleted), err)
		}
	}
}

// packDotenv packs a dotenv file into items of namespace bulk, as
// migrate does.
func packDotenv(b *testing.B, in []byte) *Packed {
	b.Helper()
	p, _, _, err := Pack(in, "dotenv", secretfile.Options{}, Landing{NS: "bulk"})
	if err != nil {
		b.Fatal(err)
	}
	return p
}
