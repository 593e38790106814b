package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocBenchCommands: the commands of a block marked <!-- bench --> (how
// docs/performance.md's figures are measured) are not run here (each takes
// minutes), but everything they name must exist: the package of each go
// test, a benchmark for every alternative of its -bench pattern, the
// program of each go run and every flag it is given, an npm script, a
// Python script and its options. A renamed benchmark or flag fails this.
func TestDocBenchCommands(t *testing.T) {
	n := 0
	for _, b := range markedBlocks(t, "bench") {
		for i, l := range commandLines(b.body) {
			n++
			if err := checkBenchCommand(l); err != "" {
				t.Errorf("%s:%d: %s: %s", b.doc, b.line+1+i, l, err)
			}
		}
	}
	if n == 0 {
		t.Fatal("no benchmark commands found in the docs")
	}
}

// checkBenchCommand says what a command names that does not exist.
func checkBenchCommand(line string) string {
	line, _, _ = strings.Cut(line, " #")
	dir := "../.."
	if m := regexp.MustCompile(`^\(cd (\S+) && (.*)\)$`).FindStringSubmatch(line); m != nil {
		dir, line = filepath.Join(dir, m[1]), m[2]
	}
	for _, part := range strings.Split(line, " && ") {
		words := strings.Fields(part)
		for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value
			words = words[1:]
		}
		if msg := checkBenchWords(dir, words); msg != "" {
			return msg
		}
	}
	return ""
}

func checkBenchWords(dir string, w []string) string {
	switch {
	case len(w) >= 3 && w[0] == "go" && w[1] == "test":
		return checkGoTest(filepath.Join(dir, w[2]), w[3:])
	case len(w) >= 3 && w[0] == "go" && (w[1] == "run" || w[1] == "build"):
		pkg := w[len(w)-1]
		if w[1] == "run" {
			pkg = w[2]
		}
		return checkProgram(filepath.Join(dir, pkg), w[3:], w[1] == "run")
	case len(w) >= 3 && w[0] == "npm" && w[1] == "run":
		return checkNPMScript(dir, w[2])
	case len(w) >= 1 && w[0] == "npm":
		return ""
	case len(w) >= 2 && w[0] == "python3":
		return checkProgram(filepath.Join(dir, w[1]), w[2:], true)
	}
	return "not a command this check knows"
}

// checkGoTest: the package exists and each alternative of -bench names a
// benchmark of it.
func checkGoTest(pkg string, args []string) string {
	src, err := filepath.Glob(filepath.Join(pkg, "*_test.go"))
	if err != nil || len(src) == 0 {
		return "no tests in " + pkg
	}
	var names []string
	for _, f := range src {
		data, err := os.ReadFile(f)
		if err != nil {
			return err.Error()
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Benchmark\w+)\(`).FindAllStringSubmatch(string(data), -1) {
			names = append(names, strings.TrimPrefix(m[1], "Benchmark"))
		}
	}
	for i, a := range args {
		if a != "-bench" || i+1 == len(args) {
			continue
		}
		top, _, _ := strings.Cut(strings.Trim(args[i+1], "'"), "/")
		for _, alt := range strings.Split(top, "|") {
			re, err := regexp.Compile(alt)
			if err != nil {
				return "bad -bench pattern " + alt
			}
			if !anyMatch(re, names) {
				return "no benchmark of " + pkg + " matches " + alt
			}
		}
	}
	return ""
}

func anyMatch(re *regexp.Regexp, names []string) bool {
	for _, n := range names {
		if re.MatchString(n) {
			return true
		}
	}
	return false
}

// checkProgram: the program exists, and each -flag or --option it is
// given is one its source defines.
func checkProgram(path string, args []string, flags bool) string {
	var src []byte
	if fi, err := os.Stat(path); err != nil {
		return err.Error()
	} else if fi.IsDir() {
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			src = append(src, data...)
		}
	} else if src, err = os.ReadFile(path); err != nil {
		return err.Error()
	}
	for _, a := range args {
		if !flags || !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(string(src), `"`+name+`"`) && !strings.Contains(string(src), `"--`+name+`"`) {
			return "no flag " + a + " in " + path
		}
	}
	return ""
}

// checkNPMScript: the package in dir has the script.
func checkNPMScript(dir, name string) string {
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return err.Error()
	}
	var pkg struct{ Scripts map[string]string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		return err.Error()
	}
	if pkg.Scripts[name] == "" {
		return "no npm script " + name + " in " + dir
	}
	return ""
}
