package identity_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"filippo.io/age/armor"

	"github.com/arca-secrets/arca/vault/identity"
)

func fixed(p string) identity.Passphrase {
	return func(string) (string, error) { return p, nil }
}

// counted is a Passphrase that counts how often it was asked.
func counted(p string, n *int) identity.Passphrase {
	return func(string) (string, error) { *n++; return p, nil }
}

// A protected identity file holds no key in the clear, opens with age's
// own scrypt identity (what `age -d` does), and loads with its passphrase.
func TestProtectedOpensWithAge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "identity.txt")
	rec, created, err := identity.EnsureWith(path, time.Now(), nil, fixed("correct horse"))
	if err != nil || !created {
		t.Fatalf("EnsureWith: %t, %v", created, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("AGE-SECRET-KEY")) || !identity.Protected(b) || !bytes.HasPrefix(b, []byte(armor.Header)) {
		t.Fatalf("the file is not an armored age file, or holds the key in the clear")
	}
	sid, err := age.NewScryptIdentity("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	d, err := age.Decrypt(armor.NewReader(bytes.NewReader(b)), sid)
	if err != nil {
		t.Fatalf("age cannot open it: %v", err)
	}
	plain, _ := io.ReadAll(d)
	if !bytes.Contains(plain, []byte("AGE-SECRET-KEY-1")) || !bytes.Contains(plain, []byte(rec)) {
		t.Fatalf("age opened it to something else")
	}
	ids, err := identity.Load(path, fixed("correct horse"))
	if err != nil || len(identity.RecipientsOf(ids)) != 1 || identity.RecipientsOf(ids)[0].(*age.X25519Recipient).String() != rec {
		t.Fatalf("Load: %v", err)
	}
	if _, err := identity.Load(path, nil); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "ARCA_PASSPHRASE_FILE") {
		t.Errorf("Load without a passphrase: %v", err)
	}
	_, err = identity.Load(path, fixed("wrong horse"))
	if err == nil || !strings.Contains(err.Error(), "wrong passphrase") || !strings.Contains(err.Error(), path) {
		t.Errorf("a wrong passphrase: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "horse") {
		t.Errorf("the error holds the passphrase: %v", err)
	}
}

// A file asking for an scrypt work factor above MaxWorkFactor is refused
// before a passphrase is asked for or any scrypt work is done.
func TestHostileWorkFactor(t *testing.T) {
	r, err := age.NewScryptRecipient("pw")
	if err != nil {
		t.Fatal(err)
	}
	r.SetWorkFactor(identity.WorkFactor)
	var buf bytes.Buffer
	w, _ := age.Encrypt(&buf, r)
	io.WriteString(w, "AGE-SECRET-KEY-1\n")
	w.Close()
	path := filepath.Join(t.TempDir(), "identity.txt")
	for _, wf := range []string{"40", "21", "99999999999999999999"} {
		b := bytes.Replace(buf.Bytes(), []byte(" 18\n"), []byte(" "+wf+"\n"), 1)
		if bytes.Equal(b, buf.Bytes()) {
			t.Fatal("no work factor in the header")
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		asked := 0
		start := time.Now()
		_, err := identity.Load(path, counted("pw", &asked))
		if err == nil || !strings.Contains(err.Error(), "work factor") || !strings.Contains(err.Error(), path) || asked != 0 {
			t.Errorf("work factor %s: %v (asked %d times)", wf, err, asked)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("work factor %s took %v", wf, d)
		}
	}
	// The positive control: the file as written opens.
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := identity.ReadText(path, fixed("pw")); err != nil {
		t.Errorf("work factor 18: %v", err)
	}
}

// SetPassphrase adds, changes and removes a passphrase, the file replaced
// whole with mode 0600; Keys asks for a passphrase once.
func TestSetPassphrase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "identity.txt")
	rec, _, err := identity.Ensure(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := identity.SetPassphrase(path, nil, nil); err == nil || !strings.Contains(err.Error(), "no passphrase to remove") {
		t.Errorf("removing none: %v", err)
	}
	if err := identity.SetPassphrase(path, nil, fixed("one")); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, true)
	if err := identity.SetPassphrase(path, fixed("nope"), fixed("two")); err == nil || !strings.Contains(err.Error(), "wrong passphrase") {
		t.Errorf("changing with a wrong one: %v", err)
	}
	if err := identity.SetPassphrase(path, fixed("one"), fixed("two")); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, true)
	asked := 0
	keys := &identity.Keys{Pass: counted("two", &asked)}
	for range 3 {
		ids, err := keys.Load(path)
		if err != nil || identity.RecipientsOf(ids)[0].(*age.X25519Recipient).String() != rec {
			t.Fatalf("Keys.Load: %v", err)
		}
	}
	if asked != 1 {
		t.Errorf("asked %d times, want once", asked)
	}
	wrong, asked := &identity.Keys{Pass: counted("one", &asked)}, 0
	wrong.Load(path)
	if _, err := wrong.Load(path); err == nil || asked != 1 {
		t.Errorf("a wrong passphrase: %v, asked %d times, want once", err, asked)
	}
	if err := identity.SetPassphrase(path, fixed("two"), nil); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, false)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left beside the identity: %v", ents)
	}
}

func checkFile(t *testing.T, path string, protected bool) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if st.Mode().Perm() != 0o600 || identity.Protected(b) != protected || bytes.Contains(b, []byte("AGE-SECRET-KEY")) == protected {
		t.Errorf("mode %v, protected %t, want %t", st.Mode().Perm(), identity.Protected(b), protected)
	}
}

// ARCA_IDENTITY_KEY's value (a key line, or a whole file) opens through
// KeyPath; identity.Load refuses KeyPath.
func TestKeyPath(t *testing.T) {
	text, rec, err := identity.New(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	line := text[strings.Index(text, "AGE-SECRET-KEY"):]
	for _, v := range []string{text, strings.TrimSpace(line)} {
		ids, err := (&identity.Keys{Key: v}).Load(identity.KeyPath)
		if err != nil || identity.RecipientsOf(ids)[0].(*age.X25519Recipient).String() != rec {
			t.Errorf("Keys.Load(KeyPath): %v", err)
		}
	}
	if _, err := (&identity.Keys{Key: "AGE-SECRET-KEY-1NOPE"}).Load(identity.KeyPath); err == nil || strings.Contains(err.Error(), "NOPE") {
		t.Errorf("a bad key: %v", err)
	}
	if _, err := identity.Load(identity.KeyPath, nil); err == nil {
		t.Error("Load(KeyPath) opened")
	}
}

// A passphrase file: its first line; others than its owner may not read it.
func TestReadPassphraseFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pass")
	os.WriteFile(f, []byte("s3cret phrase\nmore\n"), 0o600)
	if p, err := identity.ReadPassphraseFile(f); err != nil || p != "s3cret phrase" {
		t.Errorf("ReadPassphraseFile: %v", err)
	}
	os.Chmod(f, 0o644)
	if _, err := identity.ReadPassphraseFile(f); err == nil || !strings.Contains(err.Error(), "0644") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("a 0644 file: %v", err)
	}
	os.WriteFile(f, bytes.Repeat([]byte("x"), identity.MaxPassphraseFile+1), 0o600)
	os.Chmod(f, 0o600)
	if _, err := identity.ReadPassphraseFile(f); err == nil || !strings.Contains(err.Error(), "longer") {
		t.Errorf("a long file: %v", err)
	}
}
