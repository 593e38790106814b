package etcd_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/etcd"
	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// TestEtcdGetsOfOneHandleOverlap: a handle's gets do not take turns on the
// handle's lock across their round trips. Each get is held as its round
// trip is about to go out until the other has reached that point too: were
// the second waiting on the first, neither would.
func TestEtcdGetsOfOneHandleOverlap(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/getsoverlap/")
	putRecords(t, v.open(t), 2)
	e := v.open(t)
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	e.OnGetSent(func() {
		arrived <- struct{}{}
		<-release
	})
	errs := make(chan error, 2)
	for i := range 2 {
		go func() { errs <- wantRecord(e, i) }()
	}
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			close(release)
			t.Fatal("the second get never went out while the first was in flight")
		}
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestEtcdGetsThroughRekeys: gets run at once on one handle while the data
// key is replaced again and again, by that handle and by another: every
// get answers its own record's value, none fails (a get that read under a
// header that moved reads again under the new one).
func TestEtcdGetsThroughRekeys(t *testing.T) {
	c := etcdtest.Start(t, 1)
	for _, same := range []bool{true, false} {
		t.Run(fmt.Sprintf("same-handle=%t", same), func(t *testing.T) {
			v := newEtcdVault(t, c, fmt.Sprintf("/arca/getsrekey-%t/", same))
			const records, readers, rekeys = 4, 8, 3
			e := v.open(t)
			putRecords(t, e, records)
			rekeyer := e
			if !same {
				rekeyer = v.open(t)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, readers)
			for r := range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						if err := wantRecord(e, (r+i)%records); err != nil {
							errs <- err
							return
						}
						select {
						case <-stop:
							return
						default:
						}
					}
				}()
			}
			for range rekeys {
				if _, err := rekeyer.Rekey(context.Background()); err != nil {
					t.Error(err)
				}
			}
			close(stop)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func recordName(i int) string { return fmt.Sprintf("app/r%d", i) }

func putRecords(t *testing.T, e *etcd.Vault, n int) {
	t.Helper()
	for i := range n {
		w := vault.Write{Kind: vault.Put, Name: recordName(i), Value: vault.NewSecret(fmt.Appendf(nil, "value-%d", i))}
		if _, err := e.Apply(context.Background(), w, func(vault.Meta) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// wantRecord gets record i and says what is wrong with what came back.
func wantRecord(e *etcd.Vault, i int) error {
	r, err := e.Get(context.Background(), recordName(i))
	switch {
	case err != nil:
		return fmt.Errorf("get %s: %v", recordName(i), err)
	case r.Name != recordName(i) || string(r.Value.Reveal()) != fmt.Sprintf("value-%d", i):
		return fmt.Errorf("get %s: record %s with another value", recordName(i), r.Name)
	}
	return nil
}
