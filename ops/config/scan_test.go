package config

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// scanDocs are configs whose unknown keys the scan must tell exactly as
// go-toml's strict mode does.
var scanDocs = []string{
	"",
	"bogus = 1\n",
	"a = 1\nb = 2\nc = 3\n",
	"default_env = \"dev\"\n\n[envs.dev]\nvualt = \"v\"\n",
	"[serve.pdp]\nexec = \"x\"\nexce = \"y\"\n",
	"[[guardrails.rule]]\nreason = \"r\"\nopz = [\"get\"]\n[[guardrails.rule]]\nreason = \"r\"\ny = {a = 1}\n",
	"[nope]\na = 1\nb = 2\n[nope.sub]\nc = 3\n",
	"[a.b]\nc = 1\n[a]\nd = 2\n",
	"a.b.c = 1\n",
	"[serve]\npdp.exec = \"x\"\npdp.zz = 1\n",
	"audit = { file = \"x\", zz = 1 }\n",
	"envs = { dev = { vault = \"v\", x = 1 }, qa = { y = 2 } }\n",
	"guardrails = { rule = [ { reason = \"r\", q = 1 }, { w = 2 } ] }\n",
	"DEFAULT_ENV = \"default\"\n[Audit]\nFile = \"x\"\nfIlE2 = 1\n",
	"[vaults.v]\nkind = \"etcd\"\ntimeout_ms = 5\nTimeoutMS = 1\npinfile = \"x\"\n",
	"[serve.pdp]\nexec = \"x\"\ntimeout_ms = 1\nTimeoutMS = 2\n",
	"[services.s]\nbase_url = \"x\"\nheaders = {}\nTimeoutMS = 1\nMaxResponseBytes = 2\nmax_response_bytes = 3\n",
	"[services.s]\nMETHODS = [\"GET\"]\ntls_CA = \"x\"\nallowprivate = true\n",
	"[actions.a]\nargv = [\"x\"]\nArgsRE = \"x\"\nmaxargs = 1\nmax_args = 2\n[actions.a.env]\nA = \"arca://a/b\"\n",
	"actions = { a = { argv = [\"x\"], env = { B = \"x\" }, stdin = 1 } }\n",
	"[guardrails]\nrule = 1\nbad = 2\n",
	"[envs.\"a.b\"]\nvault = \"v\"\n'x y' = 1\n",
	"default_env.x = 1\n",
	"[default_env]\nx = 1\n",
	"[[envs]]\nvault = \"v\"\n",
	"[[nope]]\n[[nope]]\nx = 1\n",
	"x = [ {a = 1}, {b = 2} ]\n[serve]\nq = [1, 2]\n",
	"[vaults.v.endpoints]\nx = 1\n",
	"[envs.dev]\nvault = \"v\"\n[envs.dev.sub]\nx = 1\n",
}

// strictUnknown is what go-toml's strict mode says of data's unknown
// keys: ok is false when it says something else first.
func strictUnknown(data []byte) (count int, first []string, line int, ok bool) {
	var doc document
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(&doc)
	var strict *toml.StrictMissingError
	switch {
	case err == nil:
		return 0, nil, 0, true
	case errors.As(err, &strict):
		line, _ := strict.Errors[0].Position()
		return len(strict.Errors), strict.Errors[0].Key(), line, true
	}
	return 0, nil, 0, false
}

func checkScan(t *testing.T, data []byte) {
	t.Helper()
	count, first, line, ok := strictUnknown(data)
	sh := scanShape(data)
	if !ok || sh.syntax || sh.keys > MaxKeys {
		return
	}
	gotLine := 1 + bytes.Count(data[:sh.at], []byte("\n"))
	if sh.unknown != count || count > 0 && (!slices.Equal(sh.first, first) || gotLine != line) {
		t.Errorf("%q: the scan finds %d unknown keys, the first %q on line %d; go-toml %d, %q on line %d",
			data, sh.unknown, sh.first, gotLine, count, first, line)
	}
}

func TestScanAgreesWithStrict(t *testing.T) {
	sketch := readSketch(t)
	for _, doc := range append(scanDocs, sketch) {
		checkScan(t, []byte(doc))
	}
}

func FuzzScanAgreesWithStrict(f *testing.F) {
	sketch := readSketch(f)
	for _, doc := range append(scanDocs, sketch) {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if len(doc) > 4096 {
			return
		}
		checkScan(t, []byte(doc))
	})
}
