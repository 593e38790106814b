package etcd_test

import (
	"context"
	"strings"
	"testing"

	"github.com/arca-secrets/arca/vault/etcd/etcdtest"
)

// TestEtcdHeaderWithCommitMarksIsCorrupt: commit marks are the file
// vault's; a shared vault's header that carries them is not one arca
// wrote, and is refused rather than its marks ignored.
func TestEtcdHeaderWithCommitMarksIsCorrupt(t *testing.T) {
	c := etcdtest.Start(t, 1)
	v := newEtcdVault(t, c, "/arca/marks/")
	ctx := context.Background()
	if _, err := putValue(v.open(t), "app/db", "one"); err != nil {
		t.Fatal(err) // the positive control: the vault as written opens
	}
	raw := c.Client(t)
	resp, err := raw.Get(ctx, v.opts.Prefix+"vault")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("read header: %v", err)
	}
	hdr := string(resp.Kvs[0].Value)
	marked := strings.Replace(hdr, `"format"`, `"commits":["1-0123456789abcdef"],"format"`, 1)
	if marked == hdr {
		t.Fatalf("header %s has no format field to mark beside", hdr)
	}
	if _, err := raw.Put(ctx, v.opts.Prefix+"vault", marked); err != nil {
		t.Fatal(err)
	}
	if _, err := v.open(t).Get(ctx, "app/db"); err == nil || !strings.Contains(err.Error(), "is corrupt") {
		t.Fatalf("a header with commit marks: %v", err)
	}
}
