// Command scryptonce opens a passphrase-protected identity file once, as
// arca does (one scrypt at the file's work factor, age's), and exits: the
// floor of an `arca get` whose identity is protected, a fresh process
// like it. Usage: scryptonce IDENTITY-FILE PASSPHRASE-FILE.
package main

import (
	"fmt"
	"os"

	"github.com/arca-secrets/arca/vault/identity"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: scryptonce IDENTITY-FILE PASSPHRASE-FILE")
		os.Exit(2)
	}
	pass := func(string) (string, error) { return identity.ReadPassphraseFile(os.Args[2]) }
	if _, err := identity.Load(os.Args[1], pass); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
