package etcd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// Changes come from etcd's revisions. Every write of a name puts its key
// (a name is never deleted, only left with no version: see stored.go), so
// a key's mod revision is when its name last changed. A cursor is
// "e1.<vault id>.<revision>.<slot>": every name whose key's (mod
// revision, slot) is at most (revision, slot) was reported; the slot is
// empty when everything up to the revision was. Names are reported in
// (mod revision, slot) order, so that an answer cut short at a revision
// many names share (a batch's unit) goes on from the right one.
//
// A poll when nothing changed is one round trip: the written marker,
// which every record write touches in its transaction, is read with the
// header check, and when its mod revision is not past the cursor there is
// nothing to range. A cursor of another vault id (a rekey moved every
// name) or of a revision the cluster has not reached (a cluster restored
// from an earlier snapshot) is Reset.

// cursor is a position in a vault's changes.
type cursor struct {
	vaultID string // hex
	rev     int64
	slot    string // hex; "": the whole revision
}

const cursorTag = "e1"

func (c cursor) String() string {
	return cursorTag + "." + c.vaultID + "." + strconv.FormatInt(c.rev, 10) + "." + c.slot
}

// parseCursor reads a cursor exactly as String writes one, or fails.
func parseCursor(s string) (cursor, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] != cursorTag || !isHex(parts[1], seal.VaultIDSize) ||
		(parts[3] != "" && !isHex(parts[3], seal.SlotSize)) {
		return cursor{}, vault.ErrBadCursor
	}
	rev, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || rev < 1 || strconv.FormatInt(rev, 10) != parts[2] {
		return cursor{}, vault.ErrBadCursor
	}
	return cursor{vaultID: parts[1], rev: rev, slot: parts[3]}, nil
}

// isHex reports whether s is n bytes in lower-case hex.
func isHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// after reports whether a key at (rev, slot) is past c.
func (c cursor) after(rev int64, slot string) bool {
	return rev > c.rev || rev == c.rev && c.slot != "" && slot > c.slot
}

// noVaultID is the vault id of a cursor given where there is no vault
// yet: once one is made, such a cursor is Reset.
var noVaultID = strings.Repeat("0", 2*seal.VaultIDSize)

// Changes implements vault.Store.
func (e *Vault) Changes(ctx context.Context, since string, limit int) (vault.Changes, error) {
	var from cursor
	if since != "" {
		var err error
		if from, err = parseCursor(since); err != nil {
			return vault.Changes{}, err
		}
	}
	if limit <= 0 || limit > vault.MaxChanges {
		limit = vault.MaxChanges
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	resp, err := e.read(ctx, false, func() []clientv3.Op {
		return []clientv3.Op{clientv3.OpGet(e.writtenKey(), clientv3.WithKeysOnly())}
	})
	if errors.Is(err, errNoVault) {
		now := cursor{vaultID: noVaultID, rev: 1}
		return vault.Changes{Cursor: now.String(), Changes: []vault.Change{}, Reset: since != "" && from.vaultID != noVaultID}, nil
	}
	if err != nil {
		return vault.Changes{}, err
	}
	now := cursor{vaultID: e.hdr.VaultID, rev: resp.Header.Revision}
	var written int64
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		written = kvs[0].ModRevision
	}
	switch {
	case since == "":
		return vault.Changes{Cursor: now.String(), Changes: []vault.Change{}}, nil
	case from.vaultID != now.vaultID || from.rev > now.rev:
		return vault.Changes{Cursor: now.String(), Changes: []vault.Change{}, Reset: true}, nil
	case written < from.rev || written == from.rev && from.slot == "":
		// Nothing changed: the cursor stays as it was, whatever else the
		// cluster did meanwhile (locks, tokens, other vaults).
		return vault.Changes{Cursor: since, Changes: []vault.Change{}}, nil
	}
	return e.changedSince(ctx, from, now, limit)
}

// changed is a key past the cursor: its slot and mod revision.
type changed struct {
	slot string
	rev  int64
}

