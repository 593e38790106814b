package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arca-secrets/arca/internal/glob"
	"github.com/arca-secrets/arca/internal/passenv"
	"github.com/arca-secrets/arca/manifest"
	"github.com/arca-secrets/arca/ops/ref"
	"github.com/arca-secrets/arca/pdp"
)

// validate checks what decoding cannot, in c and in the document it was
// made from (which tells an omitted key from a zero one); every message names
// the file and the offending key. Maps are walked in sorted order so the
// first problem reported is stable.
func (c *Config) validate(name string, doc *document) error {
	for _, vn := range sortedKeys(doc.Vaults) {
		if msg := vaultProblem(vn, doc.Vaults[vn]); msg != "" {
			return fmt.Errorf("%s: %s", name, msg)
		}
	}
	for _, en := range sortedKeys(c.Envs) {
		if msg := c.envProblem(en); msg != "" {
			return fmt.Errorf("%s: %s", name, msg)
		}
	}
	if msg := c.defaultEnvProblem(); msg != "" {
		return fmt.Errorf("%s: %s", name, msg)
	}
	for i := range c.Guardrails.Rules {
		if msg := c.Guardrails.Rules[i].problem(); msg != "" {
			return fmt.Errorf("%s: guardrails.rule #%d: %s", name, i+1, msg)
		}
	}
	if msg := pdpProblem(doc.Serve.PDP); msg != "" {
		return fmt.Errorf("%s: %s", name, msg)
	}
	if msg := grantsProblem(&c.Serve.Grants); msg != "" {
		return fmt.Errorf("%s: %s", name, msg)
	}
	if msg := c.approvalsProblem(c.Serve.Approvals); msg != "" {
		return fmt.Errorf("%s: %s", name, msg)
	}
	if msg := c.deployProblem(); msg != "" {
		return fmt.Errorf("%s: %s", name, msg)
	}
	if msg := runProblem(c.Run); msg != "" {
		return fmt.Errorf("%s: %s", name, msg)
	}
	for _, sn := range sortedKeys(doc.Services) {
		if msg := serviceProblem(sn, doc.Services[sn]); msg != "" {
			return fmt.Errorf("%s: %s", name, msg)
		}
	}
	for _, an := range sortedKeys(doc.Actions) {
		if msg := actionProblem(an, doc.Actions[an]); msg != "" {
			return fmt.Errorf("%s: %s", name, msg)
		}
	}
	return nil
}

func (c *Config) envProblem(name string) string {
	if p := ref.SegmentProblem(name); p != "" {
		return "envs." + strconv.Quote(name) + ": invalid env name: " + p
	}
	vault := c.Envs[name].Vault
	switch {
	case vault == "":
		return "envs." + name + ".vault is required"
	case !hasKey(c.Vaults, vault):
		return "envs." + name + ".vault: no vault " + strconv.Quote(vault) + " is configured (" + configured(sortedKeys(c.Vaults)) + ")"
	}
	return ""
}

func (c *Config) defaultEnvProblem() string {
	d := c.DefaultEnv
	switch {
	case d == "":
		return ""
	case ref.SegmentProblem(d) != "":
		return "default_env " + strconv.Quote(d) + ": " + ref.SegmentProblem(d)
	case !c.HasEnv(d):
		return "default_env " + strconv.Quote(d) + " is not a configured env (" + configured(c.sortedEnvNames()) + ")"
	}
	return ""
}

func pdpProblem(p *pdpDoc) string {
	if p == nil {
		return ""
	}
	hasExec, hasURL := strings.TrimSpace(p.Exec) != "", p.URL != ""
	switch {
	case hasExec && hasURL:
		return "serve.pdp.exec and serve.pdp.url are both set; give one"
	case !hasExec && !hasURL:
		return "serve.pdp.exec or serve.pdp.url is required when [serve.pdp] is present"
	case hasExec && (p.API != "" || p.HTTPPath != ""):
		return "serve.pdp.api and serve.pdp.http_path are only for url"
	case hasURL && p.Mode != "":
		return "serve.pdp.mode is only for exec"
	case p.Mode != "" && p.Mode != pdp.ModeSpawn && p.Mode != pdp.ModePersistent:
		return "serve.pdp.mode " + strconv.Quote(p.Mode) + " is not spawn or persistent"
	case hasURL:
		if why := pdp.EndpointProblem(p.URL, p.HTTPPath, p.API); why != "" {
			return "serve.pdp." + why
		}
	}
	return timeoutProblem("serve.pdp.timeout_ms", p.TimeoutMS)
}

func vaultProblem(name string, v vaultDoc) string {
	if p := ref.SegmentProblem(name); p != "" {
		return "vaults." + strconv.Quote(name) + ": invalid vault name: " + p
	}
	key := "vaults." + name
	switch v.Kind {
	case "":
		return key + ".kind is required (file or etcd)"
	case KindFile:
		if k := etcdOnlyKey(v); k != "" {
			return key + "." + k + " is only for kind etcd"
		}
	case KindEtcd:
		if v.Path != "" {
			return key + ".path is only for kind file"
		}
		if msg := etcdProblem(v); msg != "" {
			return key + "." + msg
		}
	default:
		return key + ".kind " + strconv.Quote(string(v.Kind)) + " is not file or etcd"
	}
	if _, msg := resolveHistory(v.History); msg != "" {
		return key + "." + msg
	}
	if slices.Contains(v.Endpoints, "") {
		return key + ".endpoints has an empty entry"
	}
	if slices.Contains(v.Recipients, "") {
		return key + ".recipients has an empty entry"
	}
	return ""
}

