package ops

import (
	"errors"
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
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	s.stores[name], s.byEnv[env] = st, st
	return st, nil
}

// canOpen reports why env's vault could never be opened by this build (no
// such vault, a kind it lacks), before anything is asked of a PDP. Whether
// the vault opens is only known by opening it.
func (s *Service) canOpen(env string) error {
	s.mu.Lock()
	_, open := s.byEnv[env]
	s.mu.Unlock()
	if open {
		return nil
	}
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return err
	}
	if vc.Kind != "file" {
		return Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
	}
	return nil
}

// openStore opens a vault by its kind.
func openStore(name string, vc VaultConfig, now func() time.Time) (vault.Store, error) {
	if vc.Kind != "file" {
		return nil, Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
	}
	return vault.OpenFile(vc.Path, vc.Identity, now)
}
