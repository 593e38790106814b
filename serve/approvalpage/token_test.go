package approvalpage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// canary is a token each refusal below is built around: no error may hold
// it, or its body.
const canary = "CANARY-approver-token-4c1f9e"

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func writeToken(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// The token is read from the file when one is named, else from
// $ARCA_APPROVER_TOKEN; a trailing newline is dropped.
func TestLoadToken(t *testing.T) {
	for name, tc := range map[string]struct {
		vars map[string]string
		file string
	}{
		"the file":                {nil, writeToken(t, canary, 0o600)},
		"the file, newline ended": {nil, writeToken(t, canary+"\n", 0o600)},
		"the file, read only":     {nil, writeToken(t, canary+"\n", 0o400)},
		"the file before the env": {map[string]string{TokenEnv: "another-token-0123456789"}, writeToken(t, canary, 0o600)},
		"the env":                 {map[string]string{TokenEnv: canary}, ""},
	} {
		got, err := LoadToken(env(tc.vars), tc.file)
		if err != nil || got != canary {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
}

// Each refusal says why and never holds the token; the positive control
// shows the canary is what a leak would print.
func TestLoadTokenRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		vars map[string]string
		file string
		says string
	}{
		"mode 0644":        {nil, writeToken(t, canary, 0o644), "mode 0644"},
		"mode 0640":        {nil, writeToken(t, canary, 0o640), "mode 0640"},
		"mode 0604":        {nil, writeToken(t, canary, 0o604), "mode 0604"},
		"mode 0660":        {nil, writeToken(t, canary, 0o660), "mode 0660"},
		"too long":         {nil, writeToken(t, canary+strings.Repeat("x", MaxTokenFile), 0o600), "longer than 4096 bytes"},
		"two lines":        {nil, writeToken(t, canary+"\n"+canary+"\n", 0o600), "more than one line"},
		"a CRLF":           {nil, writeToken(t, canary+"\r\n", 0o600), "more than one line"},
		"empty file":       {nil, writeToken(t, "", 0o600), "a token is required"},
		"a newline alone":  {nil, writeToken(t, "\n", 0o600), "a token is required"},
		"bad chars":        {nil, writeToken(t, canary+" ;x", 0o600), "not allowed (at byte 29)"},
		"short":            {nil, writeToken(t, canary[:15], 0o600), "15 bytes"},
		"a directory":      {nil, dir, "not a regular file"},
		"no such file":     {nil, filepath.Join(dir, "nope"), "no such file"},
		"the env, bad":     {map[string]string{TokenEnv: canary + "\n"}, "", "$ARCA_APPROVER_TOKEN: the token holds a character"},
		"the env, short":   {map[string]string{TokenEnv: canary[:10]}, "", "$ARCA_APPROVER_TOKEN: the token is 10 bytes"},
		"neither set":      {nil, "", "set $ARCA_APPROVER_TOKEN, or name a token file"},
		"a file, bad, env": {map[string]string{TokenEnv: canary}, writeToken(t, canary, 0o644), "mode 0644"},
	} {
		got, err := LoadToken(env(tc.vars), tc.file)
		if err == nil {
			t.Errorf("%s: taken: %q", name, got)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want it to say %q", name, err, tc.says)
		}
		if leaks(err.Error()) {
			t.Errorf("%s: the error holds the token: %v", name, err)
		}
	}
	// Positive control: what LoadToken reads of such a file is what leaks
	// looks for.
	got, err := LoadToken(env(nil), writeToken(t, canary+"\n", 0o600))
	if err != nil || !leaks(got) || !leaks("approver token file: "+got[:15]+"…") {
		t.Fatalf("the canary check does not see the token LoadToken read: %v", err)
	}
}

// leaks reports whether s holds the canary token, or its first 12 bytes.
func leaks(s string) bool {
	return strings.Contains(s, canary[:12]) || strings.Contains(s, canary[7:])
}
