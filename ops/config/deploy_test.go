package config

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeployTargets(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"HOME": "/home/ana"}[k] }
	c, err := Parse([]byte(`
[envs.prod]
vault = "v"
[vaults.v]
kind = "file"
[[deploy]]
name = "app"
template = "templates/app.conf.tmpl"
out = "~/app/app.conf"
mode = "0640"
env = "prod"
[[deploy]]
name = "k8s"
template = "/etc/arca/secret.yaml"
out = "out/secret.yaml"
`), "/etc/arca/arca.toml", getenv)
	if err != nil {
		t.Fatal(err)
	}
	c.Path = "/etc/arca/arca.toml"
	ds, err := c.DeployTargets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Template != filepath.FromSlash("/etc/arca/templates/app.conf.tmpl") || ds[0].Out != "/home/ana/app/app.conf" ||
		ds[0].FileMode() != 0o640 || ds[0].Env != "prod" || ds[1].Out != "/etc/arca/out/secret.yaml" || ds[1].FileMode() != fs.FileMode(0o600) {
		t.Fatalf("targets %+v", ds)
	}
}

func TestDeployRefused(t *testing.T) {
	base := "[envs.prod]\nvault = \"v\"\n[vaults.v]\nkind = \"file\"\n"
	for _, tc := range []struct{ toml, want string }{
		{"[[deploy]]\ntemplate = \"t\"\nout = \"o\"\n", "deploy #1: name is required"},
		{"[[deploy]]\nname = \"a b\"\ntemplate = \"t\"\nout = \"o\"\n", `deploy #1: name "a b" has a character outside`},
		{"[[deploy]]\nname = \"a\"\ntemplate = \"t\"\nout = \"o\"\n[[deploy]]\nname = \"a\"\ntemplate = \"t\"\nout = \"p\"\n", `deploy #2: name "a" is also deploy #1's`},
		{"[[deploy]]\nname = \"a\"\nout = \"o\"\n", "deploy #1 (a): template is required"},
		{"[[deploy]]\nname = \"a\"\ntemplate = \"t\"\n", "deploy #1 (a): out is required"},
		{"[[deploy]]\nname = \"a\"\ntemplate = \"t\"\nout = \"o\"\nenv = \"dev\"\n", `deploy #1 (a): env "dev" is not a configured env (configured: prod)`},
		{"[[deploy]]\nname = \"a\"\ntemplate = \"t\"\nout = \"o\"\nmode = \"4755\"\n", `deploy #1 (a): mode "4755" is not an octal file mode of permission bits`},
		{"[[deploy]]\nname = \"a\"\ntemplate = \"t\"\nout = \"o\"\nmode = \"rw\"\n", `deploy #1 (a): mode "rw" is not an octal`},
		{"[[deploy]]\nname = \"a\"\ntemplate = \"t\"\nout = \"o\"\nowner = \"root\"\n", `unknown key "deploy.owner"`},
	} {
		_, err := Parse([]byte(base+tc.toml), "arca.toml", func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want it to say %q", tc.toml, err, tc.want)
		}
	}
}

// Two targets that write the same file (however its path is spelled) are
// refused: the second would overwrite the first on every run. Stdout may
// be named by many.
func TestDeploySameOut(t *testing.T) {
	getenv := func(string) string { return "" }
	two := func(a, b string) string {
		return "[[deploy]]\nname = \"one\"\ntemplate = \"t\"\nout = \"" + a + "\"\n[[deploy]]\nname = \"two\"\ntemplate = \"t\"\nout = \"" + b + "\"\n"
	}
	for _, tc := range []struct{ a, b, want string }{
		{"out/same", "out/same", `deploy two: out "/etc/arca/out/same" is also deploy one's: each target writes a file of its own`},
		{"out/same", "/etc/arca/out/x/../same", `deploy two: out "/etc/arca/out/same" is also deploy one's`},
		{"-", "-", ""},
		{"out/a", "out/b", ""},
	} {
		c, err := Parse([]byte(two(tc.a, tc.b)), "/etc/arca/arca.toml", getenv)
		if err != nil {
			t.Fatal(err)
		}
		c.Path = "/etc/arca/arca.toml"
		_, err = c.DeployTargets()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s and %s: %v; want them taken", tc.a, tc.b, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s and %s: %v; want %q", tc.a, tc.b, err, tc.want)
		}
	}
}
