package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arca-secrets/arca/ops/deploy"
)

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no schema at %s", url) }

// The report of every status a --json run can give validates against
// ReportSchema, and holds no value; a status the schema does not list
// (printed: a target on stdout) does not.
func TestReportMatchesSchema(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(deploy.ReportSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("urn:deploy", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("urn:deploy")
	if err != nil {
		t.Fatal(err)
	}
	valid := func(res []deploy.Result) error {
		b, err := json.Marshal(deploy.NewReport(res))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), canary) {
			t.Fatalf("a value in the report: %s", b)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return sch.Validate(inst)
	}
	f := newFixture(t)
	f.put(t, "arca://app/db", canary)
	named := deploy.Target{Name: "app", Template: f.file(t, "app.tmpl", "pw={{ arca://app/db }}\n"), Out: filepath.Join(f.dir, "app.conf"), Mode: 0o600}
	plain := deploy.Target{Template: f.file(t, "none.tmpl", "no refs\n"), Out: filepath.Join(f.dir, "none.conf"), Mode: 0o600}
	targets := []deploy.Target{named, plain}
	seen := map[string]bool{}
	for _, o := range []deploy.Options{{DryRun: true}, {Check: true}, {}, {}, {Check: true}} {
		res, err := deploy.Run(context.Background(), f.svc, targets, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := valid(res); err != nil {
			t.Errorf("options %+v: %v", o, err)
		}
		for _, r := range res {
			seen[r.Status.Key()] = true
		}
	}
	for _, k := range []string{"listed", "would_change", "written", "unchanged"} {
		if !seen[k] {
			t.Errorf("no run gave status %s", k)
		}
	}
	if err := valid([]deploy.Result{{Target: named, Status: deploy.Printed}}); err == nil {
		t.Error("a printed target validates, but --json refuses stdout targets")
	}
}
