package ops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arca-secrets/arca/ops/ref"
)

func vaultProblem(name string, v VaultConfig) string {
	if p := ref.SegmentProblem(name); p != "" {
		return "vaults." + strconv.Quote(name) + ": invalid vault name: " + p
	}
	key := "vaults." + name
	switch v.Kind {
	case "":
		return key + ".kind is required (file or etcd)"
	case "file":
		if k := etcdOnlyKey(v); k != "" {
			return key + "." + k + " is only for kind etcd"
		}
	case "etcd":
		if v.Path != "" {
			return key + ".path is only for kind file"
		}
		if msg := etcdProblem(v); msg != "" {
			return key + "." + msg
		}
	default:
		return key + ".kind " + strconv.Quote(v.Kind) + " is not file or etcd"
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
func etcdOnlyKey(v VaultConfig) string {
	set := []struct {
		key string
		on  bool
	}{
		{"endpoints", v.Endpoints != nil}, {"prefix", v.Prefix != ""}, {"username", v.Username != ""},
		{"password", v.Password != ""}, {"password_file", v.PasswordFile != ""}, {"tls_ca", v.TLSCA != ""},
		{"tls_cert", v.TLSCert != ""}, {"tls_key", v.TLSKey != ""}, {"timeout_ms", v.TimeoutMS != 0},
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
	maxEndpoints    = 32
	maxEndpointLen  = 256
	maxPrefixLen    = 256
	maxEtcdTimeout  = 600000
	defaultEtcdWait = 5000
)

// etcdProblem checks an etcd vault's keys; the message starts with the key.
func etcdProblem(v VaultConfig) string {
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
	case v.TimeoutMS < 0 || v.TimeoutMS > maxEtcdTimeout:
		return fmt.Sprintf("timeout_ms is %d, must be 1..%d (unset: %d)", v.TimeoutMS, maxEtcdTimeout, defaultEtcdWait)
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

// EtcdTimeout is how long one op on v may take, retries included.
func (v VaultConfig) EtcdTimeout() time.Duration {
	if v.TimeoutMS == 0 {
		return defaultEtcdWait * time.Millisecond
	}
	return time.Duration(v.TimeoutMS) * time.Millisecond
}
