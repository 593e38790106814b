package inject

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops"
)

// EnvFormats returns the formats FormatEnv writes, the first the default.
func EnvFormats() []string { return []string{"sh", "dotenv", "json"} }

// FormatEnv writes vars to w as assignments in format, in the order given,
// all in one Write (nothing is written when a name is invalid):
//
//   - sh: one `export NAME='value'` per line. Inside single quotes POSIX sh
//     takes every byte literally, newlines included, so the only byte to
//     escape is the single quote itself, written as four bytes: a quote
//     that closes the quoted text, a backslash and a quote for the quote
//     itself, and a quote that reopens (see the example below). The output
//     is meant for `eval "$(arca env)"`: export makes the variables reach
//     the commands that shell runs, as arca run would.
//   - dotenv: one `NAME="value"` per line, inside the double quotes \ written
//     \\, " written \", newline \n and carriage return \r; every other byte
//     (tab, $, ', `, unicode) as is. python-dotenv decodes exactly these
//     escapes; docs/cli.md says what it and other readers do with $ and
//     with a trailing backslash.
//   - json: one object {"NAME":"value",…} on one line, keys in the order
//     given, encoded by encoding/json without HTML escaping.
//
// The value it's "a\b" of NAME, in each format (a test holds this block
// to FormatEnv's output):
//
//	export NAME='it'\''s "a\b"'
//	NAME="it's \"a\\b\""
//	{"NAME":"it's \"a\\b\""}
//
// An unknown format, a name that is not a valid variable name, or a File
// secret (whose file would be gone before the assignments are read) is
// bad_request. Values are taken through Reveal, once, here.
func FormatEnv(w io.Writer, format string, vars []Materialized) error {
	for _, v := range vars {
		if err := validateVarName(v.Name); err != nil {
			return err
		}
		if v.File {
			return ops.Errorf(manifest.BadRequest, "secret %s: a file is handed over by arca run --file, never printed", v.Name)
		}
	}
	var b bytes.Buffer
	switch format {
	case "sh":
		for _, v := range vars {
			b.WriteString("export " + v.Name + "='")
			b.Write(bytes.ReplaceAll(v.Value.Reveal(), []byte("'"), []byte(`'\''`)))
			b.WriteString("'\n")
		}
	case "dotenv":
		for _, v := range vars {
			b.WriteString(v.Name + `="`)
			for _, c := range v.Value.Reveal() {
				switch c {
				case '\\':
					b.WriteString(`\\`)
				case '"':
					b.WriteString(`\"`)
				case '\n':
					b.WriteString(`\n`)
				case '\r':
					b.WriteString(`\r`)
				default:
					b.WriteByte(c)
				}
			}
			b.WriteString("\"\n")
		}
	case "json":
		b.WriteByte('{')
		for i, v := range vars {
			if i > 0 {
				b.WriteByte(',')
			}
			appendJSONString(&b, v.Name)
			b.WriteByte(':')
			appendJSONString(&b, string(v.Value.Reveal()))
		}
		b.WriteString("}\n")
	default:
		return ops.Errorf(manifest.BadRequest, "unknown format %q (one of: %s)", format, strings.Join(EnvFormats(), ", "))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// appendJSONString appends s as a JSON string, <, > and & left as they are.
func appendJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
