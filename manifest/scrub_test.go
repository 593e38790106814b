package manifest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/internal/scrub"
)

// TestScrubFormsAreTheEngines: each form the scrub capability names is one
// the engine redacts: a value written in that form inside other text
// leaves no trace of the form. A name with no encoder here fails, so the
// list cannot name a form nobody checked.
func TestScrubFormsAreTheEngines(t *testing.T) {
	const value = "s3cr\"et/v al'ue-0123\nsecond-line-here"
	enc := map[string]string{
		"raw":                value,
		"lines":              "second-line-here",
		"json":               strings.ReplaceAll(strings.ReplaceAll(value, `"`, `\"`), "\n", `\n`),
		"url_query":          url.QueryEscape(value),
		"url_path":           url.PathEscape(value),
		"hex_lower":          hex.EncodeToString([]byte(value)),
		"hex_upper":          strings.ToUpper(hex.EncodeToString([]byte(value))),
		"base64_std":         base64.StdEncoding.EncodeToString([]byte("x" + value)),
		"base64_url":         base64.URLEncoding.EncodeToString([]byte("xy" + value)),
		"shell_single_quote": strings.ReplaceAll(value, "'", `'\''`),
		"html":               html.EscapeString(value),
	}
	set := scrub.NewSet()
	if err := set.Add("app/v", []byte(value)); err != nil {
		t.Fatal(err)
	}
	forms := ScrubForms()
	if len(slices.Compact(slices.Sorted(slices.Values(forms)))) != len(forms) {
		t.Errorf("ScrubForms names a form twice: %q", forms)
	}
	for _, name := range forms {
		form, ok := enc[name]
		if !ok {
			t.Errorf("form %q: no encoder in this test", name)
			continue
		}
		out, reds := set.Scrub([]byte("before " + form + " after"))
		if len(reds) == 0 || !bytes.Contains(out, []byte("<redacted:app/v>")) {
			t.Errorf("form %q: %q is not redacted: %q", name, form, out)
		}
	}
	if got := Capabilities(Runtime{})["scrub"]["min_bytes"]; got != scrub.MinLen {
		t.Errorf("min_bytes is %v, want the engine's %d", got, scrub.MinLen)
	}
}
