package vault_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcdtest"
)

// TestEtcdLeaderKilledMidStream writes a stream of records to a 3-member
// cluster and kills the leader partway. Every write acknowledged, before or
// after, reads back exactly; writes resume within 3 s of the kill.
func TestEtcdLeaderKilledMidStream(t *testing.T) {
	c := etcdtest.Start(t, 3)
	v := newEtcdVault(t, c, "/arca/failover/")
	v.opts.Timeout = 15 * time.Second // ride out the election rather than fail
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
	resumed := put(40).Sub(killed)
	t.Logf("first write after the leader was killed landed %v later", resumed)
	if resumed > 3*time.Second {
		t.Errorf("writes resumed %v after the leader was killed; want ≤ 3 s", resumed)
	}
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
