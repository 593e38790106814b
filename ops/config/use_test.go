package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestParseUse: the example of SPEC §13 loads, every omitted key taking
// its default.
func TestParseUse(t *testing.T) {
	data, err := os.ReadFile("testdata/use.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "arca.toml")
	writeFile(t, p, string(data))
	c, err := Load(p, envOf(map[string]string{"HOME": "/h"}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	wantServices := map[string]Service{
		"github": {
			BaseURL: "https://api.github.com", Credential: "arca://ci/github-token", Auth: "bearer",
			Methods: []string{"GET", "POST"}, Paths: []string{"/user", "/repos/*"},
			TimeoutMS: 30000, MaxResponseBytes: 1 << 20, FollowRedirects: "none",
			TLSCA: filepath.Join(dir, "certs/ca.pem"),
		},
		"local": {
			BaseURL: "http://127.0.0.1:8080/api", Credential: "arca://dev/local/password", Auth: "basic",
			UsernameRef: "arca://local/user", Methods: []string{"GET"}, Paths: []string{"/*"},
			TimeoutMS: DefaultServiceTimeoutMS, MaxResponseBytes: DefaultMaxResponseBytes, FollowRedirects: RedirectsNone,
		},
	}
	if !reflect.DeepEqual(c.Services, wantServices) {
		t.Errorf("Services =\n%+v\nwant\n%+v", c.Services, wantServices)
	}
	migrate, status := c.Actions["migrate-db"], c.Actions["status"]
	if len(c.Actions) != 2 || migrate.ArgsRE == nil || status.ArgsRE != nil {
		t.Fatalf("Actions = %+v", c.Actions)
	}
	if got := migrate.ArgsRE.String(); got != `^(?:^--(dry-run|verbose)$)$` {
		t.Errorf("migrate-db ArgsRE = %q", got)
	}
	migrate.ArgsRE = nil
	wantMigrate := Action{
		Argv: []string{"npm", "run", "db:migrate", "--"}, Args: "^--(dry-run|verbose)$", MaxArgs: DefaultMaxArgs,
		Env: map[string]string{"DATABASE_URL": "arca://app/db"}, TimeoutMS: 120000, MaxOutputBytes: 256 << 10,
	}
	if !reflect.DeepEqual(migrate, wantMigrate) {
		t.Errorf("migrate-db =\n%+v\nwant\n%+v", migrate, wantMigrate)
	}
	wantStatus := Action{Argv: []string{"git", "status"}, TimeoutMS: DefaultActionTimeoutMS, MaxOutputBytes: DefaultMaxOutputBytes}
	if !reflect.DeepEqual(status, wantStatus) {
		t.Errorf("status =\n%+v\nwant\n%+v", status, wantStatus)
	}
}

// TestArgsMatchWhole: an action's args matches a whole argument, not a
// part of one, whether or not it is anchored itself.
func TestArgsMatchWhole(t *testing.T) {
	for _, tc := range []struct {
		args, arg string
		want      bool
	}{
		{"--dry-run|--verbose", "--verbose", true},
		{"--dry-run|--verbose", "--verbose; rm -rf /", false},
		{"--dry-run|--verbose", "x--dry-run", false},
		{"[a-z]+", "abc", true},
		{"[a-z]+", "abc\n", false},
		{"^--(dry-run|verbose)$", "--dry-run", true},
		{"^--(dry-run|verbose)$", "--dry-runx", false},
	} {
		doc := "[actions.a]\nargv = [\"x\"]\nargs = '" + tc.args + "'\n"
		c, err := Parse([]byte(doc), "arca.toml", envOf(nil))
		if err != nil {
			t.Fatalf("%s: %v", tc.args, err)
		}
		if got := c.Actions["a"].ArgsRE.MatchString(tc.arg); got != tc.want {
			t.Errorf("args %q on %q: %v, want %v", tc.args, tc.arg, got, tc.want)
		}
	}
}

// TestTLSCAExpands: tls_ca is a path like every other of the config.
func TestTLSCAExpands(t *testing.T) {
	const service = "[services.s]\nbase_url = \"https://x.example\"\ncredential = \"arca://a/b\"\nauth = \"bearer\"\npaths = [\"/*\"]\n"
	for _, tc := range []struct{ tlsCA, path, want string }{
		{"ca.pem", "/srv/proj/arca.toml", "/srv/proj/ca.pem"},
		{"../ca/ca.pem", "/srv/proj/arca.toml", "/srv/ca/ca.pem"},
		{"~/ca.pem", "/srv/proj/arca.toml", "/h/ca.pem"},
		{"/etc/ca.pem", "/srv/proj/arca.toml", "/etc/ca.pem"},
		{"ca.pem", "", "ca.pem"}, // no file: nothing to be relative to
	} {
		c, err := parse([]byte(service+"tls_ca = \""+tc.tlsCA+"\"\n"), "arca.toml", tc.path, envOf(map[string]string{"HOME": "/h"}))
		if err != nil {
			t.Fatalf("%s: %v", tc.tlsCA, err)
		}
		if got := c.Services["s"].TLSCA; got != tc.want {
			t.Errorf("tls_ca %q in %q = %q, want %q", tc.tlsCA, tc.path, got, tc.want)
		}
	}
	_, err := parse([]byte(service+"tls_ca = \"~/ca.pem\"\n"), "arca.toml", "/srv/arca.toml", envOf(nil))
	wantErr(t, err, "arca.toml: HOME is not set; needed to expand ~/ in services.s.tls_ca")
}

// TestBaseURLNormalised: a trailing "/" is dropped, nothing else changes.
func TestBaseURLNormalised(t *testing.T) {
	for raw, want := range map[string]string{
		"https://api.example.com":       "https://api.example.com",
		"https://api.example.com/":      "https://api.example.com",
		"https://api.example.com/api/":  "https://api.example.com/api",
		"https://api.example.com:8443/": "https://api.example.com:8443",
		"HTTPS://api.example.com/v1/x":  "https://api.example.com/v1/x",
		"http://localhost:3000":         "http://localhost:3000",
		"http://[::1]:3000/":            "http://[::1]:3000",
		"http://127.0.0.2":              "http://127.0.0.2",
	} {
		got, why := normalBaseURL(raw)
		if why != "" || got != want {
			t.Errorf("normalBaseURL(%q) = %q, %q; want %q", raw, got, why, want)
		}
	}
}

// useDoc is a valid config with one service and one action, each of
// whose lines a test may replace or add to.
func useDoc(service, action map[string]string) string {
	s := map[string]string{
		"base_url": `"https://api.example.com"`, "credential": `"arca://ci/token"`,
		"auth": `"bearer"`, "paths": `["/*"]`,
	}
	a := map[string]string{"argv": `["echo"]`}
	for k, v := range service {
		s[k] = v
	}
	for k, v := range action {
		a[k] = v
	}
	var b strings.Builder
	b.WriteString("[services.svc]\n")
	for _, k := range sortedKeys(s) {
		if s[k] != "" {
			b.WriteString(k + " = " + s[k] + "\n")
		}
	}
	b.WriteString("\n[actions.act]\n")
	for _, k := range sortedKeys(a) {
		if a[k] != "" {
			b.WriteString(k + " = " + a[k] + "\n")
		}
	}
	return b.String()
}

func TestUseDocLoads(t *testing.T) {
	if _, err := Parse([]byte(useDoc(nil, nil)), "arca.toml", envOf(nil)); err != nil {
		t.Fatalf("the base of TestUseRefused does not load: %v", err)
	}
}

// TestUseKeysDocumented: every key a service or action table takes has
// its row in docs/config.md, under its table's heading, and no row names a
// key the table does not take.
func TestUseKeysDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, tc := range []struct {
		heading string
		t       reflect.Type
	}{
		{"### `[services.NAME]`", reflect.TypeFor[serviceDoc]()},
		{"### `[actions.NAME]`", reflect.TypeFor[actionDoc]()},
	} {
		_, section, ok := strings.Cut(doc, "\n"+tc.heading+"\n")
		if !ok {
			t.Fatalf("config.md has no heading %s", tc.heading)
		}
		section, _, _ = strings.Cut(section, "\n#")
		var rows []string
		for _, line := range strings.Split(section, "\n") {
			if k, ok := strings.CutPrefix(line, "| `"); ok {
				k, _, _ = strings.Cut(k, "`")
				rows = append(rows, k)
			}
		}
		var keys []string
		for _, f := range reflect.VisibleFields(tc.t) {
			if _, ok := field(tc.t, f.Tag.Get("toml")); ok && f.Tag.Get("toml") != "" {
				keys = append(keys, f.Tag.Get("toml"))
			}
		}
		slices.Sort(rows)
		slices.Sort(keys)
		if len(keys) == 0 || !slices.Equal(rows, keys) {
			t.Errorf("%s documents %v; the table takes %v", tc.heading, rows, keys)
		}
	}
}
