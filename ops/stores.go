package ops

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// store returns the open vault behind env, opening it on first use.
func (s *Service) store(env string) (vault.Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.byEnv[env]; ok {
		return st, nil
	}
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return nil, err
	}
	if st, ok := s.stores[name]; ok {
		s.byEnv[env] = st
		return st, nil
	}
	st, err := s.open(name, vc, s.now)
	if err != nil {
		return nil, asError(err)
	}
	s.stores[name], s.byEnv[env] = st, st
	return st, nil
}

// canOpen reports why env's vault could never be opened (its config does
// not resolve), before anything is asked of a PDP and before the vault is
// touched. Whether the vault opens is only known by opening it.
func (s *Service) canOpen(env string) error {
	s.mu.Lock()
	_, open := s.byEnv[env]
	s.mu.Unlock()
	if open {
		return nil
	}
	_, _, err := s.cfg.VaultFor(env)
	return err
}

// OpenStore opens a vault by its kind: what a Service uses unless
// Options.OpenStore says otherwise.
func OpenStore(name string, vc VaultConfig, now func() time.Time) (vault.Store, error) {
	switch vc.Kind {
	case "file":
		return vault.OpenFile(vc.Path, vc.Identity, now)
	case "etcd":
		o, err := etcdOptions(vc, now)
		if err != nil {
			return nil, err
		}
		return vault.OpenEtcd(o)
	}
	return nil, Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
}

// maxPasswordFile bounds a password file read.
const maxPasswordFile = 4096

// etcdOptions turns an etcd vault's config into how to reach it.
func etcdOptions(vc VaultConfig, now func() time.Time) (vault.EtcdOptions, error) {
	o := vault.EtcdOptions{
		Endpoints: vc.Endpoints, Prefix: vc.Prefix, Identity: vc.Identity, Recipients: vc.Recipients,
		Username: vc.Username, Password: vc.Password,
		CAFile: vc.TLSCA, CertFile: vc.TLSCert, KeyFile: vc.TLSKey,
		Timeout: vc.EtcdTimeout(), Now: now, PinFile: vc.PinFile,
	}
	if vc.PasswordFile != "" {
		b, err := readSmall(vc.PasswordFile, maxPasswordFile)
		if err != nil {
			return o, Errorf(manifest.OpError, "etcd password file: %v", err)
		}
		o.Password = strings.TrimRight(string(b), "\r\n")
	}
	return o, nil
}

// readSmall reads a file of at most max bytes.
func readSmall(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, err
}
