package pdp

import "github.com/arca-secrets/arca/internal/allowenv"

// Allowlist returns the entries of environ the PDP child may see:
// allowenv's, the one allowlist of every child of arca's.
func Allowlist(environ []string) []string { return allowenv.Filter(environ) }
