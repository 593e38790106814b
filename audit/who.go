package audit

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxWho bounds a recorded user or host, in bytes: what an actor may be.
const MaxWho = 256

// Who is the process that acts: the OS account it runs as (User) and the
// machine it runs on (Host). A Writer given one stamps it on every event
// it writes (SetWho); serve records it on its start event alone.
type Who struct {
	User string
	Host string
}

// ProcessWho is the Who of this process, taken from the OS: the account
// of its uid (its name, or the uid as a number when it has none the
// system can name) and the machine's host name ("" when it has none).
// Never from $USER or $HOSTNAME, which whoever starts the process sets.
// Each is made recordable by CleanWho.
func ProcessWho() Who {
	uid := strconv.Itoa(os.Getuid())
	name := uid
	if u, err := user.LookupId(uid); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return CleanWho(Who{User: name, Host: host})
}

// CleanWho makes w recordable: each field valid UTF-8 without control
// characters (an invalid byte or a control character is written as a Go
// escape, \x01, \u0085), cut to at most MaxWho bytes at a rune boundary.
func CleanWho(w Who) Who {
	return Who{User: cleanName(w.User), Host: cleanName(w.Host)}
}

func cleanName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		part := s[i : i+size]
		switch {
		case r == utf8.RuneError && size == 1:
			part = fmt.Sprintf(`\x%02x`, s[i])
		case unicode.IsControl(r) && r < utf8.RuneSelf:
			part = fmt.Sprintf(`\x%02x`, r)
		case unicode.IsControl(r):
			part = fmt.Sprintf(`\u%04x`, r)
		}
		if b.Len()+len(part) > MaxWho {
			break
		}
		b.WriteString(part)
		i += size
	}
	return b.String()
}
