package main

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The arca binary links no C library: the README's quick start builds it,
// and so does scripts/test.sh (which CI runs), with CGO_ENABLED=0. Each
// build line is run as written, in an environment where cgo would be on
// wherever a C compiler is installed (any CGO_ENABLED of the test's own
// environment removed), and the binary it makes must be a static ELF
// executable: no interpreter (PT_INTERP), no shared library it needs, and
// its build information saying cgo was off. The line must also say
// CGO_ENABLED=0 itself.
func TestBuiltBinaryIsStatic(t *testing.T) {
	for _, src := range []struct{ file, build string }{
		{"../../README.md", "go build -o arca ./cmd/arca"},
		{"../../scripts/test.sh", `go build -o "$bin/arca" ./cmd/arca`},
	} {
		t.Run(filepath.Base(src.file), func(t *testing.T) {
			env := buildEnv(t, src.file, src.build)
			// Said, not only found: where no C compiler is installed, a
			// line without it would build a static binary all the same.
			if !slices.Contains(env, "CGO_ENABLED=0") {
				t.Errorf("%s builds arca with %q, not CGO_ENABLED=0", src.file, strings.Join(env, " "))
			}
			bin := filepath.Join(t.TempDir(), "arca")
			cmd := exec.Command("go", "build", "-o", bin, "./cmd/arca")
			cmd.Dir = "../.."
			cmd.Env = append(withoutCgo(os.Environ()), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", strings.Join(env, " "), src.build, err, out)
			}
			if problem := dynamicLinking(bin); problem != "" {
				t.Errorf("%s builds arca with %q: %s", src.file, strings.Join(env, " "), problem)
			}
		})
	}
}

// buildEnv finds the line of file that runs build and returns the
// environment assignments before it on that line (NAME=VALUE words).
func buildEnv(t *testing.T, file, build string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		before, _, ok := strings.Cut(line, build)
		if !ok {
			continue
		}
		if i := strings.LastIndex(before, "&&"); i >= 0 {
			before = before[i+2:]
		}
		env := strings.Fields(before)
		for _, kv := range env {
			if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
				t.Fatalf("%s: %q before %q is not an environment assignment", file, kv, build)
			}
		}
		return env
	}
	t.Fatalf("%s has no line that runs %q", file, build)
	return nil
}

// withoutCgo is env without any CGO_ENABLED setting.
func withoutCgo(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CGO_ENABLED=") {
			out = append(out, kv)
		}
	}
	return out
}

// dynamicLinking says how the ELF executable at path links a C library, or
// returns "" when it does not.
func dynamicLinking(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return "not an ELF executable: " + err.Error()
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "dynamically linked: it names an interpreter (PT_INTERP)"
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		return "dynamically linked: it needs " + strings.Join(libs, ", ")
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "no build information: " + err.Error()
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" {
			return "built with CGO_ENABLED=" + s.Value
		}
	}
	return ""
}
