package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"filippo.io/age/plugin"
)

// detached runs arca in h in a session of its own, with no controlling
// terminal, as a service or CI runs it; it returns stdout, the exit status
// and stderr.
func (h *arcaHome) detached(t *testing.T, stdin []byte, args ...string) ([]byte, int, string) {
	t.Helper()
	cmd := exec.Command("arca", args...)
	cmd.Env, cmd.Dir = h.env, h.dir
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.Bytes(), ee.ExitCode(), errb.String()
	case err != nil:
		t.Fatalf("arca %q: %v", args, err)
	}
	if strings.Contains(errb.String(), testPluginStderr) {
		t.Fatalf("arca %q: the plugin's stderr reached arca's: %q", args, errb.String())
	}
	return out.Bytes(), 0, errb.String()
}

// mustDetached is detached, failing on a non-zero exit.
func (h *arcaHome) mustDetached(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	out, st, stderr := h.detached(t, stdin, args...)
	if st != 0 {
		t.Fatalf("arca %q: exit %d, stderr %q", args, st, stderr)
	}
	return out
}

// pluginHome is an arca home whose identity is a key of the test plugin,
// its vault made by init and holding arca://app/db.
func pluginHome(t *testing.T) (h *arcaHome, identityLine, recipient string) {
	t.Helper()
	h = newBareHome(t)
	dir := filepath.Join(h.dir, ".config", "arca")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, identityLine, recipient = writePluginIdentity(t, dir, "identity.txt")
	out := h.mustDetached(t, nil, "init")
	if !strings.Contains(string(out), "identity") {
		t.Fatalf("init said %q", out)
	}
	h.mustDetached(t, []byte("s3cret"), "put", "arca://app/db")
	return h, identityLine, recipient
}

