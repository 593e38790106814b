package deploy

// Report is what `arca deploy --json` prints: one entry per target, in
// the order they ran, never a value. Like every --json shape it is stable
// and additive: a field may be added, never removed or given another
// meaning. ReportSchema describes it.
type Report struct {
	Targets []TargetReport `json:"targets"`
}

// TargetReport is one target's outcome.
type TargetReport struct {
	Name     string   `json:"name,omitempty"` // the [[deploy]] name; absent for --template
	Template string   `json:"template"`
	Out      string   `json:"out"`    // the file written, or "-" for stdout
	Status   string   `json:"status"` // Status.Key
	Refs     []string `json:"refs"`   // the refs its template names, as written
}

// Key is s in a report: written, unchanged, would_change, printed or
// listed.
func (s Status) Key() string {
	return [...]string{"", "written", "unchanged", "would_change", "printed", "listed"}[s]
}

// NewReport is the report of res.
func NewReport(res []Result) Report {
	r := Report{Targets: make([]TargetReport, len(res))}
	for i, x := range res {
		refs := x.Refs
		if refs == nil {
			refs = []string{}
		}
		r.Targets[i] = TargetReport{Name: x.Target.Name, Template: x.Target.Template, Out: x.Target.Out, Status: x.Status.Key(), Refs: refs}
	}
	return r
}

// ReportSchema is the JSON Schema of Report, shown in docs/cli.md.
const ReportSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "arca deploy --json",
  "type": "object",
  "required": ["targets"],
  "properties": {
    "targets": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["template", "out", "status", "refs"],
        "properties": {
          "name": {"type": "string", "description": "the [[deploy]] name; absent for --template"},
          "template": {"type": "string"},
          "out": {"type": "string", "description": "the file the target writes"},
          "status": {"enum": ["written", "unchanged", "would_change", "listed"], "description": "written: rewritten; unchanged: it already held the output; would_change: --check found it differs; listed: --dry-run, nothing read"},
          "refs": {"type": "array", "items": {"type": "string"}, "description": "the refs its template names, as written, never a value"}
        }
      }
    }
  }
}
`
