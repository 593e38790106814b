package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// writeGroup writes a put of names in groups of e with their records
// reserved, as ops.Writes does: a write that answers ErrCommitFirst goes
// in the next group.
func writeGroup(e *etcd.Vault, value string, names ...string) error {
	ctx := context.Background()
	for len(names) > 0 {
		g, err := e.Group(ctx)
		if err != nil {
			return err
		}
		if err := g.(vault.Reserver).Reserve(ctx, names); err != nil {
			g.Abort()
			return err
		}
		n := 0
		for ; n < len(names); n++ {
			_, err := g.Add(ctx, vault.Write{Kind: vault.Put, Name: names[n], Value: vault.NewSecret([]byte(value))}, func(vault.Meta) error { return nil })
			if n > 0 && errors.Is(err, vault.ErrCommitFirst) {
				break
			}
			if err != nil {
				g.Abort()
				return fmt.Errorf("add %s: %w", names[n], err)
			}
		}
		if err := g.Commit(ctx); err != nil {
			return err
		}
		names = names[n:]
	}
	return nil
}

// Many writers on a 3-member cluster, some sharing a record, carry on
// through the loss of a member: every write is answered ok within its
// deadline, and none is lost. killLeader picks the member to kill.
func manyWritersThroughAKill(t *testing.T, killLeader bool) {
	c := etcdtest.Start(t, 3)
	v := newEtcdVault(t, c, fmt.Sprintf("/arca/kill%t/", killLeader))
	v.opts.Timeout = testTimeout
	if _, err := v.open(t).Apply(context.Background(), vault.Write{Kind: vault.Put, Name: "shared/n", Value: vault.NewSecret([]byte("0"))}, func(vault.Meta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	const writers, rounds = 8, 12
	halfway := make(chan struct{}, writers)
	killed := make(chan struct{})
	errs := make(chan error, writers)
	var mu sync.Mutex
	acked := 0
	for i := range writers {
		e := v.open(t)
		go func() {
			told := false
			defer func() {
				if !told { // a writer that failed early still lets the kill go ahead
					halfway <- struct{}{}
				}
			}()
			for r := range rounds {
				if r == rounds/2 {
					halfway <- struct{}{}
					told = true
					<-killed
				}
				if err := writeGroup(e, "v", fmt.Sprintf("own%d/r%d", i, r), "shared/n"); err != nil {
					errs <- fmt.Errorf("writer %d, round %d: %w", i, r, err)
					return
				}
				mu.Lock()
				acked++
				mu.Unlock()
			}
			errs <- nil
		}()
	}
	for range writers {
		<-halfway
	}
	victim := c.Leader(t)
	if !killLeader {
		for _, m := range c.Members {
			if m != victim {
				victim = m
				break
			}
		}
	}
	victim.Kill(t)
	close(killed)
	for range writers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	fresh := v.open(t)
	got, err := fresh.Get(context.Background(), "shared/n")
	if err != nil || got.Version != uint64(acked)+1 {
		t.Fatalf("the shared record after %d acknowledged writes: version %d, %v", acked, got.Version, err)
	}
	metas, err := fresh.List(context.Background())
	if err != nil || len(metas) != writers*rounds+1 {
		t.Fatalf("records after the kill: %d, %v; want %d", len(metas), err, writers*rounds+1)
	}
}

func TestEtcdManyWritersLeaderKilled(t *testing.T) { manyWritersThroughAKill(t, true) }

func TestEtcdManyWritersMemberDown(t *testing.T) { manyWritersThroughAKill(t, false) }
