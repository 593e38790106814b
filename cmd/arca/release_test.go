package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// scripts/release.sh, run for the host platform into a temp dir, builds
// arca-VERSION-OS-ARCH with `git describe` stamped in (--version and
// version --json say it), static on Linux, and a SHA256SUMS that verifies;
// a platform Go does not build for is refused before anything is built.
func TestReleaseScript(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed to name the version: install it")
	}
	describe, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Fatalf("git describe (the tests run in a clone): %v", err)
	}
	version := strings.TrimSpace(string(describe))
	out := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	run := func(platforms string) (string, error) {
		cmd := exec.Command("../../scripts/release.sh", out)
		cmd.Env = append(os.Environ(), "RELEASE_PLATFORMS="+platforms)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}

	for platforms, want := range map[string]string{"plan9/bogus": "plan9/bogus is not a platform Go builds for", " ": "RELEASE_PLATFORMS names no platform"} {
		if msg, err := run(platforms); err == nil || !strings.Contains(msg, want) {
			t.Fatalf("RELEASE_PLATFORMS=%q: %v: %s", platforms, err, msg)
		}
		if names, _ := os.ReadDir(out); len(names) != 0 {
			t.Fatalf("RELEASE_PLATFORMS=%q left %d files", platforms, len(names))
		}
	}
	// Outside a git checkout there is no version to stamp: refused.
	bare := filepath.Join(t.TempDir(), "scripts")
	script, err := os.ReadFile("../../scripts/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, "release.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bare, "release.sh"), out)
	cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(filepath.Dir(bare)))
	if msg, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(msg), "is not a git checkout") {
		t.Fatalf("outside a checkout: %v: %s", err, msg)
	}

	if msg, err := run(platform); err != nil {
		t.Fatalf("release.sh: %v: %s", err, msg)
	}
	name := "arca-" + version + "-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(out, name)
	got, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", name, err)
	}
	if want := "arca " + version + " (protocol arca-serve/1)\n"; string(got) != want {
		t.Fatalf("--version printed %q, want %q", got, want)
	}
	var v struct{ Version string }
	if b, err := exec.Command(bin, "version", "--json").Output(); err != nil || json.Unmarshal(b, &v) != nil || v.Version != version {
		t.Fatalf("version --json: %v: %q, want version %q", err, b, version)
	}
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatal("the binary asks for a dynamic loader: it is not static")
			}
		}
	}
	checkSums(t, out, []string{name})
	readmeInstall(t, out, name, version)
}

// readmeInstall holds the README's install block to the build in out:
// go install names this module's cmd/arca, the release binary's commands
// verify SHA256SUMS and install name (run, into a temp HOME), refusing a
// binary that does not match, and the build is scripts/release.sh.
func readmeInstall(t *testing.T, out, name, version string) {
	t.Helper()
	blocks, err := readBlocks("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, b := range blocks {
		if b.kind == "install" {
			cmds = append(cmds, commandLines(b.body)...)
		}
	}
	if len(cmds) != 3 {
		t.Fatalf("the README's install block is %d commands, want 3: %q", len(cmds), cmds)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	module, _, _ := strings.Cut(strings.TrimPrefix(string(mod), "module "), "\n")
	if cmds[0] != "go install "+module+"/cmd/arca@latest" {
		t.Errorf("the README installs with %q, not this module's cmd/arca (%s)", cmds[0], module)
	}
	if cmds[2] != "scripts/release.sh" {
		t.Errorf("the README builds releases with %q", cmds[2])
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	install := strings.ReplaceAll(cmds[1], "arca-VERSION-OS-ARCH", name)
	if _, err := exec.LookPath("sha256sum"); err != nil { // macOS: the README's alternative
		install = strings.Replace(install, "sha256sum --check", "shasum -a 256 --check", 1)
	}
	sh := func(dir string) ([]byte, error) {
		cmd := exec.Command("bash", "-c", install)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "HOME="+home)
		return cmd.CombinedOutput()
	}
	if b, err := sh(out); err != nil {
		t.Fatalf("%s: %v: %s", install, err, b)
	}
	if got, err := exec.Command(filepath.Join(home, ".local/bin/arca"), "--version").Output(); err != nil || !strings.Contains(string(got), " "+version+" ") {
		t.Fatalf("the installed arca --version: %v: %q", err, got)
	}
	// A binary that is not the one summed is refused, and not installed.
	tampered := t.TempDir()
	b, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tampered, name), b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tampered, "SHA256SUMS"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(home, ".local/bin/arca")); err != nil {
		t.Fatal(err)
	}
	if b, err := sh(tampered); err == nil {
		t.Fatalf("a tampered binary passed the README's check: %s", b)
	}
	if _, err := os.Stat(filepath.Join(home, ".local/bin/arca")); err == nil {
		t.Fatal("a tampered binary was installed")
	}
}

// checkSums checks that dir/SHA256SUMS has a line, in sha256sum's format,
// for each of names, in order, and that each sum is that file's.
func checkSums(t *testing.T, dir string, names []string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	i := 0
	for ; sc.Scan(); i++ {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok || i >= len(names) || file != names[i] {
			t.Fatalf("SHA256SUMS line %d: %q, want HASH  %s", i+1, sc.Text(), names[min(i, len(names)-1)])
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		if want, _ := hex.DecodeString(sum); !bytes.Equal(h[:], want) {
			t.Fatalf("SHA256SUMS: %s does not verify", file)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(names) {
		t.Fatalf("SHA256SUMS has %d lines, want %d", i, len(names))
	}
}
