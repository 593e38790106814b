package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Bulk reads (list, check, rekey) read the records in pages, every page at
// the revision of the first, so that the read is one snapshot however many
// records there are, and no answer is over what the client accepts
// (maxEtcdResponse). Each page has the op's timeout to itself: a vault
// takes as many pages as its size needs, and a bulk op is bounded by the
// bytes it may read in all (maxEtcdVault), not by one deadline.
const (
	// maxPageRecords is as many names as fit in one answer when each is
	// as large as a name's value may be (its kept versions included), with
	// room for its key and framing.
	maxPageRecords = maxEtcdResponse / (maxEtcdValue + 1<<10)
	// pageTarget is the size a page aims at once the records read so far
	// say how large they are, so that a page of large values is a round
	// trip of seconds at most, even on a slow link.
	pageTarget = 4 << 20
	// maxEtcdVault bounds what one bulk read takes in all, keys and values:
	// etcd's largest recommended backend quota.
	maxEtcdVault = 8 << 30
)

// errCompacted is a bulk read whose revision the cluster compacted away
// before the read was done.
var errCompacted = errors.New("the cluster compacted the revision this read was at")

// snapshot is where a bulk read is: the revision it reads at, the written
// marker's mod revision there, and how much it has read.
type snapshot struct {
	rev        int64
	writtenRev int64
	next       string // the first key of the next page; "": done
	read       int64  // bytes of keys and values read
	biggest    int    // the largest record read, key included
}

// eachPage reads every record under the header in use, at one revision,
// and calls fn with each page in key order. The first page is read with
// the header check (e.read) and the written marker, whose mod revision it
// returns. Callers hold e.mu.
func (e *Vault) eachPage(ctx context.Context, fn func(kvs []*mvccpb.KeyValue) error) (writtenRev int64, err error) {
	s, kvs, err := e.firstPage(ctx)
	for err == nil {
		if err = fn(kvs); err != nil || s.next == "" {
			break
		}
		kvs, err = e.nextPage(ctx, s)
	}
	return s.writtenRev, err
}

// firstPage reads the first page and the written marker in one
// transaction guarded by the header.
func (e *Vault) firstPage(ctx context.Context) (*snapshot, []*mvccpb.KeyValue, error) {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	s := &snapshot{}
	resp, err := e.read(ctx, true, func() []clientv3.Op {
		return []clientv3.Op{
			clientv3.OpGet(e.recordsKey(), clientv3.WithRange(e.recordsEnd()), clientv3.WithLimit(maxPageRecords)),
			clientv3.OpGet(e.writtenKey()),
		}
	})
	if err != nil {
		return s, nil, err
	}
	s.rev = resp.Header.Revision
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		s.writtenRev = kvs[0].ModRevision
	}
	page := resp.Responses[0].GetResponseRange()
	return s, page.Kvs, e.advance(s, e.recordsKey(), page.Kvs, page.More)
}

// nextPage reads the page at s.next, at s.rev.
func (e *Vault) nextPage(ctx context.Context, s *snapshot) ([]*mvccpb.KeyValue, error) {
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	limit := int64(maxPageRecords)
	if s.biggest > 0 {
		limit = max(1, min(limit, pageTarget/int64(s.biggest)))
	}
	var resp *clientv3.GetResponse
	err := e.doBulk(ctx, func(ctx context.Context) error {
		var err error
		resp, err = e.cli.Get(ctx, s.next, clientv3.WithRange(e.recordsEnd()), clientv3.WithLimit(limit), clientv3.WithRev(s.rev))
		return err
	})
	if errors.Is(err, rpctypes.ErrCompacted) {
		return nil, fmt.Errorf("%s: %w; try again", e.where(), errCompacted)
	}
	if err != nil {
		return nil, err
	}
	return resp.Kvs, e.advance(s, s.next, resp.Kvs, resp.More)
}

// advance checks a page that should start at from and moves s past it. A
// page is only taken if its keys are records of the vault in strictly
// increasing order, from from on: a cluster that answers otherwise could
// make a read go round in circles.
func (e *Vault) advance(s *snapshot, from string, kvs []*mvccpb.KeyValue, more bool) error {
	prev := []byte(nil)
	for _, kv := range kvs {
		if bytes.Compare(kv.Key, []byte(from)) < 0 || prev != nil && bytes.Compare(kv.Key, prev) <= 0 ||
			!bytes.HasPrefix(kv.Key, []byte(e.recordsKey())) {
			return fmt.Errorf("%s: the cluster answered a page of records out of order", e.where())
		}
		prev = kv.Key
		s.read += int64(len(kv.Key) + len(kv.Value))
		s.biggest = max(s.biggest, len(kv.Key)+len(kv.Value))
	}
	if s.read > maxEtcdVault {
		return fmt.Errorf("%s: the records are more than %d bytes in all", e.where(), int64(maxEtcdVault))
	}
	s.next = ""
	if more {
		if len(kvs) == 0 {
			return fmt.Errorf("%s: the cluster answered an empty page with more to come", e.where())
		}
		s.next = string(prev) + "\x00"
	}
	return nil
}

// recordsEnd is the end of the range of the records under the header in use.
func (e *Vault) recordsEnd() string { return clientv3.GetPrefixRangeEnd(e.recordsKey()) }

// eachRecord calls fn with every record under the header in use, read by
// eachPage, and reads again from a new revision, at most bulkTries times in
// all, when the cluster compacts the one it read at; begin runs before
// each try, to drop what fn gathered. Callers hold e.mu.
func (e *Vault) eachRecord(ctx context.Context, begin func(), fn func(slot string, kv *mvccpb.KeyValue) error) error {
	var err error
	for range bulkTries {
		begin()
		_, err = e.eachPage(ctx, func(kvs []*mvccpb.KeyValue) error {
			for _, kv := range kvs {
				if err := fn(e.slotOf(kv), kv); err != nil {
					return err
				}
			}
			return nil
		})
		if !errors.Is(err, errCompacted) {
			break
		}
	}
	return err
}

// bulkTries bounds the reads of one list or check.
const bulkTries = 3
