package ops

import (
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/vault"
)

// store returns the open vault behind env, opening it on first use.
func (s *Service) store(env string) (vault.Store, error) {
	name, vc, err := s.cfg.VaultFor(env)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stores[name]; ok {
		return st, nil
	}
	var st vault.Store
	switch vc.Kind {
	case "file":
		st, err = vault.OpenFile(vc.Path, vc.Identity, s.now)
	default:
		return nil, Errorf(manifest.OpError, "vault %q: kind %q is not available in this build", name, vc.Kind)
	}
	if err != nil {
		return nil, &Error{Code: manifest.OpError, Msg: err.Error(), Err: err}
	}
	s.stores[name] = st
	return st, nil
}
