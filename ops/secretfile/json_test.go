package secretfile

import (
	"strings"
	"testing"
)

func TestJSONGood(t *testing.T) {
	tests := []struct {
		name, in string
		shape    Shape
		want     []kv
	}{
		{"empty object", " {} \n", Flat, nil},
		{"flat in input order", `{"b":"2","a":"1"}`, Flat, []kv{{"", "b", "2", `key "b"`}, {"", "a", "1", `key "a"`}}},
		{"numbers and booleans as written", `{"port":5432,"f":-1.50e+3,"z":0,"t":true,"n":false}`, Flat,
			[]kv{{"", "port", "5432", `key "port"`}, {"", "f", "-1.50e+3", `key "f"`}, {"", "z", "0", `key "z"`}, {"", "t", "true", `key "t"`}, {"", "n", "false", `key "n"`}}},
		{"escapes", `{"a":"line\nnext \"q\" \\ \u00e9 \ud83d\ude00 \ufffd \/"}`, Flat, []kv{{"", "a", "line\nnext \"q\" \\ é 😀 \ufffd /", `key "a"`}}},
		{"empty string", `{"a":""}`, Flat, []kv{{"", "a", "", `key "a"`}}},
		{"nested", "{\n \"app\": {\"db\": \"x\", \"port\": 1},\n \"web\": {}\n}", Nested, []kv{{"app", "db", "x", `key "app"."db"`}, {"app", "port", "1", `key "app"."port"`}}},
		{"same name in two namespaces", `{"a":{"k":"1"},"b":{"k":"2"}}`, Nested, []kv{{"a", "k", "1", `key "a"."k"`}, {"b", "k", "2", `key "b"."k"`}}},
		{"escaped key", `{"\u0041":"1"}`, Flat, []kv{{"", "A", "1", `key "A"`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseOK(t, "json", tc.in, tc.shape, tc.want...) })
	}
}

func TestJSONRefused(t *testing.T) {
	c := `"` + canary + `"`
	tests := []struct{ name, in, msg string }{
		{"empty", " \n", "empty input (want a JSON object)"},
		{"top-level array", "\n[" + c + "]", "line 2: the top level is an array (want an object)"},
		{"top-level string", c, "line 1: the top level is a string (want an object)"},
		{"syntax", "{\"a\":" + c + ",\n\"b\" " + c + "}", `line 2: not valid JSON: invalid character '"' after object key`},
		{"unquoted value", `{"a":` + canary + `}`, `line 1: not valid JSON: invalid character 'C' looking for beginning of value`},
		{"truncated", `{"a":` + c, "line 1: not valid JSON: the input ends inside a value"},
		{"truncated string", `{"a":"` + canary, "line 1: not valid JSON: the input ends inside a value"},
		{"trailing data", `{"a":` + c + "}\n" + c, "line 2: data after the top-level object"},
		{"second object", `{"a":` + c + "} {}", "line 1: data after the top-level object"},
		{"duplicate", "{\"a\":\"1\",\n\"DB\":" + c + ",\n\"DB\":" + c + "}", `line 3: key "DB" is also set on line 2`},
		{"duplicate by escape", "{\"DB\":" + c + ",\n\"\\u0044B\":" + c + "}", `line 2: key "DB" is also set on line 1`},
		{"duplicate nested", "{\"n\":{\"a\":" + c + ",\n\"a\":" + c + "}}", `line 2: key "n"."a" is also set on line 1`},
		{"duplicate namespace", "{\"n\":{\"a\":" + c + "},\n\"n\":{\"b\":" + c + "}}", `line 2: key "n" is also set on line 1`},
		{"null", "{\"a\":\n null}", `line 1: key "a" is null (want a string)`},
		{"array", `{"a":[` + c + `]}`, `line 1: key "a" is an array (want a string)`},
		{"object then string", "{\"n\":{\"a\":" + c + "},\n\"b\":" + c + "}", `line 2: key "b" is a string, but the first key holds an object (want every value a string, or every value an object of strings)`},
		{"string then object", "{\"a\":" + c + ",\n\"n\":{}}", `line 2: key "n" is an object, but the first key holds a string (want every value a string, or every value an object of strings)`},
		{"number then object", `{"a":5,"n":{"b":` + c + `}}`, `line 1: key "n" is an object, but the first key holds a string (want every value a string, or every value an object of strings)`},
		{"too deep", `{"n":{"a":{"b":` + c + `}}}`, `line 1: key "n"."a" is an object (want a string: the nesting is namespace, name, value)`},
		{"array in a namespace", `{"n":{"a":[]}}`, `line 1: key "n"."a" is an array (want a string)`},
		{"null in a namespace", `{"n":{"a":null}}`, `line 1: key "n"."a" is null (want a string)`},
		{"bad name", `{"MY KEY":` + c + `}`, `line 1: key "MY KEY" is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`},
		{"bad nested name", `{"n":{"-x":` + c + `}}`, `line 1: key "n"."-x" is not a valid name: must start with a letter or digit`},
		{"bad namespace", `{"a/b":{"x":` + c + `}}`, `line 1: key "a/b" is not a valid namespace: has a character outside [A-Za-z0-9._-]: '/'`},
		{"empty namespace", `{"":{}}`, `line 1: key "" is not a valid namespace: is empty`},
		{"non-ASCII name", `{"é":` + c + `}`, `line 1: key "\u00e9" is not a valid name: has a non-ASCII character`},
		{"long name", `{"` + strings.Repeat("k", 200) + `":` + c + `}`, `line 1: key <200 bytes> is not a valid name: is longer than 128 characters`},
		{"lone high surrogate", `{"a":"` + canary + `\ud800x"}`, `line 1: key "a": the value is not valid UTF-8 (a lone surrogate escape)`},
		{"reversed pair", `{"a":"\ude00\ud83d"}`, `line 1: key "a": the value is not valid UTF-8 (a lone surrogate escape)`},
		{"high then BMP", `{"a":"\ud83d\u0041"}`, `line 1: key "a": the value is not valid UTF-8 (a lone surrogate escape)`},
		{"high at the end", `{"a":"\ud83d"}`, `line 1: key "a": the value is not valid UTF-8 (a lone surrogate escape)`},
		{"non-ASCII outside a string", "{\"a\": é}", "line 1: not valid JSON: a non-ASCII character looking for beginning of value"},
		{"raw invalid UTF-8", "{\"a\":\"1\",\n\"b\":\"" + canary + "\xc3\x28\"}", "line 2: not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseErr(t, "json", tc.in, tc.msg, Options{}) })
	}
}

// What is skipped is still held to a depth (vault-kv skips the keys it does
// not read).
func TestJSONSkipDepth(t *testing.T) {
	in := `{"lease_id":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `,"data":{}}`
	parseErr(t, "vault-kv", in, "line 1: nested deeper than 64 levels", Options{})
	in = `{"lease_id":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `,"data":{"a":"1"}}`
	parseOK(t, "vault-kv", in, Flat, kv{"", "a", "1", `key "a"`})
}

func TestStrictLiteral(t *testing.T) {
	for lit, lone := range map[string]bool{
		`"\ud83d\ude00"`: false, `"\\ud800"`: false, `"\\\ud800"`: true, `"a\u0041\ud800"`: true,
		`"\udbff\udfff"`: false, `"\ud800\ue000"`: true, `"\ud800\\u0041"`: true, `"\uD800\uDC00"`: false,
	} {
		if got := strict([]byte(lit)); got == lone {
			t.Errorf("strict(%s) = %v", lit, got)
		}
	}
}
