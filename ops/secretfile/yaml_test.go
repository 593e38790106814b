package secretfile

import (
	"strings"
	"testing"
)

func TestYAMLGood(t *testing.T) {
	tests := []struct {
		name, in string
		shape    Shape
		want     []kv
	}{
		{"empty", "", Flat, nil},
		{"comments only", "# nothing\n", Flat, nil},
		{"empty mapping", "{}\n", Flat, nil},
		{"flat in input order", "b: two\na: 1\n", Flat, []kv{{"", "b", "two", `key "b"`}, {"", "a", "1", `key "a"`}}},
		{"scalars as written", "port: 5432\nf: 1.50\nhex: 0x1F\noct: 0o17\nt: true\ny: yes\ninf: .inf\nd: 2024-01-02\ns: !!str 007\n", Flat, []kv{
			{"", "port", "5432", `key "port"`}, {"", "f", "1.50", `key "f"`}, {"", "hex", "0x1F", `key "hex"`}, {"", "oct", "0o17", `key "oct"`},
			{"", "t", "true", `key "t"`}, {"", "y", "yes", `key "y"`}, {"", "inf", ".inf", `key "inf"`}, {"", "d", "2024-01-02", `key "d"`}, {"", "s", "007", `key "s"`}}},
		{"quoted", "a: 'it''s'\nb: \"x\\ty\\u00e9\"\nc: '#not a comment'\n", Flat, []kv{{"", "a", "it's", `key "a"`}, {"", "b", "x\tyé", `key "b"`}, {"", "c", "#not a comment", `key "c"`}}},
		{"block scalars", "lit: |\n  one\n  two\nstrip: |-\n  one\n  two\nfold: >\n  one\n  two\nkeep: |+\n  x\n\nlast: y\n", Flat, []kv{
			{"", "lit", "one\ntwo\n", `key "lit"`}, {"", "strip", "one\ntwo", `key "strip"`}, {"", "fold", "one two\n", `key "fold"`}, {"", "keep", "x\n\n", `key "keep"`}, {"", "last", "y", `key "last"`}}},
		{"no expansion", "a: $HOME ${X}\n", Flat, []kv{{"", "a", "$HOME ${X}", `key "a"`}}},
		{"numeric keys", "1: a\n2.5: b\n", Flat, []kv{{"", "1", "a", `key "1"`}, {"", "2.5", "b", `key "2.5"`}}},
		{"nested", "app:\n  db: x\n  port: 1\nweb: {}\nother: {k: v}\n", Nested, []kv{{"app", "db", "x", `key "app"."db"`}, {"app", "port", "1", `key "app"."port"`}, {"other", "k", "v", `key "other"."k"`}}},
		{"explicit document", "---\na: 1\n...\n", Flat, []kv{{"", "a", "1", `key "a"`}}},
		{"flow mapping", "{a: 1, b: two}", Flat, []kv{{"", "a", "1", `key "a"`}, {"", "b", "two", `key "b"`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseOK(t, "yaml", tc.in, tc.shape, tc.want...) })
	}
}

func TestYAMLRefused(t *testing.T) {
	c := canary
	tests := []struct{ name, in, msg string }{
		{"syntax", "a: " + c + "\nb: [" + c + "\n", "line 2: not valid YAML: did not find expected ',' or ']'"},
		{"bad indent", "a: " + c + "\n b: " + c + "\n", "line 2: not valid YAML: mapping values are not allowed in this context"},
		{"tab indent", "a:\n\tb: " + c + "\n", "line 2: not valid YAML: found character that cannot start any token"},
		{"top-level sequence", "- " + c + "\n", "line 1: the top level is a sequence (want a mapping)"},
		{"top-level scalar", c + "\n", "line 1: the top level is a scalar (want a mapping)"},
		{"top-level null", "---\n~\n", "line 2: the top level is null (want a mapping)"},
		{"second document", "a: " + c + "\n---\nb: " + c + "\n", "line 2: a second document (want one)"},
		{"bad second document", "a: " + c + "\n---\nb: [\n", "line 4: not valid YAML: did not find expected node content"},
		{"duplicate", "a: 1\nDB: " + c + "\n\nDB: " + c + "\n", `line 4: key "DB" is also set on line 2`},
		{"duplicate by quoting", "DB: " + c + "\n'DB': " + c + "\n", `line 2: key "DB" is also set on line 1`},
		{"duplicate int and string", "1: " + c + "\n\"1\": " + c + "\n", `line 2: key "1" is also set on line 1`},
		{"duplicate nested", "n:\n  a: " + c + "\n  a: " + c + "\n", `line 3: key "n"."a" is also set on line 2`},
		{"duplicate namespace", "n: {a: " + c + "}\nn: {b: " + c + "}\n", `line 2: key "n" is also set on line 1`},
		{"anchor", "a: &x " + c + "\n", `line 1: key "a": an anchor (&x) (want no anchors)`},
		{"alias", "a: " + c + "\nb: *x\n", "not valid YAML: an alias (*) to an anchor that is not defined"},
		{"anchor and alias", "n: &base {a: " + c + "}\nm: *base\n", `line 1: key "n": an anchor (&base) (want no anchors)`},
		{"anchor on the top level", "&-x {a: 1}\n", "line 1: an anchor (&...) (want no anchors)"},
		{"anchor on a key", "&k a: " + c + "\n", `line 1: key "a": an anchor (&k) (want no anchors)`},
		{"merge key", "base: {a: " + c + "}\nn:\n  <<: {b: " + c + "}\n", "line 3: a merge key (<<) (want plain keys)"},
		{"binary", "a: !!binary " + "Q0FOQVJZ\n", `line 1: key "a": a value tagged "!!binary" (want no tag, or !!str)`},
		{"custom tag", "a: !vault " + c + "\n", `line 1: key "a": a value tagged "!vault" (want no tag, or !!str)`},
		{"tagged mapping", "n: !!set {a: " + c + "}\n", `line 1: key "n": a value tagged "!!set" (want no tag, or !!str)`},
		{"null", "a:\n", `line 1: key "a" is null (want a string)`},
		{"tilde", "a: ~\n", `line 1: key "a" is null (want a string)`},
		{"null in a namespace", "n:\n  a: null\n", `line 2: key "n"."a" is null (want a string)`},
		{"sequence", "a:\n  - " + c + "\n", `line 1: key "a" is a sequence (want a string)`},
		{"sequence in a namespace", "n:\n  a: [" + c + "]\n", `line 2: key "n"."a" is a sequence (want a string)`},
		{"too deep", "n:\n  a:\n    b: " + c + "\n", `line 2: key "n"."a" is a mapping (want a string: the nesting is namespace, name, value)`},
		{"mixed", "n:\n  a: " + c + "\nb: " + c + "\n", `line 3: key "b" is a scalar, but the first key holds an object (want every value a string, or every value an object of strings)`},
		{"mixed the other way", "b: " + c + "\nn:\n  a: " + c + "\n", `line 2: key "n" is a mapping, but the first key holds a string (want every value a string, or every value an object of strings)`},
		{"complex key", "? [a, b]\n: " + c + "\n", "line 1: a key that is a sequence (want a plain key)"},
		{"null key", "~: " + c + "\n", `line 1: key "~" is not a valid name: has a character outside [A-Za-z0-9._-]: '~'`},
		{"alias named like a value", "a: *hunter2\n", "not valid YAML: an alias (*) to an anchor that is not defined"},
		{"parser error at the end", "a: [" + c, "line 2: not valid YAML: did not find expected ',' or ']'"}, // the end of the input is taken as a new line
		{"parser error on line 1", "]\n" + c, "line 1: not valid YAML: did not find expected node content"},
		{"parser error on line 2", "a: b\n- " + c, "line 2: not valid YAML: did not find expected key"},
		{"scanner error on line 1", "a: \"\\q" + c + "\"", "line 1: not valid YAML: found unknown escape character"},
		{"parser error later", "a: " + c + "\nb:\n  - x\n  y: " + c + "\n", "line 3: not valid YAML: did not find expected '-' indicator"},
		{"control character", "a: 1\nb: " + c + "\x01\n", "line 2: a control character (YAML allows tab, LF and CR only)"},
		{"C1 control", "a: " + c + "\u0090\n", "line 1: a control character (YAML allows tab, LF and CR only)"},
		{"bad name", "MY KEY: " + c + "\n", `line 1: key "MY KEY" is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`},
		{"bad namespace", "my app:\n  a: " + c + "\n", `line 1: key "my app" is not a valid namespace: has a character outside [A-Za-z0-9._-]: ' '`},
		{"long name", strings.Repeat("k", 200) + ": " + c + "\n", `line 1: key <200 bytes> is not a valid name: is longer than 128 characters`},
		{"invalid UTF-8", "a: 1\nb: " + c + "\xff\n", "line 2: not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseErr(t, "yaml", tc.in, tc.msg, Options{}) })
	}
}
