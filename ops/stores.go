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

// openStore opens a vault by its kind.
func openStore(name string, vc VaultConfig, now func() time.Time) (vault.Store, error) {
	switch vc.Kind {
	case "file":
		return vault.OpenFile(vc.Path, vc.Identity, now)
	default:
		return nil, Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
	}
}
