package client

import (
	"errors"
	"time"
)

// ErrExpired is the error of reading a value past the end of the grant it
// was got under: a value under a grant is dropped at its ExpiresAt. Fetch
// it again.
var ErrExpired = errors.New("client: the value's grant has ended: fetch it again")

// Fresh returns the value while the grant it was got under runs, and
// always when ExpiresAt is zero. Past ExpiresAt it wipes the value's bytes
// (every copy of g shares them) and returns ErrExpired.
func (g *Got) Fresh() (Secret, error) { return g.FreshAt(time.Now()) }

// FreshAt is Fresh with now for the time.
func (g *Got) FreshAt(now time.Time) (Secret, error) {
	if g.ExpiresAt.IsZero() || now.Before(g.ExpiresAt) {
		return g.Value.Secret, nil
	}
	clear(g.Value.Reveal())
	g.Value = SecretValue{}
	return Secret{}, ErrExpired
}
