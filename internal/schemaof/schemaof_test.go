package schemaof

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

type Inner struct {
	N int `json:"n"`
}

type Base struct {
	ID string `json:"id"`
}

type sample struct {
	Base
	Name    string            `json:"name"`
	Opt     string            `json:"opt,omitempty"`
	Hidden  string            `json:"-"`
	private string            // left out, as encoding/json leaves it out
	At      time.Time         `json:"at"`
	List    []Inner           `json:"list"`
	Labels  map[string]string `json:"labels,omitempty"`
	Ptr     *Inner            `json:"ptr"`
	OK      bool              `json:"ok"`
	Ratio   float64           `json:"ratio"`
	Any     any               `json:"any"`
}

type custom struct{}

func (custom) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("no schema at %s", url) }

func compile(t *testing.T, b []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("urn:t", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:t")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(s *jsonschema.Schema, text string) error {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// What encoding/json writes of a value validates, zero or full; a field
// missing, a field added, a wrong type or a null where none can be does not.
func TestOfMatchesEncodingJSON(t *testing.T) {
	b, err := Of("sample", sample{})
	if err != nil {
		t.Fatal(err)
	}
	s := compile(t, b)
	for _, v := range []sample{{}, {Base: Base{"i"}, Name: "n", Opt: "o", At: time.Now(), List: []Inner{{1}}, Labels: map[string]string{"a": "b"}, Ptr: &Inner{2}, OK: true, Ratio: 0.5, Any: []int{1}}} {
		out, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(s, string(out)); err != nil {
			t.Errorf("%s: %v", out, err)
		}
	}
	good := `{"id":"i","name":"n","at":"2026-01-01T00:00:00Z","list":[],"ptr":null,"ok":false,"ratio":1,"any":null}`
	if err := validate(s, good); err != nil {
		t.Fatalf("%s: %v", good, err)
	}
	for _, bad := range []string{
		strings.Replace(good, `"name":"n",`, ``, 1),                // a required field missing
		strings.Replace(good, `"name":"n"`, `"name":1`, 1),         // a wrong type
		strings.Replace(good, `"ok":false`, `"ok":null`, 1),        // null where none can be
		strings.Replace(good, `"ok":false`, `"ok":false,"x":1`, 1), // a field the type has not
		strings.Replace(good, `"list":[]`, `"list":[{"n":"1"}]`, 1),
		strings.Replace(good, `"id":"i",`, `"Base":{"id":"i"},`, 1), // embedded fields are inlined
	} {
		if validate(s, bad) == nil {
			t.Errorf("%s validates", bad)
		}
	}
	if !strings.Contains(string(b), `"title": "sample"`) || strings.Contains(string(b), "Hidden") || strings.Contains(string(b), "private") {
		t.Fatalf("schema: %s", b)
	}
}

// A type that writes its own JSON is refused, naming it.
func TestOfRefusesMarshaler(t *testing.T) {
	type outer struct {
		C custom `json:"c"`
	}
	if _, err := Of("x", outer{}); err == nil || !strings.Contains(err.Error(), "writes its own JSON") {
		t.Fatalf("err %v", err)
	}
	if _, err := Of("x", map[int]string{}); err == nil {
		t.Fatal("a map of int keys was taken")
	}
}