// A vault whose identity is an age plugin's opens through the plugin:
// init wraps the vault to the recipient the identity file names, put and
// get unwrap it with the plugin, and nothing of the identity is printed.
func TestPluginIdentityInitPutGet(t *testing.T) {
	h, identityLine, recipient := pluginHome(t)
	if got := h.mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Fatalf("get: %q", got)
	}
	vault, err := os.ReadFile(filepath.Join(h.dir, ".local/share/arca/default.vault"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(vault, []byte(`"recipients":["`+recipient+`"]`)) {
		t.Fatalf("the vault is not wrapped to the plugin's recipient alone: %.300s", vault)
	}
	// $AGEDEBUG=plugin would make age's plugin client copy the protocol, a
	// data key included, to stderr: arca drops it.
	if got, st, stderr := h.withEnv("AGEDEBUG=plugin").detached(t, nil, "get", "arca://app/db"); st != 0 || string(got) != "s3cret" || stderr != "" {
		t.Errorf("get with AGEDEBUG=plugin: exit %d, stdout %q, stderr %q", st, got, stderr)
	}
	if got := h.mustDetached(t, nil, "identity"); !strings.Contains(string(got), recipient) {
		t.Errorf("arca identity: %q, want the plugin's recipient", got)
	}
	// Without the plugin's identity nothing opens: the stanza is the
	// plugin's own.
	native := newArcaHome(t)
	os.Remove(filepath.Join(native.dir, ".local/share/arca/default.vault"))
	if err := os.WriteFile(filepath.Join(native.dir, ".local/share/arca/default.vault"), vault, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, st, stderr := native.detached(t, nil, "get", "arca://app/db"); st == 0 || !strings.Contains(stderr, "cannot unwrap the data key") {
		t.Errorf("a native identity: exit %d, stderr %q", st, stderr)
	}
	trail, err := os.ReadFile(filepath.Join(h.dir, ".local/state/arca/audit.log"))
	if err != nil || !bytes.Contains(trail, []byte(`"op":"get"`)) {
		t.Fatalf("the audit trail: %v, %.200s", err, trail)
	}
	if bytes.Contains(trail, []byte(identityLine)) || bytes.Contains(trail, []byte("AGE-PLUGIN-")) {
		t.Error("the audit trail holds the plugin identity")
	}
}

// $ARCA_IDENTITY_KEY may hold a plugin identity file's text too.
func TestPluginIdentityInEnv(t *testing.T) {
	h, _, _ := pluginHome(t)
	text, err := os.ReadFile(filepath.Join(h.dir, ".config/arca/identity.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(h.dir, ".config/arca/identity.txt"))
	if got := h.withEnv("ARCA_IDENTITY_KEY="+string(text)).mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Fatalf("get: %q", got)
	}
}

// A plugin starts with arca's environment (age's client sets none), but
// never with an ARCA_* variable or a cloud credential: not the identity
// key $ARCA_IDENTITY_KEY holds, nor the passphrase file's name, nor an
// AWS secret; the rest is the plugin's, as a hardware key's may need it.
func TestPluginNeverSeesArcaOrCloudVariables(t *testing.T) {
	h, _, _ := pluginHome(t)
	idPath := filepath.Join(h.dir, ".config/arca/identity.txt")
	text, err := os.ReadFile(idPath)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(idPath)
	seen := filepath.Join(h.dir, "plugin-env")
	he := h.withEnv("ARCA_IDENTITY_KEY="+string(text), "ARCA_PASSPHRASE_FILE=/nonexistent", "AWS_SECRET_ACCESS_KEY=CANARY-aws",
		"GITHUB_TOKEN=CANARY-gh", "PLUGIN_SETTING=kept", testPluginEnvVar+"="+seen)
	if got := he.mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Fatalf("get: %q", got)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatalf("the plugin did not run: %v", err)
	}
	names := strings.Fields(string(b))
	for _, want := range []string{"PATH", "HOME", "PLUGIN_SETTING"} { // the positive control
		if !slices.Contains(names, want) {
			t.Errorf("the plugin's environment lacks %s: %q", want, names)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "ARCA_") || name == "AWS_SECRET_ACCESS_KEY" || name == "GITHUB_TOKEN" {
			t.Errorf("the plugin's environment holds %s", name)
		}
	}
}

// A plugin recipient added to a vault opened by a native identity lets the
// plugin's identity open it; a malformed one is refused, not printed.
func TestPluginRecipientAdded(t *testing.T) {
	h := newArcaHome(t)
	h.put(t, "arca://app/db", []byte("s3cret"))
	old := h.mustDetached(t, nil, "identity")
	path, identityLine, recipient := writePluginIdentity(t, h.dir, "yubikey.txt")
	h.mustDetached(t, nil, "vault", "recipients", "add", recipient)
	hw := h.withEnv("ARCA_IDENTITY=" + path)
	if got := hw.mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Fatalf("get with the plugin identity: %q", got)
	}
	// The old key removed (the data key replaced, wrapped by the plugin),
	// the hardware key alone opens the vault.
	hw.mustDetached(t, nil, "vault", "recipients", "rm", strings.TrimSpace(string(old)))
	if got := hw.mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Fatalf("get with the plugin identity alone: %q", got)
	}
	if _, st, _ := h.detached(t, nil, "get", "arca://app/db"); st == 0 {
		t.Fatal("the removed native identity still opens the vault")
	}
	// A plugin that asks for input to wrap is refused, terminal or not.
	_, st, stderr := hw.withEnv(testPluginDoVar+"=ask-wrap").detached(t, nil, "vault", "recipients", "add", newPluginRecipient(t))
	if want := "plugin age-plugin-arcatest asked for input to wrap a data key to its recipient"; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("a plugin asking to wrap: exit %d, stderr %q; want %q", st, stderr, want)
	}
	bad := recipient[:len(recipient)-1] + map[bool]string{true: "q", false: "p"}[!strings.HasSuffix(recipient, "q")]
	for _, c := range []struct{ in, want string }{
		{bad, "recipient argument 1 is not a valid age plugin recipient (age1NAME1…)"},
		{identityLine, "recipient argument 1 is an age secret key"},
		{"age1" + testPluginName + "1" + strings.Repeat("q", 5000), "is longer than the 4096 bytes an age plugin recipient may be"},
	} {
		_, st, stderr := hw.detached(t, nil, "vault", "recipients", "add", c.in)
		if st != 2 || !strings.Contains(stderr, c.want) || strings.Contains(stderr, c.in[5:20]) {
			t.Errorf("add %.20q: exit %d, stderr %q; want exit 2 and %q", c.in, st, stderr, c.want)
		}
	}
}

