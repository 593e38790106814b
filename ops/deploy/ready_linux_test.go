package deploy

import (
	"strings"
	"testing"
)

// A directory that refuses new files although its mode allows them (sysfs,
// which root may "write") is found by the probe before anything is
// written, not by the write after the targets before it.
func TestReadyProbesTheDirectory(t *testing.T) {
	err := ready(Target{Name: "x", Out: "/sys/arca-deploy-probe.conf"})
	if err == nil || !strings.Contains(err.Error(), "cannot create files in directory /sys") {
		t.Fatalf("ready of a target in /sys: %v; want it refused", err)
	}
}
