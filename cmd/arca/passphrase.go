package main

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/arca-secrets/arca/ops"
	"github.com/arca-secrets/arca/vault/fsio"
	"github.com/arca-secrets/arca/vault/identity"
)

// identityKeys is what loads c's identity files: once per process (each
// protected one's passphrase asked once), with $ARCA_IDENTITY_KEY as the
// identity of a vault whose config gives identity.KeyPath.
func (c *cli) identityKeys() *identity.Keys {
	if c.keys == nil {
		c.keys = &identity.Keys{Pass: c.passphrase(false), Key: c.getenv(identity.KeyEnv), Prompt: terminalPrompter{}}
	}
	return c.keys
}

// passphrase gives an identity file's passphrase: the first line of
// $ARCA_PASSPHRASE_FILE when it is set, else asked on the terminal
// (/dev/tty, never stdin or stderr, which may be serve's pipes) without
// echo; with confirm, asked twice and the two compared.
func (c *cli) passphrase(confirm bool) identity.Passphrase {
	return c.askPassphrase(identity.PassphraseFileEnv, "passphrase", confirm)
}

// newPassphrase gives the new passphrase of a protected identity file
// whose passphrase changes: from $ARCA_NEW_PASSPHRASE_FILE, else asked
// on the terminal as "new passphrase", twice. $ARCA_PASSPHRASE_FILE holds
// the current one then, never the new one too.
func (c *cli) newPassphrase() identity.Passphrase {
	return func(path string) (string, error) {
		if c.getenv(identity.NewPassphraseFileEnv) == "" && c.getenv(identity.PassphraseFileEnv) != "" {
			return "", fmt.Errorf("$%s holds the current passphrase: give the new one in $%s", identity.PassphraseFileEnv, identity.NewPassphraseFileEnv)
		}
		return c.askPassphrase(identity.NewPassphraseFileEnv, "new passphrase", true)(path)
	}
}

// askPassphrase reads the first line of the file $fileEnv names, or asks
// on the terminal (/dev/tty) for what without echo; with confirm, twice.
func (c *cli) askPassphrase(fileEnv, what string, confirm bool) identity.Passphrase {
	return func(path string) (string, error) {
		if f := c.getenv(fileEnv); f != "" {
			return identity.ReadPassphraseFile(f)
		}
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			return "", fmt.Errorf("no terminal to ask on, and $%s is not set", fileEnv)
		}
		defer tty.Close()
		p, err := askHidden(tty, what+" for "+path+": ")
		if err != nil || !confirm {
			return p, err
		}
		again, err := askHidden(tty, "the same "+what+" again: ")
		if err != nil {
			return "", err
		}
		if again != p {
			return "", errors.New("the two passphrases differ")
		}
		return p, nil
	}
}

// askHidden prompts on the terminal tty and reads one line from it
// without echo (askLine). Ctrl-D aborts; an empty passphrase is refused.
func askHidden(tty *os.File, prompt string) (string, error) {
	p, err := askLine(tty, prompt, true)
	if err == nil && p == "" {
		return "", errors.New("the passphrase is empty")
	}
	return p, err
}

// unlock opens, at most once, every protected identity file the vaults of
// cfg name, and $ARCA_IDENTITY_KEY when they name it: serve and mcp do it
// at start, then hold the identities in memory only. A plain or missing
// file is left to the vault that opens with it.
func (c *cli) unlock(cfg *ops.Config) error {
	seen := map[string]bool{}
	for _, env := range cfg.EnvNames() {
		_, vc, err := cfg.VaultFor(env)
		if err != nil || seen[vc.Identity] {
			continue
		}
		seen[vc.Identity] = true
		if vc.Identity != identity.KeyPath {
			b, err := fsio.ReadFile(vc.Identity, 64<<10)
			if err != nil || !identity.Protected(b) {
				continue
			}
		}
		if _, err := c.identityKeys().Load(vc.Identity); err != nil {
			return err
		}
	}
	return nil
}
