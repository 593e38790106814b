package approvalpage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arca-secrets/arca/internal/ownerfile"
	"github.com/arca-secrets/arca/internal/webpage"
)

// TokenEnv is the variable LoadToken reads the approver's token from when
// no file is named.
const TokenEnv = "ARCA_APPROVER_TOKEN"

// MaxTokenFile bounds the approver's token file.
const MaxTokenFile = 4 << 10

// LoadToken returns the approver's token: from file when file != "", else
// from getenv(TokenEnv). The file must be a regular file no one but its
// owner may read or write (mode 0600 or stricter), of at most MaxTokenFile
// bytes and one line (a trailing newline is dropped). The token must pass
// webpage.CheckToken and be at least webpage.MinToken bytes. Its errors
// never hold the token.
func LoadToken(getenv func(string) string, file string) (string, error) {
	if file != "" {
		t, err := readTokenFile(file)
		if err != nil {
			return "", fmt.Errorf("approver token file %s: %w", file, err)
		}
		return t, nil
	}
	t := getenv(TokenEnv)
	if t == "" {
		return "", fmt.Errorf("no approver token: set $%s, or name a token file (mode 0600) holding it", TokenEnv)
	}
	if err := checkToken(t); err != nil {
		return "", fmt.Errorf("$%s: %w", TokenEnv, err)
	}
	return t, nil
}

// readTokenFile reads the token of file, checking the file as it is open
// (ownerfile.Read).
func readTokenFile(file string) (string, error) {
	b, err := ownerfile.Read(file, MaxTokenFile)
	if err != nil {
		return "", err
	}
	t := strings.TrimSuffix(string(b), "\n")
	if strings.ContainsAny(t, "\r\n") {
		return "", errors.New("holds more than one line: it holds the token alone")
	}
	if err := checkToken(t); err != nil {
		return "", err
	}
	return t, nil
}

// checkToken refuses a token webpage.CheckToken refuses, or one shorter
// than webpage.MinToken.
func checkToken(t string) error {
	if err := webpage.CheckToken(t); err != nil {
		return err
	}
	if len(t) < webpage.MinToken {
		return fmt.Errorf("the token is %d bytes: give one of at least %d", len(t), webpage.MinToken)
	}
	return nil
}
