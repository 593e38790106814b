package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"filippo.io/age/armor"
	"github.com/rogpeppe/go-internal/testscript"
)

// protectAt protects the identity file of h by pass at scrypt work factor
// 10, far below what arca writes, so that opening it is quick.
func protectAt(t *testing.T, h *arcaHome, pass string) {
	t.Helper()
	if err := protectFile(filepath.Join(h.dir, ".config/arca/identity.txt"), pass); err != nil {
		t.Fatal(err)
	}
}

// protectFile protects the identity file path by pass at scrypt work
// factor 10.
func protectFile(path, pass string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r, err := age.NewScryptRecipient(pass)
	if err != nil {
		return err
	}
	r.SetWorkFactor(10)
	var out bytes.Buffer
	aw := armor.NewWriter(&out)
	w, err := age.Encrypt(aw, r)
	if err != nil {
		return err
	}
	w.Write(text)
	if err := w.Close(); err != nil {
		return err
	}
	aw.Close()
	return os.WriteFile(path, out.Bytes(), 0o600)
}

// cmdProtect is the script command "protect PASSFILE": it protects
// $HOME's identity file by the first line of PASSFILE, at scrypt work
// factor 10 (arca writes 18, seconds under the race detector), so that
// a script that opens it does not hang on scrypt.
func cmdProtect(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: protect PASSFILE")
	}
	pass, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	line, _, _ := strings.Cut(string(pass), "\n")
	ts.Check(protectFile(filepath.Join(ts.Getenv("HOME"), ".config/arca/identity.txt"), line))
}

// mcpListLines open an MCP session and list the vault: what an agent's
// host sends first.
const mcpListLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"arca_list","arguments":{}}}
`

// passFile writes pass to a file of h's and returns h with
// $ARCA_PASSPHRASE_FILE naming it.
func passFile(t *testing.T, h *arcaHome, pass string) *arcaHome {
	t.Helper()
	path := filepath.Join(h.dir, "pass-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err := os.WriteFile(path, []byte(pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h.withEnv("ARCA_PASSPHRASE_FILE=" + path)
}

// arca mcp opens a protected identity once, at start, from
// $ARCA_PASSPHRASE_FILE; a wrong passphrase stops it before it speaks,
// with a stop event saying why, and the passphrase is on no stream.
func TestMCPOpensAProtectedIdentity(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	protectAt(t, h, "pw-CANARY")

	out, st, wire := passFile(t, h, "pw-CANARY").status(t, []byte(mcpListLines), "arca", "mcp", "--actor", "agent:t", "--audit-stderr")
	if st != 0 || !strings.Contains(string(out), `"ref":"arca://app/db"`) {
		t.Fatalf("mcp with the right passphrase: exit %d, stdout %q, wire %q", st, out, wire)
	}
	if !strings.Contains(wire, `"event":"list"`) {
		t.Errorf("the wire has no list event: %q", wire)
	}

	out, st, wire = passFile(t, h, "wrong-CANARY").status(t, []byte(mcpListLines), "arca", "mcp", "--actor", "agent:t", "--audit-stderr")
	if st != 1 || len(out) != 0 || !strings.Contains(wire, `"event":"stop"`) || !strings.Contains(wire, "wrong passphrase") {
		t.Fatalf("mcp with a wrong passphrase: exit %d, stdout %q, wire %q", st, out, wire)
	}
	for _, s := range []string{string(out), wire} {
		if strings.Contains(s, "CANARY") || strings.Contains(s, "s3cret") {
			t.Errorf("a passphrase or the value got out: %q", s)
		}
	}

	// Without --audit-stderr, the audit file says why too, with who tried
	// where, and stderr says it as text.
	_, st, stderr := passFile(t, h, "wrong-CANARY").status(t, []byte(mcpListLines), "arca", "mcp", "--actor", "agent:t")
	log, err := os.ReadFile(filepath.Join(h.dir, ".local/state/arca/audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	last := lines[len(lines)-1]
	if st != 1 || !strings.Contains(stderr, "wrong passphrase") || !strings.Contains(last, `"event":"stop","message":"cannot start: identity file `) ||
		!strings.Contains(last, `"user":"`) || !strings.Contains(last, `"source":"mcp"`) || strings.Contains(string(log), "CANARY") {
		t.Fatalf("mcp to the audit file, a wrong passphrase: exit %d, stderr %q, the file's last event %s", st, stderr, last)
	}
}

// hostileWorkFactor rewrites the scrypt stanza of h's protected identity
// file to ask for work factor 40: days of scrypt, were it honoured.
func hostileWorkFactor(t *testing.T, h *arcaHome) string {
	t.Helper()
	path := filepath.Join(h.dir, ".config/arca/identity.txt")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if _, err := plain.ReadFrom(armor.NewReader(bytes.NewReader(b))); err != nil {
		t.Fatal(err)
	}
	head, rest, ok := bytes.Cut(plain.Bytes(), []byte(" 10\n"))
	if !ok || !bytes.Contains(head, []byte("-> scrypt ")) {
		t.Fatal("no scrypt stanza at work factor 10 in the protected file")
	}
	var out bytes.Buffer
	aw := armor.NewWriter(&out)
	aw.Write(append(append(head, " 40\n"...), rest...))
	aw.Close()
	out.WriteByte('\n')
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A protected identity file that asks for an scrypt work factor past
// arca's bound is refused before any scrypt runs, by the CLI and by
// serve, naming the file; the same file at its own work factor opens
// (the positive control).
func TestHostileWorkFactorIsRefused(t *testing.T) {
	h := newArcaHome(t)
	h.run(t, []byte("s3cret"), "arca", "put", "arca://app/db")
	protectAt(t, h, "pw")
	hp := passFile(t, h, "pw")
	if out := hp.run(t, nil, "arca", "get", "arca://app/db"); string(out) != "s3cret" {
		t.Fatalf("get before the work factor was raised: %q", out)
	}
	path := hostileWorkFactor(t, h)

	_, st, stderr := hp.status(t, nil, "arca", "get", "arca://app/db")
	if st != 1 || !strings.Contains(stderr, path) || !strings.Contains(stderr, "scrypt work factor") || !strings.Contains(stderr, "above the 20 arca accepts") {
		t.Fatalf("get: exit %d, stderr %q", st, stderr)
	}
	out, st, wire := hp.status(t, []byte(`{"id":1,"op":"list"}`+"\n"), "arca", "serve")
	if st != 1 || len(out) != 0 || !strings.Contains(wire, `"event":"stop"`) || !strings.Contains(wire, "scrypt work factor") {
		t.Fatalf("serve: exit %d, stdout %q, wire %q", st, out, wire)
	}
}
