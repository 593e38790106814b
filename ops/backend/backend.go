// Package backend is the one place that chooses a vault backend by kind:
// "file" (vault/file) and "etcd" (vault/etcd). cmd/arca hands Kinds to ops;
// ops itself links no backend, so neither does arca serve's request loop.
package backend

import (
	"context"
	"time"

	"filippo.io/age"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/file"
	"github.com/arca-secrets/arca/vault/identity"
)

// Kinds opens and creates vaults of every kind this build has. Keys loads
// their identity files (a protected one once per process); nil loads
// plain files only.
type Kinds struct{ Keys *identity.Keys }

var _ ops.Backends = Kinds{}

// Open opens the vault named name by its kind, with the history settings
// its config gives (vault.Store.SetHistory).
func (k Kinds) Open(name string, vc ops.VaultConfig, now func() time.Time) (vault.Store, error) {
	var (
		st  vault.Store
		err error
	)
	switch vc.Kind {
	case ops.KindFile:
		st, err = file.OpenKeys(vc.Path, vc.Identity, k.Keys, now)
	case ops.KindEtcd:
		o := etcdOptions(vc, now)
		o.Keys = k.Keys
		st, err = etcd.Open(o)
	default:
		return nil, unknownKind(name, vc)
	}
	if err != nil {
		return nil, err
	}
	st.SetHistory(vc.HistorySettings())
	return st, nil
}

// Create makes an empty vault of vc's kind, keeping one already there.
func (Kinds) Create(ctx context.Context, name string, vc ops.VaultConfig, recipients []age.Recipient) (bool, error) {
	switch vc.Kind {
	case ops.KindFile:
		return file.Create(vc.Path, recipients)
	case ops.KindEtcd:
		return etcd.Create(ctx, etcdOptions(vc, time.Now), recipients)
	}
	return false, unknownKind(name, vc)
}

// Problems reports the modes of a file vault's files.
func (Kinds) Problems(vc ops.VaultConfig) []string {
	if vc.Kind == ops.KindFile {
		return file.PermissionProblems(vc.Path, vc.Identity)
	}
	return nil
}

func unknownKind(name string, vc ops.VaultConfig) error {
	return ops.Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
}

// etcdOptions turns an etcd vault's config into how to reach it.
func etcdOptions(vc ops.VaultConfig, now func() time.Time) etcd.Options {
	return etcd.Options{
		Endpoints: vc.Endpoints, Prefix: vc.Prefix, Identity: vc.Identity, Recipients: vc.Recipients,
		Username: vc.Username, Password: vc.Password, PasswordFile: vc.PasswordFile,
		CAFile: vc.TLSCA, CertFile: vc.TLSCert, KeyFile: vc.TLSKey,
		Timeout: vc.EtcdTimeout(), Now: now, PinFile: vc.PinFile,
	}
}