// A plugin recipient in a vault's recipients config is wrapped to when
// init makes the vault: the plugin's identity opens it.
func TestPluginRecipientInConfig(t *testing.T) {
	h := newBareHome(t)
	path, _, recipient := writePluginIdentity(t, h.dir, "yubikey.txt")
	cfg := filepath.Join(h.dir, "team.toml")
	body := "[vaults.default]\nkind = \"file\"\npath = \"team.vault\"\nrecipients = [\"" + recipient + "\"]\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	h = h.withEnv("ARCA_CONFIG=" + cfg)
	h.mustDetached(t, nil, "init")
	h.mustDetached(t, []byte("s3cret"), "put", "arca://app/db")
	if got := h.withEnv("ARCA_IDENTITY="+path).mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Fatalf("get with the plugin identity: %q", got)
	}
	bad := strings.Replace(body, recipient, recipient[:len(recipient)-4]+"qqqq", 1)
	if err := os.WriteFile(cfg, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(h.dir, "team.vault"))
	_, st, stderr := h.detached(t, nil, "init")
	if want := "vaults.default.recipients entry 1 is not a valid age plugin recipient (age1NAME1…)"; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("a malformed plugin recipient in the config: exit %d, stderr %q; want %q", st, stderr, want)
	}
}

// serve opens a plugin identity's vault, and its stderr, the audit wire,
// stays events only: nothing the plugin says or writes reaches it.
func TestPluginServeGet(t *testing.T) {
	h, _, _ := pluginHome(t)
	h = h.withEnv(testPluginDoVar + "=message")
	in := `{"id":1,"op":"get","ref":"arca://app/db"}` + "\n"
	out, st, stderr := h.detached(t, []byte(in), "serve")
	if st != 0 || !strings.Contains(string(out), `"value":"s3cret"`) {
		t.Fatalf("serve: exit %d, stdout %q, stderr %q", st, out, stderr)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Errorf("serve's stderr holds a line that is not an event: %q", line)
		}
	}
	if strings.Contains(stderr, "touch the key") || strings.Contains(stderr, testPluginName+" plugin") {
		t.Errorf("the plugin's words reached the audit wire: %q", stderr)
	}
}

// arca mcp --audit-stderr opens a plugin identity's vault too, its
// stderr the audit wire, events only.
func TestPluginMCPAuditStderr(t *testing.T) {
	h, _, _ := pluginHome(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"arca_list","arguments":{}}}
