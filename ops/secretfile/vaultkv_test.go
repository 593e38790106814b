package secretfile

import "testing"

// kvV2 is what `vault kv get -format=json secret/app` prints on KV v2.
const kvV2 = `{
  "request_id": "2b9a1f6e-0c1d-4e8f-9a3b-5c6d7e8f9a0b",
  "lease_id": "",
  "lease_duration": 0,
  "renewable": false,
  "data": {
    "data": {
      "DB_PASSWORD": "hunter2",
      "port": 5432,
      "tls": true
    },
    "metadata": {
      "created_time": "2024-05-01T10:00:00.000000Z",
      "custom_metadata": {"owner": "ops", "data": "x"},
      "deletion_time": "",
      "destroyed": false,
      "version": 3
    }
  },
  "warnings": null
}
`

// kvV1 is the same on KV v1.
const kvV1 = `{
  "request_id": "8c1d2e3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f",
  "lease_id": "",
  "lease_duration": 2764800,
  "renewable": false,
  "data": {
    "DB_PASSWORD": "hunter2",
    "port": 5432
  },
  "warnings": ["a warning", {"x": [1, 2]}]
}
`

func TestVaultKVGood(t *testing.T) {
	tests := []struct {
		name, in string
		want     []kv
	}{
		{"v2", kvV2, []kv{{"", "DB_PASSWORD", "hunter2", `key "DB_PASSWORD"`}, {"", "port", "5432", `key "port"`}, {"", "tls", "true", `key "tls"`}}},
		{"v1", kvV1, []kv{{"", "DB_PASSWORD", "hunter2", `key "DB_PASSWORD"`}, {"", "port", "5432", `key "port"`}}},
		{"v2 metadata first", `{"data":{"metadata":null,"data":{"a":"1"}}}`, []kv{{"", "a", "1", `key "a"`}}},
		{"v2 empty", `{"data":{"data":{},"metadata":{}}}`, nil},
		// A trimmed export, "metadata" left out: as v1 the inner object
		// could be no secret's value, so it is v2.
		{"v2 without metadata", `{"data":{"data":{"a":"1"}}}`, []kv{{"", "a", "1", `key "a"`}}},
		{"v1 with secrets named data and metadata", `{"data":{"data":"d","metadata":"m"}}`, []kv{{"", "data", "d", `key "data"`}, {"", "metadata", "m", `key "metadata"`}}},
		{"v1 with a secret named metadata", `{"data":{"a":"1","metadata":"m"}}`, []kv{{"", "a", "1", `key "a"`}, {"", "metadata", "m", `key "metadata"`}}},
		{"v1 empty", `{"data":{}}`, nil},
		{"data last", `{"warnings":[],"data":{"a":"1"},"lease_id":""}`, []kv{{"", "a", "1", `key "a"`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseOK(t, "vault-kv", tc.in, Flat, tc.want...) })
	}
}

func TestVaultKVRefused(t *testing.T) {
	c := `"` + canary + `"`
	tests := []struct{ name, in, msg string }{
		{"no data", `{"request_id":` + c + `,"lease_id":""}`, `no "data" key: not the output of vault kv get -format=json`},
		{"data null", `{"data":null}`, `line 1: key "data" is null (want an object)`},
		{"data a string", `{"data":` + c + `}`, `line 1: key "data" is a string (want an object)`},
		{"not an object", `[` + c + `]`, "line 1: the top level is an array (want an object)"},
		{"duplicate data", "{\"data\":{},\n\"data\":{}}", `line 2: key "data" is also set on line 1`},
		{"duplicate secret v2", "{\"data\":{\"data\":{\"a\":" + c + ",\n\"a\":" + c + "},\"metadata\":{}}}", `line 2: key "data"."data"."a" is also set on line 1`},
		{"duplicate secret v1", "{\"data\":{\"a\":" + c + ",\n\"a\":" + c + "}}", `line 2: key "data"."a" is also set on line 1`},
		{"null secret v2", `{"data":{"data":{"a":null},"metadata":{}}}`, `line 1: key "data"."data"."a" is null (want a string)`},
		{"object secret v2", `{"data":{"data":{"a":{"b":` + c + `}},"metadata":{}}}`, `line 1: key "data"."data"."a" is an object (want a string)`},
		{"array secret v1", `{"data":{"a":[` + c + `]}}`, `line 1: key "data"."a" is an array (want a string)`},
		{"object secret v1", `{"data":{"a":` + c + `,"b":{}}}`, `line 1: key "data"."b" is an object (want a string)`},
		{"v2 with a third key", `{"data":{"data":{"a":` + c + `},"metadata":{},"x":` + c + `}}`, `line 1: key "data"."data" is an object (want a string)`},
		{"metadata object without data", `{"data":{"metadata":{},"a":` + c + `}}`, `line 1: key "data"."metadata" is an object (want a string)`},
		{"bad name v2", `{"data":{"data":{"my key":` + c + `},"metadata":{}}}`, `line 1: key "data"."data"."my key" is not a valid name: has a character outside [A-Za-z0-9._-]: ' '`},
		{"bad name v1", `{"data":{"_x":` + c + `}}`, `line 1: key "data"."_x" is not a valid name: must start with a letter or digit`},
		{"syntax", `{"data":{"a":` + c + `,}}`, `line 1: not valid JSON: invalid character '}' looking for beginning of object key string`},
		{"trailing", `{"data":{}}` + c, "line 1: data after the top-level object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { parseErr(t, "vault-kv", tc.in, tc.msg, Options{}) })
	}
}
