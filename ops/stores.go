package ops

import (
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
		s.byEnv[env], s.hist[env] = st, vc.HistorySettings()
		return st, nil
	}
	st, err := s.backends.Open(name, vc, s.now)
	if err != nil {
		return nil, asError(err)
	}
	s.stores[name], s.byEnv[env], s.hist[env] = st, st, vc.HistorySettings()
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
