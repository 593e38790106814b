package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/manifest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A block marked <!-- wire: WHAT --> shows lines of arca serve's wire that
// no session of the docs can run yet (a request through a part of serve a
// doc describes before its examples can be replayed): JSON lines, each a
// request, a response or an audit event, held to the published schemas in
// their closed form (what this build writes, exactly). A response must
// follow a request with the same id, whose op names the result schema it
// is held to; a line that is no JSON object fails.
func TestDocWire(t *testing.T) {
	sc := wireSchemas(t)
	n := 0
	for _, b := range markedBlocks(t, "wire") {
		n++
		for i, l := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
			if err := sc.check(l); err != nil {
				t.Errorf("%s:%d: line %d: %v\n%s", b.doc, b.line, i+1, err, l)
			}
		}
	}
	if n == 0 {
		t.Fatal("no wire block found in the docs")
	}
}

// TestDocWireRefuses: the check of a wire block refuses what serve would
// never write, so a block that passes says something.
func TestDocWireRefuses(t *testing.T) {
	bad := [][]string{
		{`{"id":1,"op":"proxy","services":[]}`},
		{`{"id":1,"op":"exec","action":"a"}`, `{"id":1,"ok":true,"result":{"action":"a","exit_code":0}}`},
		{`{"id":1,"op":"proxy","services":["a"]}`, `{"id":1,"ok":true,"result":{"base_urls":{"a":"http://10.0.0.1:8/a"},"token":"t","expires_at":"2026-01-02T03:04:05.000000006Z"}}`},
		{`{"id":2,"ok":true,"result":{}}`},
		{`{"id":1,"op":"http","service":"a","method":"GET","path":"/"}`, `{"id":1,"ok":false,"error":{"code":"upstream_failed","message":"m","details":{"cause":"nope"}}}`},
		{`{"v":1,"ts":"2026-01-02T03:04:05.000000006Z","seq":2,"event":"http","op":"http","outcome":"ok","via":"tunnel","source":"serve"}`},
		{`not json`},
	}
	for _, lines := range bad {
		sc := wireSchemas(t)
		var err error
		for _, l := range lines {
			if err = sc.check(l); err != nil {
				break
			}
		}
		if err == nil {
			t.Errorf("accepted: %s", strings.Join(lines, "\n"))
		}
	}
}

// wireChecker holds a wire block's lines to the schemas, remembering the
// op of each request by its id.
type wireChecker struct {
	request, response, errorResp, event *jsonschema.Schema
	result                              func(op string) *jsonschema.Schema
	ops                                 map[string]string // request id, as sent → op
}

func wireSchemas(t *testing.T) *wireChecker {
	t.Helper()
	results := map[string]*jsonschema.Schema{}
	for _, op := range manifest.Ops() {
		results[op.Name] = closedSchema(t, "result."+op.Name)
	}
	return &wireChecker{
		request: closedSchema(t, "request"), response: closedSchema(t, "response"),
		errorResp: closedSchema(t, "error"), event: closedSchema(t, "event"),
		result: func(op string) *jsonschema.Schema { return results[op] },
		ops:    map[string]string{},
	}
}

// check holds one line to its schema.
func (w *wireChecker) check(line string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		return err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &fields); err != nil {
		return err
	}
	id := string(fields["id"])
	switch {
	case fields["event"] != nil:
		return w.event.Validate(inst)
	case fields["ok"] == nil:
		var op string
		_ = json.Unmarshal(fields["op"], &op)
		w.ops[id] = op
		return w.request.Validate(inst)
	case string(fields["ok"]) == "false":
		return w.errorResp.Validate(inst)
	}
	op, ok := w.ops[id]
	if !ok {
		return fmt.Errorf("a response with no request of id %s before it", id)
	}
	if err := w.response.Validate(inst); err != nil {
		return err
	}
	res, err := jsonschema.UnmarshalJSON(bytes.NewReader(fields["result"]))
	if err != nil {
		return err
	}
	return w.result(op).Validate(res)
}

// closedSchema compiles the closed form of the published schema name:
// what serve writes, exactly.
func closedSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	b, err := manifest.ClosedSchema(name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noSchemaLoader{})
	if err := c.AddResource(manifest.SchemaPrefix+name, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(manifest.SchemaPrefix + name)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// TestDocShellFiles: a shell script the docs mark as a file (a recipe
// that runs against a proxy, say) is one sh can parse.
func TestDocShellFiles(t *testing.T) {
	n := 0
	for _, b := range markedBlocks(t, "file") {
		if !strings.HasSuffix(b.arg, ".sh") {
			continue
		}
		n++
		out, err := exec.Command("sh", "-n", "-c", b.body).CombinedOutput()
		if err != nil {
			t.Errorf("%s:%d: %s does not parse: %v\n%s", b.doc, b.line, b.arg, err, out)
		}
	}
	if n == 0 {
		t.Fatal("no shell file found in the docs")
	}
	if exec.Command("sh", "-n", "-c", "if then").Run() == nil {
		t.Fatal("sh -n accepts a script that does not parse")
	}
}
