package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// withEnv is h with more variables in its environment.
func (h *arcaHome) withEnv(kv ...string) *arcaHome {
	return &arcaHome{dir: h.dir, env: append(append([]string(nil), h.env...), kv...)}
}

// $ARCA_IDENTITY_KEY, a key line or a whole identity file, opens a vault
// with no identity file; it is refused beside $ARCA_IDENTITY or a config
// that names a file.
func TestIdentityKeyOpensAVault(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	idPath := filepath.Join(h.dir, ".config/arca/identity.txt")
	text, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(idPath, idPath+".aside"); err != nil {
		t.Fatal(err)
	}
	line := string(text[strings.Index(string(text), "AGE-SECRET-KEY-"):])
	for _, v := range []string{strings.TrimSpace(line), string(text)} {
		if out := h.withEnv("ARCA_IDENTITY_KEY="+v).run(t, nil, "arca", "get", "arca://app/db"); string(out) != "s3cret" {
			t.Errorf("get with $ARCA_IDENTITY_KEY: %q", out)
		}
	}
	if _, st, _ := h.status(t, nil, "arca", "get", "arca://app/db"); st != 1 {
		t.Errorf("get with no identity: exit %d (the positive control)", st)
	}
	hk := h.withEnv("ARCA_IDENTITY_KEY=" + line)
	_, st, stderr := hk.withEnv("ARCA_IDENTITY="+idPath+".aside").status(t, nil, "arca", "get", "arca://app/db")
	if st == 0 || !strings.Contains(stderr, "$ARCA_IDENTITY names an identity file, and $ARCA_IDENTITY_KEY holds an identity: set only one") {
		t.Errorf("beside $ARCA_IDENTITY: exit %d, %q", st, stderr)
	}
	conf := filepath.Join(h.dir, "named.toml")
	if err := os.WriteFile(conf, []byte("[vaults.default]\nkind = \"file\"\nidentity = \"~/.config/arca/identity.txt.aside\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, st, stderr = hk.status(t, nil, "arca", "get", "--config", conf, "arca://app/db")
	if st == 0 || !strings.Contains(stderr, "vaults.default.identity names an identity file, and $ARCA_IDENTITY_KEY holds an identity: set only one") {
		t.Errorf("beside a config naming a file: exit %d, %q", st, stderr)
	}
	if strings.Contains(stderr, "AGE-SECRET-KEY") {
		t.Errorf("an error holds the key: %q", stderr)
	}
}

// $ARCA_IDENTITY_KEY reaches no child: not arca run's command, not an
// action's command, not serve's PDP.
func TestIdentityKeyReachesNoChild(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	idPath := filepath.Join(h.dir, ".config/arca/identity.txt")
	text, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(idPath); err != nil {
		t.Fatal(err)
	}
	hk := h.withEnv("ARCA_IDENTITY_KEY="+string(text), "ARCA_PROBE=not-a-secret")
	leaked := func(what, env string) {
		t.Helper()
		if !strings.Contains(env, "HOME="+h.dir) {
			t.Errorf("%s: no environment was shown (the positive control): %q", what, env)
		}
		if strings.Contains(env, "ARCA_IDENTITY_KEY") || strings.Contains(env, "AGE-SECRET-KEY") || strings.Contains(env, "ARCA_PROBE") {
			t.Errorf("%s: an ARCA_* variable, or the key, reached the child", what)
		}
	}
	out := hk.run(t, nil, "arca", "run", "--", "sh", "-c", "env")
	leaked("arca run", string(out))

	conf := filepath.Join(h.dir, "serve.toml")
	body := "[serve.pdp]\nexec = '''env > pdp.env; echo '{\"allow\":true}''''\n\n[actions.dump]\nargv = [\"sh\", \"-c\", \"env\"]\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	in := `{"id":1,"op":"get","ref":"arca://app/db"}` + "\n" + `{"id":2,"op":"exec","action":"dump"}` + "\n"
	out = hk.run(t, []byte(in), "arca", "serve", "--config", conf)
	if !strings.Contains(string(out), `"value":"s3cret"`) || !strings.Contains(string(out), `"exit_code":0`) {
		t.Fatalf("serve answered %q", out)
	}
	leaked("an action", string(out))
	pdpEnv, err := os.ReadFile(filepath.Join(h.dir, "pdp.env"))
	if err != nil {
		t.Fatal(err)
	}
	leaked("the PDP", string(pdpEnv))
}

// $ARCA_IDENTITY_KEY may hold a protected identity file's text: it opens
// with the passphrase of $ARCA_PASSPHRASE_FILE, and an error names the
// variable, which is no file.
func TestIdentityKeyProtected(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	idPath := filepath.Join(h.dir, ".config/arca/identity.txt")
	if err := protectFile(idPath, "pw"); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(idPath)
	hk := h.withEnv("ARCA_IDENTITY_KEY=" + string(text))
	if out := passFile(t, hk, "pw").run(t, nil, "arca", "get", "arca://app/db"); string(out) != "s3cret" {
		t.Fatalf("get: %q", out)
	}
	_, st, stderr := passFile(t, hk, "wrong").status(t, nil, "arca", "get", "arca://app/db")
	if st != 1 || !strings.Contains(stderr, "arca: $ARCA_IDENTITY_KEY: wrong passphrase") {
		t.Fatalf("a wrong passphrase: exit %d, %q", st, stderr)
	}
	_, st, stderr = h.withEnv("ARCA_IDENTITY_KEY=not a key").status(t, nil, "arca", "get", "arca://app/db")
	if st != 1 || !strings.Contains(stderr, "$ARCA_IDENTITY_KEY line 1 is not an age identity") || strings.Contains(stderr, "identity file $") {
		t.Fatalf("not a key: exit %d, %q", st, stderr)
	}
}