// changedSince reports the names whose keys moved past from, as of the
// revision at: their keys first (one range, keys only), then the values
// of the first limit of them in (mod revision, slot) order, in pages.
// Callers hold e.mu.
func (e *Vault) changedSince(ctx context.Context, from, at cursor, limit int) (vault.Changes, error) {
	minRev := from.rev
	if from.slot == "" {
		minRev++
	}
	var keys []changed
	err := e.doBulk(ctx, func(ctx context.Context) error {
		resp, err := e.cli.Get(ctx, e.recordsKey(), clientv3.WithRange(e.recordsEnd()), clientv3.WithKeysOnly(),
			clientv3.WithMinModRev(minRev), clientv3.WithRev(at.rev))
		if err != nil {
			return err
		}
		keys = keys[:0]
		for _, kv := range resp.Kvs {
			if slot := e.slotOf(kv); from.after(kv.ModRevision, slot) {
				keys = append(keys, changed{slot: slot, rev: kv.ModRevision})
			}
		}
		return nil
	})
	if err != nil {
		return vault.Changes{}, compacted(e, err)
	}
	slices.SortFunc(keys, func(a, b changed) int { return cmp.Or(cmp.Compare(a.rev, b.rev), strings.Compare(a.slot, b.slot)) })
	out := vault.Changes{Cursor: at.String()}
	if len(keys) > limit {
		keys, out.Truncated = keys[:limit], true
		last := keys[len(keys)-1]
		out.Cursor = cursor{vaultID: at.vaultID, rev: last.rev, slot: last.slot}.String()
	}
	out.Changes, err = e.changesOf(ctx, keys, at.rev)
	return out, err
}

// changesOf reads, at revision rev, the values of the keys and says what
// each name is now, in the keys' order. The keys are read in pages by key
// within the mod revisions they span, the other keys of that span
// skipped. Callers hold e.mu.
func (e *Vault) changesOf(ctx context.Context, keys []changed, rev int64) ([]vault.Change, error) {
	out := make([]vault.Change, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	at := make(map[string]int, len(keys))
	lo, hi := keys[0].rev, keys[0].rev
	for i, k := range keys {
		at[k.slot] = i
		lo, hi = min(lo, k.rev), max(hi, k.rev)
	}
	next, biggest, found := e.recordsKey(), 0, 0
	for next != "" {
		limit := int64(maxPageRecords)
		if biggest > 0 {
			limit = max(1, min(limit, pageTarget/int64(biggest)))
		}
		var resp *clientv3.GetResponse
		err := e.doBulk(ctx, func(ctx context.Context) error {
			var err error
			resp, err = e.cli.Get(ctx, next, clientv3.WithRange(e.recordsEnd()), clientv3.WithLimit(limit),
				clientv3.WithMinModRev(lo), clientv3.WithMaxModRev(hi), clientv3.WithRev(rev))
			return err
		})
		if err != nil {
			return nil, compacted(e, err)
		}
		for _, kv := range resp.Kvs {
			if bytes.Compare(kv.Key, []byte(next)) < 0 {
				return nil, fmt.Errorf("%s: the cluster answered a page of records out of order", e.where())
			}
			biggest = max(biggest, len(kv.Key)+len(kv.Value))
			i, ok := at[e.slotOf(kv)]
			if !ok || kv.ModRevision != keys[i].rev {
				continue
			}
			c, err := e.openChain(e.k, keys[i].slot, "", kv)
			if err != nil {
				return nil, err
			}
			out[i] = changeOf(c)
			found++
		}
		next = ""
		if resp.More && len(resp.Kvs) > 0 {
			next = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		}
	}
	if found != len(keys) {
		return nil, fmt.Errorf("%s: the cluster answered %d of %d changed records", e.where(), found, len(keys))
	}
	return out, nil
}

// changeOf is what changes says of the name c.
func changeOf(c vault.Chain) vault.Change {
	st, v := c.State()
	at := c.ChangedAt
	if at.IsZero() && c.HasCurrent { // a record written before history
		at = c.Current.UpdatedAt
	}
	return vault.Change{Name: c.Name, Version: v, State: st, At: at}
}

// compacted says what a read at a compacted revision means here.
func compacted(e *Vault, err error) error {
	if errors.Is(err, rpctypes.ErrCompacted) {
		return fmt.Errorf("%s: %w; try again", e.where(), errCompacted)
	}
	return err
}
