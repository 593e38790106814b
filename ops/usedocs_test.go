package ops

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
)

// TestUseCapability: the manifest's use capability lists each configured
// service (name, methods, path globs) and action (name, pattern, how many
// arguments), sorted, and nothing of where they go or what they carry:
// no base URL, credential ref, command or env.
func TestUseCapability(t *testing.T) {
	f := newFixture(t, `
[services.zeta]
base_url = "https://api.example.test/v1"
credential = "arca://ci/zeta-token"
auth = "header"
header = "X-Api-Key"
methods = ["GET", "POST"]
paths = ["/items/*"]

[services.alpha]
base_url = "https://alpha.example.test"
credential = "arca://ci/alpha-token"
auth = "bearer"
paths = ["/user"]

[actions.migrate]
argv = ["/usr/bin/secret-migrator", "--apply"]
args = "^--dry-run$"
env = { DATABASE_URL = "arca://app/db" }
`)
	b, err := manifest.Document(manifest.Runtime{Services: f.svc.cfg.ServiceDocs(), Actions: f.svc.cfg.ActionDocs()})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Capabilities struct {
			Use json.RawMessage `json:"use"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	use := string(doc.Capabilities.Use)
	for _, want := range []string{
		`"services":[{"name":"alpha","methods":["GET"],"paths":["/user"]},{"name":"zeta","methods":["GET","POST"],"paths":["/items/*"]}]`,
		`"actions":[{"name":"migrate","args":"^--dry-run$","max_args":4}]`,
	} {
		if !strings.Contains(use, want) {
			t.Errorf("use capability lacks %s:\n%s", want, use)
		}
	}
	for _, never := range []string{"example.test", "zeta-token", "alpha-token", "app/db", "secret-migrator", "DATABASE_URL", "X-Api-Key"} {
		if strings.Contains(string(b), never) {
			t.Errorf("the manifest holds %q", never)
		}
	}
	if strings.Contains(use, "arca://") {
		t.Errorf("the use capability names a ref: %s", use)
	}
}

// TestActionWithoutCredentials: an action whose env names no ref runs,
// decided on its env alone; its event names no ref.
func TestActionWithoutCredentials(t *testing.T) {
	f := newFixture(t, `
[actions.hello]
argv = ["/bin/sh", "-c", "echo hello"]
`)
	op, _ := manifest.Op("exec")
	res, err := f.svc.Do(t.Context(), op, Request{Action: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.(*ExecResult)
	if string(r.Stdout) != "hello\n" || r.ExitCode != 0 {
		t.Errorf("stdout %q, exit %d", r.Stdout, r.ExitCode)
	}
	evs := f.lines(t)
	last := evs[len(evs)-1]
	if last.Event != "exec" || last.Ref != "" || last.Env != "default" || last.Use == nil || last.Use.Action != "hello" {
		t.Errorf("event %+v", last)
	}
}