`
	out, st, stderr := h.withEnv(testPluginDoVar+"=message").detached(t, []byte(in), "mcp", "--audit-stderr")
	if st != 0 || !strings.Contains(string(out), "app/db") {
		t.Fatalf("mcp: exit %d, stdout %q, stderr %q", st, out, stderr)
	}
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if !json.Valid([]byte(line)) || strings.Contains(line, "touch the key") {
			t.Errorf("mcp's stderr holds a line that is not an event: %q", line)
		}
	}
}

// What stops a plugin identity is said clearly: a plugin not on $PATH, a
// malformed AGE-PLUGIN line (never printed), a plugin that asks for input
// with no terminal, a plugin's own error (bounded and quoted).
func TestPluginIdentityFailures(t *testing.T) {
	h, identityLine, _ := pluginHome(t)
	empty := t.TempDir()
	noPath := h.withEnv("PATH=" + empty)
	_, st, stderr := noPath.detached(t, nil, "get", "arca://app/db")
	if want := "age plugin age-plugin-arcatest is not on $PATH: install it, or fix PATH"; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("no plugin: exit %d, stderr %q; want %q", st, stderr, want)
	}

	broken := filepath.Join(h.dir, "broken.txt")
	mangled := identityLine[:len(identityLine)-3] + "QQQ"
	if err := os.WriteFile(broken, []byte("# a comment\n\n"+mangled+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, st, stderr = h.withEnv("ARCA_IDENTITY="+broken).detached(t, nil, "get", "arca://app/db")
	if want := "identity file " + broken + " line 3 is not a valid age plugin identity (AGE-PLUGIN-NAME-1…)"; st != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, mangled[20:40]) {
		t.Errorf("malformed line: exit %d, stderr %q; want %q", st, stderr, want)
	}

	for _, do := range []string{"ask-secret", "ask-public", "confirm"} {
		_, st, stderr = h.withEnv(testPluginDoVar+"="+do).detached(t, nil, "get", "arca://app/db")
		if want := "plugin age-plugin-arcatest asked for input and no terminal is open"; st != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "PIN") {
			t.Errorf("%s: exit %d, stderr %q; want %q", do, st, stderr, want)
		}
	}

	_, st, stderr = h.withEnv(testPluginDoVar+"=fail").detached(t, nil, "get", "arca://app/db")
	if want := `plugin age-plugin-arcatest: "the key said no\x1b[31m and no`; st != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "\x1b") || len(stderr) > 500 {
		t.Errorf("plugin error: exit %d, stderr %q; want %q, quoted and bounded", st, stderr, want)
	}

	// A plugin that quotes the identity it was given, in either case, is
	// quoted with the identity left out: on stderr and in the audit trail.
	_, st, stderr = h.withEnv(testPluginDoVar+"=fail-quoting").detached(t, nil, "get", "arca://app/db")
	log, err := os.ReadFile(filepath.Join(h.dir, ".local/state/arca/audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	trail := string(log)
	if want := `plugin age-plugin-arcatest: failed for identity <identity> (<identity>)`; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("a plugin quoting its identity: exit %d, stderr %q; want %q", st, stderr, want)
	}
	secret := identityLine[len("AGE-PLUGIN-ARCATEST-1"):]
	for where, s := range map[string]string{"stderr": stderr, "the audit trail": trail} {
		if strings.Contains(strings.ToUpper(s), secret) {
			t.Errorf("%s holds the plugin identity: %q", where, s)
		}
	}
}

// identity rotate refuses a plugin identity: its key lives on its device,
// and a rotation would write a plain one in its place.
func TestPluginIdentityRotateRefused(t *testing.T) {
	h, _, _ := pluginHome(t)
	before, err := os.ReadFile(filepath.Join(h.dir, ".config/arca/identity.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, st, stderr := h.detached(t, nil, "identity", "rotate")
	if want := "holds an age plugin identity (age-plugin-arcatest), whose key stays on its device"; st == 0 || !strings.Contains(stderr, want) {
		t.Errorf("rotate: exit %d, stderr %q; want %q", st, stderr, want)
	}
	after, _ := os.ReadFile(filepath.Join(h.dir, ".config/arca/identity.txt"))
	if !bytes.Equal(before, after) {
		t.Error("the refused rotation changed the identity file")
	}
	if got := h.mustDetached(t, nil, "get", "arca://app/db"); string(got) != "s3cret" {
		t.Errorf("get after the refusal: %q", got)
	}
}

// age's own age-plugin-batchpass, built from the module arca requires, runs
// through the same protocol: its identity is tried on a vault wrapped to
// a native key, and its error comes back quoted.
func TestPluginBatchpassRealBinary(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, "filippo.io/age/cmd/age-plugin-batchpass")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build age-plugin-batchpass: %v\n%s", err, out)
	}
	h := newArcaHome(t)
	h.put(t, "arca://app/db", []byte("s3cret"))
	path := filepath.Join(h.dir, "batchpass.txt")
	if err := os.WriteFile(path, []byte(plugin.EncodeIdentity("batchpass", nil)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hb := h.withEnv("ARCA_IDENTITY="+path, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, st, stderr := hb.detached(t, nil, "get", "arca://app/db")
	if want := "plugin age-plugin-batchpass: either AGE_PASSPHRASE or AGE_PASSPHRASE_FD must be set"; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("batchpass without its passphrase: exit %d, stderr %q; want %q", st, stderr, want)
	}
	_, st, stderr = hb.withEnv("AGE_PASSPHRASE=pass").detached(t, nil, "get", "arca://app/db")
	if want := "plugin age-plugin-batchpass: file is not passphrase-encrypted"; st != 1 || !strings.Contains(stderr, want) {
		t.Errorf("batchpass on a vault wrapped to a key: exit %d, stderr %q; want %q", st, stderr, want)
	}
}