// etcdOnlyKey names a key set in v that only kind etcd takes.
func etcdOnlyKey(v vaultDoc) string {
	set := []struct {
		key string
		on  bool
	}{
		{"endpoints", v.Endpoints != nil}, {"prefix", v.Prefix != ""}, {"username", v.Username != ""},
		{"password", v.Password != ""}, {"password_file", v.PasswordFile != ""}, {"tls_ca", v.TLSCA != ""},
		{"tls_cert", v.TLSCert != ""}, {"tls_key", v.TLSKey != ""}, {"timeout_ms", v.TimeoutMS != nil},
	}
	for _, s := range set {
		if s.on {
			return s.key
		}
	}
	return ""
}

// Bounds on an etcd vault's settings.
const (
	maxEndpoints   = 32
	maxEndpointLen = 256
	maxPrefixLen   = 256
)

// etcdProblem checks an etcd vault's keys; the message starts with the key.
func etcdProblem(v vaultDoc) string {
	switch {
	case len(v.Endpoints) == 0:
		return "endpoints is required for kind etcd"
	case len(v.Endpoints) > maxEndpoints:
		return fmt.Sprintf("endpoints lists %d members, at most %d", len(v.Endpoints), maxEndpoints)
	case v.Prefix == "":
		return "prefix is required for kind etcd"
	case len(v.Prefix) > maxPrefixLen || !strings.HasPrefix(v.Prefix, "/") || !strings.HasSuffix(v.Prefix, "/") ||
		strings.ContainsFunc(v.Prefix, func(r rune) bool { return r < 0x21 || r == 0x7f }):
		return fmt.Sprintf("prefix %q must start and end with / and be at most %d printable bytes", v.Prefix, maxPrefixLen)
	case timeoutProblem("timeout_ms", v.TimeoutMS) != "":
		return timeoutProblem("timeout_ms", v.TimeoutMS)
	case v.Password != "" && v.PasswordFile != "":
		return "password and password_file are both set; give one"
	case (v.Password != "" || v.PasswordFile != "") != (v.Username != ""):
		return "username and a password (password or password_file) go together"
	case (v.TLSCert != "") != (v.TLSKey != ""):
		return "tls_cert and tls_key go together"
	}
	for _, ep := range v.Endpoints {
		if len(ep) > maxEndpointLen || strings.ContainsFunc(ep, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
			return fmt.Sprintf("endpoints has an entry that is empty, longer than %d bytes or not printable", maxEndpointLen)
		}
	}
	return ""
}

// IsVaultOp reports whether op is one of the ops a guardrail rule can name:
// the ops guardrails and the PDP govern (the meta-ops manifest and shutdown
// are not, nor scrub).
func IsVaultOp(op string) bool {
	o, ok := manifest.Op(op)
	return ok && o.Governed()
}

// vaultOps lists, for messages, the ops a guardrail rule can name.
func vaultOps() string {
	var names []string
	for _, o := range manifest.Ops() {
		if o.Governed() {
			names = append(names, o.Name)
		}
	}
	return strings.Join(names, ", ")
}

// opsEntryProblem says what is wrong with one entry of a rule's ops: a
// vault op's name, or a glob that matches at least one (a glob that matches
// none would be a deny rule that never denies).
func opsEntryProblem(op string) string {
	if IsVaultOp(op) {
		return ""
	}
	if !strings.ContainsAny(op, "*?[]\\") {
		return "unknown op " + strconv.Quote(op) + " (want " + vaultOps() + ")"
	}
	if p := glob.Problem(op); p != "" {
		return "invalid glob " + strconv.Quote(op) + ": " + p
	}
	for _, o := range manifest.Ops() {
		if o.Governed() && glob.Match(op, o.Name) {
			return ""
		}
	}
	return "glob " + strconv.Quote(op) + " matches no op (want " + vaultOps() + ")"
}

// problem describes what makes r invalid, or returns "".
func (r *Rule) problem() string {
	if strings.TrimSpace(r.Reason) == "" {
		return "reason is required"
	}
	if r.Ops != nil && len(r.Ops) == 0 {
		return "ops is empty (omit it to mean every op)"
	}
	for _, op := range r.Ops {
		if msg := opsEntryProblem(op); msg != "" {
			return "ops: " + msg
		}
	}
	for _, g := range [...]struct{ key, pattern string }{{"env", r.Env}, {"ref", r.Ref}, {"actor", r.Actor}} {
		if p := glob.Problem(g.pattern); p != "" {
			return g.key + ": invalid glob " + strconv.Quote(g.pattern) + ": " + p
		}
	}
	return ""
}

// configured renders names for a message: "configured: a, b" or "none configured".
func configured(names []string) string {
	if len(names) == 0 {
		return "none configured"
	}
	return "configured: " + strings.Join(names, ", ")
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// runProblem checks [run]: pass holds at most passenv.MaxPatterns
// patterns, each one passenv accepts.
func runProblem(r RunConfig) string {
	if len(r.Pass) > passenv.MaxPatterns {
		return "run.pass: " + strconv.Itoa(len(r.Pass)) + " entries: at most " + strconv.Itoa(passenv.MaxPatterns)
	}
	for i, p := range r.Pass {
		if prob := passenv.Problem(p); prob != "" {
			return "run.pass[" + strconv.Itoa(i) + "]: " + prob
		}
	}
	return ""
}
