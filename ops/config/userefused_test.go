package config

import (
	"strings"
	"testing"
)

// TestUseRefused: every service or action key out of bounds is refused at
// load, the message naming the file and the key, never the value.
func TestUseRefused(t *testing.T) {
	type kv = map[string]string
	const file, svc, act = "arca.toml: ", "arca.toml: services.svc.", "arca.toml: actions.act."
	tests := []struct {
		name            string
		service, action kv
		raw             string // instead of useDoc
		want            string
	}{
		// Names.
		{name: "service name", raw: "[services.\"-x\"]\n", want: file + `services."-x": invalid service name: must start with a letter or digit`},
		{name: "service name too long", raw: "[services." + strings.Repeat("s", 65) + "]\n", want: "invalid service name: is longer than 64 bytes"},
		{name: "action name", raw: "[actions.\"a b\"]\n", want: file + `actions."a b": invalid action name: has a character outside`},
		// base_url.
		{name: "base_url missing", service: kv{"base_url": ""}, want: svc + "base_url is required"},
		{name: "base_url relative", service: kv{"base_url": `"/api"`}, want: svc + "base_url must be an absolute URL"},
		{name: "base_url no scheme", service: kv{"base_url": `"api.example.com"`}, want: svc + "base_url must be an absolute URL"},
		{name: "base_url opaque", service: kv{"base_url": `"mailto:a@b"`}, want: svc + "base_url must be an absolute URL"},
		{name: "base_url http", service: kv{"base_url": `"http://api.example.com"`}, want: svc + "base_url must be https: http only to a loopback host"},
		{name: "base_url http private", service: kv{"base_url": `"http://10.0.0.1"`}, want: svc + "base_url must be https"},
		{name: "base_url http zone", service: kv{"base_url": `"http://[::1%25lo]/"`}, want: svc + "base_url must be https"},
		{name: "base_url ftp", service: kv{"base_url": `"ftp://api.example.com"`}, want: svc + "base_url must be an https URL"},
		{name: "base_url user", service: kv{"base_url": `"https://me:hunter2@api.example.com"`}, want: svc + "base_url must hold no user or password"},
		{name: "base_url query", service: kv{"base_url": `"https://api.example.com/?token=hunter2"`}, want: svc + "base_url must have no query or fragment"},
		{name: "base_url empty query", service: kv{"base_url": `"https://api.example.com?"`}, want: svc + "base_url must have no query or fragment"},
		{name: "base_url fragment", service: kv{"base_url": `"https://api.example.com/#x"`}, want: svc + "base_url must have no query or fragment"},
		{name: "base_url port", service: kv{"base_url": `"https://api.example.com:0"`}, want: svc + "base_url has a port outside 1..65535"},
		{name: "base_url empty port", service: kv{"base_url": `"https://api.example.com:/"`}, want: svc + "base_url has a port outside 1..65535"},
		{name: "base_url no host", service: kv{"base_url": `"https://:443/"`}, want: svc + "base_url must name a host"},
		{name: "base_url dotdot", service: kv{"base_url": `"https://api.example.com/a/../b"`}, want: svc + "base_url path must be a clean prefix"},
		{name: "base_url double slash", service: kv{"base_url": `"https://api.example.com//a"`}, want: svc + "base_url path must be a clean prefix"},
		{name: "base_url escaped", service: kv{"base_url": `"https://api.example.com/a%2Fb"`}, want: svc + "base_url path must be written as it is sent"},
		{name: "base_url space", service: kv{"base_url": `"https://api.example.com/a b"`}, want: svc + "base_url path must be written as it is sent"},
		// credential and auth.
		{name: "credential missing", service: kv{"credential": ""}, want: svc + "credential is required"},
		{name: "credential not a ref", service: kv{"credential": `"ghp_hunter2"`}, want: svc + `credential: invalid ref: must start with "arca://"`},
		{name: "auth missing", service: kv{"auth": ""}, want: svc + "auth is required: bearer, basic, header or query"},
		{name: "auth unknown", service: kv{"auth": `"digest"`}, want: svc + "auth must be bearer, basic, header or query"},
		{name: "username_ref without basic", service: kv{"username_ref": `"arca://a/u"`}, want: svc + "username_ref is only for auth basic"},
		{name: "basic without username_ref", service: kv{"auth": `"basic"`}, want: svc + "username_ref is required for auth basic"},
		{name: "username_ref not a ref", service: kv{"auth": `"basic"`, "username_ref": `"me"`}, want: svc + "username_ref: invalid ref"},
		{name: "header without auth header", service: kv{"header": `"X-Api-Key"`}, want: svc + "header is only for auth header"},
		{name: "auth header without header", service: kv{"auth": `"header"`}, want: svc + "header is required for auth header"},
		{name: "header not a token", service: kv{"auth": `"header"`, "header": `"X Api"`}, want: svc + "header must be an HTTP header name"},
		{name: "header too long", service: kv{"auth": `"header"`, "header": `"` + strings.Repeat("h", 129) + `"`}, want: svc + "header must be an HTTP header name"},
		{name: "header authorization", service: kv{"auth": `"header"`, "header": `"authorization"`}, want: svc + "header must not be one that carries credentials"},
		{name: "header cookie", service: kv{"auth": `"header"`, "header": `"Cookie"`}, want: svc + "header must not be"},
		{name: "header host", service: kv{"auth": `"header"`, "header": `"Host"`}, want: svc + "header must not be"},
		{name: "header proxy", service: kv{"auth": `"header"`, "header": `"Proxy-Authorization"`}, want: svc + "header must not be"},
		{name: "header hop-by-hop", service: kv{"auth": `"header"`, "header": `"Transfer-Encoding"`}, want: svc + "header must not be"},
		{name: "header te", service: kv{"auth": `"header"`, "header": `"TE"`}, want: svc + "header must not be"},
		{name: "header content-type", service: kv{"auth": `"header"`, "header": `"Content-Type"`}, want: svc + "header must not be"},
		{name: "query_param without auth query", service: kv{"query_param": `"key"`}, want: svc + "query_param is only for auth query"},
		{name: "auth query without query_param", service: kv{"auth": `"query"`}, want: svc + "query_param is required for auth query"},
		{name: "query_param reserved", service: kv{"auth": `"query"`, "query_param": `"a&b"`}, want: svc + "query_param must be 1 to 128"},
		{name: "query_param too long", service: kv{"auth": `"query"`, "query_param": `"` + strings.Repeat("q", 129) + `"`}, want: svc + "query_param must be 1 to 128"},
		// methods.
		{name: "methods empty", service: kv{"methods": `[]`}, want: svc + "methods is empty"},
		{name: "method lower case", service: kv{"methods": `["GET", "post"]`}, want: svc + "methods[1] is not one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"},
		{name: "method unknown", service: kv{"methods": `["TRACE"]`}, want: svc + "methods[0] is not one of"},
		{name: "method twice", service: kv{"methods": `["GET", "POST", "GET"]`}, want: svc + "methods lists GET twice"},
		// paths.
		{name: "paths missing", service: kv{"paths": ""}, want: svc + `paths is required: list the paths the service may reach ("/*" reaches all)`},
		{name: "paths empty", service: kv{"paths": `[]`}, want: svc + "paths is required"},
		{name: "paths too many", service: kv{"paths": `[` + strings.Repeat(`"/a",`, 65) + `]`}, want: svc + "paths lists more than 64 globs"},
		{name: "path relative", service: kv{"paths": `["/a", "repos/*"]`}, want: svc + `paths[1] must start with "/"`},
		{name: "path empty", service: kv{"paths": `[""]`}, want: svc + `paths[0] must start with "/"`},
		{name: "path dotdot", service: kv{"paths": `["/repos/../admin"]`}, want: svc + `paths[0] holds ".."`},
		{name: "path double slash", service: kv{"paths": `["//evil.example/*"]`}, want: svc + `paths[0] holds "//"`},
		{name: "path percent", service: kv{"paths": `["/a%2Fb"]`}, want: svc + `paths[0] holds "%": globs match the decoded path`},
		{name: "path fragment", service: kv{"paths": `["/a#b"]`}, want: svc + `paths[0] holds "#"`},
		{name: "path control", service: kv{"paths": `["/a\tb"]`}, want: svc + "paths[0] holds a control character"},
		{name: "path too long", service: kv{"paths": `["/` + strings.Repeat("p", 1024) + `"]`}, want: svc + "paths[0] is longer than 1024 bytes"},
		{name: "path bad glob", service: kv{"paths": `["/repos/[a"]`}, want: svc + "paths[0] is not a valid glob"},
		// Bounds.
		{name: "timeout zero", service: kv{"timeout_ms": "0"}, want: svc + "timeout_ms must be 1..120000 (omitted: 30000)"},
		{name: "timeout over", service: kv{"timeout_ms": "120001"}, want: svc + "timeout_ms must be 1..120000"},
		{name: "response zero", service: kv{"max_response_bytes": "0"}, want: svc + "max_response_bytes must be 1..8388608 (omitted: 1048576)"},
		{name: "response over", service: kv{"max_response_bytes": "8388609"}, want: svc + "max_response_bytes must be 1..8388608"},
		{name: "follow_redirects", service: kv{"follow_redirects": `"all"`}, want: svc + "follow_redirects must be none or same-origin"},
		// Actions.
		{name: "argv missing", action: kv{"argv": ""}, want: act + "argv is required"},
		{name: "argv empty", action: kv{"argv": `[]`}, want: act + "argv is required"},
		{name: "argv too long", action: kv{"argv": `[` + strings.Repeat(`"a",`, 65) + `]`}, want: act + "argv has more than 64 entries"},
		{name: "argv[0] empty", action: kv{"argv": `["", "x"]`}, want: act + "argv[0] is empty"},
		{name: "argv NUL", action: kv{"argv": `["x", "a\u0000b"]`}, want: act + "argv[1] holds a NUL byte"},
		{name: "argv entry too long", action: kv{"argv": `["x", "` + strings.Repeat("a", 4097) + `"]`}, want: act + "argv[1] is longer than 4096 bytes"},
		{name: "args invalid", action: kv{"args": `"(--x"`}, want: act + "args is not a valid regexp: missing closing )"},
		{name: "args too long", action: kv{"args": `"` + strings.Repeat("a", 1025) + `"`}, want: act + "args is longer than 1024 bytes"},
		{name: "max_args without args", action: kv{"max_args": "2"}, want: act + "max_args is set without args"},
		{name: "max_args zero", action: kv{"args": `"x"`, "max_args": "0"}, want: act + "max_args must be 1..64 (omitted: 4)"},
		{name: "max_args over", action: kv{"args": `"x"`, "max_args": "65"}, want: act + "max_args must be 1..64"},
		{name: "action timeout zero", action: kv{"timeout_ms": "0"}, want: act + "timeout_ms must be 1..600000 (omitted: 30000)"},
		{name: "action timeout over", action: kv{"timeout_ms": "600001"}, want: act + "timeout_ms must be 1..600000"},
		{name: "output zero", action: kv{"max_output_bytes": "0"}, want: act + "max_output_bytes must be 1..8388608 (omitted: 262144)"},
		{name: "output over", action: kv{"max_output_bytes": "8388609"}, want: act + "max_output_bytes must be 1..8388608"},
		{name: "env name", action: kv{"env": `{ "1X" = "arca://a/b" }`}, want: act + `env."1X" is not an environment variable name`},
		{name: "env name dash", action: kv{"env": `{ "A-B" = "arca://a/b" }`}, want: act + `env."A-B" is not an environment variable name`},
		{name: "env ARCA_", action: kv{"env": `{ ARCA_CONFIG = "arca://a/b" }`}, want: act + `env."ARCA_CONFIG" is arca's own`},
		{name: "env LD_", action: kv{"env": `{ LD_PRELOAD = "arca://a/b" }`}, want: act + `env."LD_PRELOAD" is read by the dynamic loader`},
		{name: "env DYLD_", action: kv{"env": `{ DYLD_INSERT_LIBRARIES = "arca://a/b" }`}, want: act + `env."DYLD_INSERT_LIBRARIES" is read by the dynamic loader`},
		{name: "env PATH", action: kv{"env": `{ PATH = "arca://a/b" }`}, want: act + `env."PATH" is read by every program that runs another by name`},
		{name: "env BASH_ENV", action: kv{"env": `{ BASH_ENV = "arca://a/b" }`}, want: act + `env."BASH_ENV" is read by the shell`},
		{name: "env NODE_OPTIONS", action: kv{"env": `{ NODE_OPTIONS = "arca://a/b" }`}, want: act + `env."NODE_OPTIONS" is read by a language runtime`},
		{name: "env value not a ref", action: kv{"env": `{ TOKEN = "hunter2" }`}, want: act + `env.TOKEN: invalid ref: must start with "arca://"`},
		{name: "env too many", action: kv{"env": envTable(65)}, want: act + "env sets more than 64 variables"},
		// Unknown keys: the line, as everywhere.
		{name: "unknown service key", raw: "[services.svc]\nbase_url = \"https://x.example\"\nheaders = {}\n",
			want: `arca.toml:3: unknown key "services.svc.headers"`},
		{name: "unknown action key", raw: "[actions.act]\nargv = [\"x\"]\n\nstdin = \"x\"\n",
			want: `arca.toml:4: unknown key "actions.act.stdin"`},
		{name: "env value wrong type", raw: "[actions.act]\nargv = [\"x\"]\nenv = { A = 1 }\n",
			want: `arca.toml:3: key "actions.act.env": wrong type (got a TOML integer)`},
		{name: "timeout wrong type", raw: "[services.svc]\ntimeout_ms = \"30s\"\n",
			want: `arca.toml:2: key "services.svc.timeout_ms": wrong type (got a TOML string)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.raw
			if doc == "" {
				doc = useDoc(tc.service, tc.action)
			}
			_, err := Parse([]byte(doc), "arca.toml", envOf(map[string]string{"HOME": "/h"}))
			wantErr(t, err, tc.want)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("message %q holds the value", err)
			}
		})
	}
}

// envTable is an inline table of n variables, each set to a ref.
func envTable(n int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("V" + strings.Repeat("X", i) + ` = "arca://a/b"`)
	}
	return b.String() + " }"
}

// TestUseAccepted: the edges of what TestUseRefused refuses load.
func TestUseAccepted(t *testing.T) {
	type kv = map[string]string
	for _, tc := range []struct {
		name            string
		service, action kv
	}{
		{"http to localhost", kv{"base_url": `"http://localhost:8080"`}, nil},
		{"http to 127.0.0.0/8", kv{"base_url": `"http://127.1.2.3/api/"`}, nil},
		{"http to ::1", kv{"base_url": `"http://[::1]:9/x"`}, nil},
		{"header auth", kv{"auth": `"header"`, "header": `"X-Api-Key"`}, nil},
		{"query auth", kv{"auth": `"query"`, "query_param": `"api_key.v-1~"`}, nil},
		{"every method", kv{"methods": `["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]`}, nil},
		{"glob characters", kv{"paths": `["/repos/?/[a-z]*", "/a b", "/user"]`}, nil},
		{"64 paths", kv{"paths": `[` + strings.Repeat(`"/a",`, 64) + `]`}, nil},
		{"same-origin", kv{"follow_redirects": `"same-origin"`, "allow_private": "true"}, nil},
		{"bounds at their caps", kv{"timeout_ms": "120000", "max_response_bytes": "8388608"}, nil},
		{"action bounds at their caps", nil, kv{"args": `"x"`, "max_args": "64", "timeout_ms": "600000", "max_output_bytes": "8388608"}},
		{"64 variables", nil, kv{"env": envTable(64)}},
		{"ordinary variables", nil, kv{"env": `{ NODE_ENV = "arca://a/b", _X1 = "arca://dev/a/b", PYTHON = "arca://a/c" }`}},
	} {
		if _, err := Parse([]byte(useDoc(tc.service, tc.action)), "arca.toml", envOf(nil)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
