package manifest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExitStatuses: every error code has the one exit status SPEC §10
// (and §6, conflict) gives it, no code exits 0, and the statuses are exactly 0 to 5.
func TestExitStatuses(t *testing.T) {
	want := map[Code]int{
		BadRequest:       2,
		UnknownOp:        2,
		Denied:           3,
		PDPUnreachable:   1,
		NotFound:         4,
		OpError:          1,
		UpstreamFailed:   1,
		ApprovalRequired: 3,
		Conflict:         5,
	}
	codes := Codes()
	if got := slices.Sorted(slices.Values(codes)); !slices.Equal(got, slices.Sorted(maps.Keys(want))) {
		t.Fatalf("Codes() = %q, want %q", codes, slices.Sorted(maps.Keys(want)))
	}
	statuses := map[int]bool{ExitOK: true}
	for _, c := range codes {
		st := ExitStatus(c)
		if st != want[c] {
			t.Errorf("ExitStatus(%s) = %d, want %d", c, st, want[c])
		}
		if st == ExitOK {
			t.Errorf("ExitStatus(%s) is 0: an error would exit as a success", c)
		}
		statuses[st] = true
	}
	if got := slices.Sorted(maps.Keys(statuses)); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("exit statuses are %v, want the documented 0-5", got)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{{"ExitOK", ExitOK, 0}, {"ExitOpError", ExitOpError, 1}, {"ExitUsage", ExitUsage, 2}, {"ExitDenied", ExitDenied, 3}, {"ExitNotFound", ExitNotFound, 4}, {"ExitConflict", ExitConflict, 5}} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if st := ExitStatus("no_such_code"); st != ExitOpError {
		t.Errorf("an unknown code exits %d, want %d (op error)", st, ExitOpError)
	}
}

// exportedLimits is every Max constant the package exports. TestLimitsDoc
// fails if one is added to the package and not here.
var exportedLimits = map[string]int{
	"MaxOp": MaxOp, "MaxRef": MaxRef, "MaxSegment": MaxSegment, "MaxValue": MaxValue,
	"MaxActor": MaxActor, "MaxAttestation": MaxAttestation, "MaxID": MaxID, "MaxDepth": MaxDepth,
	"MaxLine": MaxLine, "MaxListRows": MaxListRows, "MaxConfig": MaxConfig, "MaxReads": MaxReads, "MaxStream": MaxStream, "MaxStreams": MaxStreams,
	"MaxName": MaxName, "MaxMethod": MaxMethod, "MaxPath": MaxPath, "MaxQuery": MaxQuery, "MaxHeaders": MaxHeaders,
	"MaxBody": MaxBody, "MaxArgs": MaxArgs, "MaxServices": MaxServices, "MaxUses": MaxUses,
	"MaxApprovalID": MaxApprovalID, "MaxGrantID": MaxGrantID, "MaxDecision": MaxDecision, "MaxScope": MaxScope, "MaxPending": MaxPending,
	"MaxVersion": MaxVersion, "MaxDestroy": MaxDestroy, "MaxVersionsBytes": MaxVersionsBytes, "MaxCursor": MaxCursor,
	"MaxChanges": MaxChanges, "MaxKeptVersions": MaxKeptVersions,
}

// TestLimitsDoc: the limits the package doc lists are exactly the Max
// constants the package declares, each with its value.
func TestLimitsDoc(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	var doc string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "Max") && n.IsExported() {
						declared[n.Name] = true
					}
				}
			}
		}
	}
	if got, want := slices.Sorted(maps.Keys(declared)), slices.Sorted(maps.Keys(exportedLimits)); !slices.Equal(got, want) {
		t.Fatalf("the package declares %q, the test knows %q", got, want)
	}

	_, list, ok := strings.Cut(doc, "Limits (bytes unless noted):\n")
	if !ok {
		t.Fatal("the package doc has no limits list")
	}
	row := regexp.MustCompile(`^\t(Max\w+) +([0-9,]+)( [KM]iB)? +\S`)
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimLeft(list, "\n"), "\n") {
		if !strings.HasPrefix(line, "\t") {
			break
		}
		m := row.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("limits list: cannot read %q", line)
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		if err != nil {
			t.Fatal(err)
		}
		switch m[3] {
		case " KiB":
			n <<= 10
		case " MiB":
			n <<= 20
		}
		v, known := exportedLimits[m[1]]
		switch {
		case !known:
			t.Errorf("the doc lists %s, which the package does not export", m[1])
		case listed[m[1]]:
			t.Errorf("the doc lists %s twice", m[1])
		case v != n:
			t.Errorf("the doc gives %s as %d, the constant is %d", m[1], n, v)
		}
		listed[m[1]] = true
	}
	for name := range exportedLimits {
		if !listed[name] {
			t.Errorf("%s is exported but not in the package doc's limits", name)
		}
	}
}

// TestLimitsPublished: the manifest's limits are the exported constants
// under their wire names; MaxConfig alone stays off the wire (a config file
// is no client's business).
func TestLimitsPublished(t *testing.T) {
	want := map[string]int{
		"line_bytes": MaxLine, "op_bytes": MaxOp, "id_bytes": MaxID, "depth_levels": MaxDepth, "ref_bytes": MaxRef,
		"env_bytes": MaxSegment, "segment_chars": MaxSegment, "value_bytes": MaxValue,
		"actor_bytes": MaxActor, "attestation_bytes": MaxAttestation, "list_rows": MaxListRows,
		"reads_in_flight": MaxReads,
		"stream_bytes":    MaxStream,
		"name_bytes":      MaxName, "method_bytes": MaxMethod, "path_bytes": MaxPath, "query_bytes": MaxQuery,
		"headers_bytes": MaxHeaders, "body_bytes": MaxBody, "args_bytes": MaxArgs, "services_bytes": MaxServices,
		"uses_in_flight": MaxUses,
		"approval_bytes": MaxApprovalID, "grant_bytes": MaxGrantID, "decision_bytes": MaxDecision, "scope_bytes": MaxScope,
		"approvals_pending": MaxPending,
		"versions_bytes":    MaxVersionsBytes, "cursor_bytes": MaxCursor, "version_max": MaxVersion,
		"destroy_versions": MaxDestroy, "kept_versions": MaxKeptVersions, "changes_rows": MaxChanges,
	}
	got := Limits()
	if !maps.Equal(got, want) {
		t.Errorf("Limits() = %v, want %v", got, want)
	}
	values := map[int]bool{}
	for name, v := range exportedLimits {
		if name != "MaxConfig" {
			values[v] = true
		}
	}
	for name, v := range got {
		if !values[v] {
			t.Errorf("limit %s = %d is no exported constant", name, v)
		}
	}
	for name, v := range exportedLimits {
		if name != "MaxConfig" && !slices.Contains(slices.Collect(maps.Values(got)), v) {
			t.Errorf("%s = %d is not published in Limits()", name, v)
		}
	}
}
