// Package rig holds what the programs under bench that measure the built
// arca share: the machine they ran on, as their reports name it, and the
// config of a vault on an etcd cluster.
package rig

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPUModel is the first model name in /proc/cpuinfo, or "unknown CPU".
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// EtcdConfig is an arca.toml whose only env, default, is the vault team,
// of kind etcd, on endpoints under prefix, with timeout as its timeout_ms
// (in whole milliseconds). It configures no PDP.
func EtcdConfig(endpoints []string, prefix string, timeout time.Duration) string {
	quoted := make([]string, len(endpoints))
	for i, e := range endpoints {
		quoted[i] = strconv.Quote(e)
	}
	return fmt.Sprintf(`[envs.default]
vault = "team"

[vaults.team]
kind = "etcd"
endpoints = [%s]
prefix = %q
timeout_ms = %d
`, strings.Join(quoted, ", "), prefix, timeout.Milliseconds())
}
