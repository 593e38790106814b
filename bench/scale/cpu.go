package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// userHZ is the unit of the times in /proc/<pid>/stat: clock ticks of
// 1/100 s on Linux.
const userHZ = 100

// etcdCPU is the CPU time (user and system) the running members of c have
// spent since they started, read from /proc (Linux only).
func etcdCPU(c *launch.Cluster) (time.Duration, error) {
	var total time.Duration
	for _, m := range c.Members {
		if m.Pid() == 0 {
			return 0, fmt.Errorf("etcd member %s is not running", m.Name)
		}
		d, err := cpuTime(m.Pid())
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// cpuTime reads utime and stime of pid, the 14th and 15th fields of
// /proc/<pid>/stat; the fields are counted after the command's name, in
// parentheses, which may hold spaces.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPUTime(string(b))
}

func parseCPUTime(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat without a command name: %.40q", stat)
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat of %d fields", len(f)+2)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %q is not a tick count", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
