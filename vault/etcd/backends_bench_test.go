package etcd_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
	"github.com/arca-secrets/arca/vault/file"
	"github.com/arca-secrets/arca/vault/identity"
)

// BenchmarkBackends measures one get and one put on the file vault and on
// the shared vault with 1 and 3 etcd members (all on this machine, over
// loopback), each holding 100 records. Compare ns/op with file's from the
// same run.
func BenchmarkBackends(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) vault.Store
	}{
		{"file", func(b *testing.B) vault.Store { return openFileVault(b) }},
		{"etcd1", func(b *testing.B) vault.Store {
			return newEtcdVault(b, etcdtest.Start(b, 1), "/arca/bench/").open(b)
		}},
		{"etcd3", func(b *testing.B) vault.Store {
			return newEtcdVault(b, etcdtest.Start(b, 3), "/arca/bench/").open(b)
		}},
	}
	ctx := context.Background()
	ok := func(vault.Meta) error { return nil }
	for _, be := range backends {
		st := be.open(b)
		names := make([]string, 100)
		for i := range names {
			names[i] = fmt.Sprintf("bench/record-%03d", i)
			w := vault.Write{Kind: vault.Put, Name: names[i], Value: vault.NewSecret([]byte("s3cret-value-of-some-length-0123456789"))}
			if _, err := st.Apply(ctx, w, ok); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(be.name+"/get", func(b *testing.B) {
			for i := range b.N {
				if _, err := st.Get(ctx, names[i%len(names)]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(be.name+"/put", func(b *testing.B) {
			for i := range b.N {
				w := vault.Write{Kind: vault.Put, Name: names[i%len(names)], Value: vault.NewSecret([]byte("another-value"))}
				if _, err := st.Apply(ctx, w, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// openFileVault is a fresh file vault, the baseline the shared vault is
// compared with.
func openFileVault(b *testing.B) vault.Store {
	dir := b.TempDir()
	idPath, path := filepath.Join(dir, "identity.txt"), filepath.Join(dir, "default.vault")
	if _, _, err := identity.Ensure(idPath, time.Now()); err != nil {
		b.Fatal(err)
	}
	ids, err := identity.Load(idPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := file.Create(path, identity.RecipientsOf(ids)); err != nil {
		b.Fatal(err)
	}
	f, err := file.Open(path, idPath, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}
