package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// TestEtcdLeaderKilledMidStream writes a stream of records to a 3-member
// cluster and kills the leader partway. Every write acknowledged, before or
// after, reads back exactly. The first write after the kill lands within
// one op's deadline (the default timeout_ms, testTimeout): what the contract promises.
// How soon it lands is a figure, measured by BenchmarkEtcdFailover.
func TestEtcdLeaderKilledMidStream(t *testing.T) {
	c := etcdtest.Start(t, 3)
	v := newEtcdVault(t, c, "/arca/failover/")
	v.opts.Timeout = testTimeout
	e := v.open(t)
	ctx := context.Background()
	acked := map[string]string{}
	put := func(i int) time.Time {
		name, value := fmt.Sprintf("stream/r%04d", i), fmt.Sprintf("value-%d", i)
		_, err := e.Apply(ctx, vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte(value))},
			func(vault.Meta) error { return nil })
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		acked[name] = value
		return time.Now()
	}
	for i := range 40 {
		put(i)
	}
	leader := c.Leader(t)
	leader.Kill(t)
	killed := time.Now()
	t.Logf("first write after the leader was killed landed %v later", put(40).Sub(killed))
	for i := 41; i < 80; i++ {
		put(i)
	}
	if nl := c.Leader(t); nl == leader {
		t.Fatal("the killed member is still leader")
	}
	fresh := v.open(t)
	for name, want := range acked {
		got, err := fresh.Get(ctx, name)
		if err != nil || string(got.Value.Reveal()) != want || got.Version != 1 {
			t.Errorf("%s after failover: %v version %d, %v", name, got.Value, got.Version, err)
		}
	}
	metas, err := fresh.List(ctx)
	if err != nil || len(metas) != len(acked) {
		t.Fatalf("List after failover: %d records, %v; want %d", len(metas), err, len(acked))
	}
}

// BenchmarkEtcdFailover measures how long after its leader is killed a
// 3-member cluster takes a write again, as the metric resume-ms (one
// cluster per iteration: run it with -benchtime Nx).
func BenchmarkEtcdFailover(b *testing.B) {
	var total time.Duration
	for range b.N {
		b.StopTimer()
		c := etcdtest.Start(b, 3)
		v := newEtcdVault(b, c, "/arca/failover/")
		v.opts.Timeout = testTimeout
		e := v.open(b)
		w := vault.Write{Kind: vault.Put, Name: "stream/r", Value: vault.NewSecret([]byte("value"))}
		ok := func(vault.Meta) error { return nil }
		if _, err := e.Apply(context.Background(), w, ok); err != nil {
			b.Fatal(err)
		}
		c.Leader(b).Kill(b)
		killed := time.Now()
		if _, err := e.Apply(context.Background(), w, ok); err != nil {
			b.Fatalf("first write after the kill: %v", err)
		}
		total += time.Since(killed)
		e.Close()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "resume-ms")
}

// TestEtcdNoQuorum: with two members of three down the cluster has no
// leader. A write then retries until its deadline and fails, changing
// nothing; once the members are back, writes and reads go on.
func TestEtcdNoQuorum(t *testing.T) {
	c := etcdtest.Start(t, 3)
	v := newEtcdVault(t, c, "/arca/quorum/")
	v.opts.Timeout = 2 * time.Second
	e := v.open(t)
	ctx := context.Background()
	ok := func(vault.Meta) error { return nil }
	put := func(value string) (vault.Meta, error) {
		return e.Apply(ctx, vault.Write{Kind: vault.Put, Name: "app/db", Value: vault.NewSecret([]byte(value))}, ok)
	}
	if _, err := put("one"); err != nil {
		t.Fatal(err)
	}
	down := []*etcdtest.Member{}
	for _, m := range c.Members {
		if len(down) < 2 {
			m.Kill(t)
			down = append(down, m)
		}
	}
	if _, err := put("two"); err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Fatalf("put without quorum: %v", err)
	}
	for _, m := range down {
		m.Restart(t)
	}
	c.Leader(t)
	got, err := e.Get(ctx, "app/db")
	if err != nil || string(got.Value.Reveal()) != "one" || got.Version != 1 {
		t.Fatalf("after quorum is back: %v version %d, %v (the failed put must not have landed)", got.Value, got.Version, err)
	}
	if m, err := put("three"); err != nil || m.Version != 2 {
		t.Fatalf("put after quorum is back: %+v, %v", m, err)
	}
}

// A lock key left under a lease of this handle's that the cluster did not
// confirm revoked (its release lost with a leader) does not hold the
// handle's next write past its deadline: the handle revokes that lease
// again while it waits, rather than wait out a countdown a new leader
// restarts. Without that the write below waits the orphan's 60 s.
func TestEtcdOrphanedLockKeyRevokedWhileWaiting(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/orphan/")
	v.opts.Timeout = 2 * time.Second
	e := v.open(t)
	ctx := context.Background()
	put := func(name string) error {
		_, err := e.Apply(ctx, vault.Write{Kind: vault.Put, Name: name, Value: vault.NewSecret([]byte("v"))},
			func(vault.Meta) error { return nil })
		return err
	}
	if err := put("app/first"); err != nil {
		t.Fatal(err)
	}
	if err := e.PlantOrphan(ctx, 60, "app/second"); err != nil {
		t.Fatal(err)
	}
	if err := put("app/second"); err != nil {
		t.Fatalf("a write behind this handle's own orphaned lock key: %v", err)
	}
	if got, err := v.open(t).Get(ctx, "app/second"); err != nil || string(got.Value.Reveal()) != "v" {
		t.Fatalf("read back: %v", err)
	}
}
