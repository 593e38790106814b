package main

import (
	"context"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest/launch"
)

// startCluster starts an n-member etcd cluster on free loopback ports, its
// data dirs and logs in dir, as the tests start theirs (package launch),
// and returns once every member answers and there is a leader. On error,
// the members are killed; a member this program did not kill is killed by
// the kernel when it exits (on Linux).
func startCluster(dir string, n int) (*launch.Cluster, error) {
	bin, err := launch.LookBinary()
	if err != nil {
		return nil, err
	}
	return launch.Start(context.Background(), bin, dir, n)
}
