package vault

import "github.com/arca-secrets/arca/vault/secret"

// Secret holds a secret value that cannot be printed: secret.Secret.
type Secret = secret.Secret

// NewSecret wraps b; the caller must not modify b afterwards.
func NewSecret(b []byte) Secret { return secret.New(b) }
