package action

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lookPath finds name, which holds no "/", in the PATH of env (its last
// PATH entry, the one the child would see), not in arca's own. Empty and
// relative directories are skipped: they would name places relative to
// arca's working directory. The error names name only: PATH is part of
// the environment.
func lookPath(name string, env []string) (string, error) {
	dirs, ok := envPath(env)
	if !ok {
		return "", &StartError{Msg: "cannot start " + strconv.Quote(name) + ": the action's environment has no PATH"}
	}
	for _, dir := range filepath.SplitList(dirs) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &StartError{Msg: "cannot start " + strconv.Quote(name) + ": not found in the PATH of the action's environment"}
}

// envPath returns the value of env's last PATH entry.
func envPath(env []string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v, true
		}
	}
	return "", false
}
