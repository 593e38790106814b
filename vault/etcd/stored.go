package etcd

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/arca-secrets/arca/vault"
	"github.com/arca-secrets/arca/vault/internal/seal"
)

// What a name's key holds. A name keeps one key, P + "r/" + vaultID + "/"
// + slot, so that its lock, the compares of a transaction and a batch's
// units keep one key per name. Its value is one of:
//
//   - a legacy record: the sealed record alone (nonce || ciphertext), as
//     a name written before vaults kept history holds it; its chain is
//     that record alone. It stays so until the name's next write.
//   - a chain: chainMagic, the uvarint length of the sealed current
//     record (0: none, the name soft-deleted or every version erased),
//     that record sealed exactly as a legacy one (seal.Keys.AppendSeal),
//     then the sealed history part (seal.Keys.AppendSealHistory): the
//     kept earlier versions, the soft delete and the highest version.
//
// Every write writes a chain. A get opens the current part alone, so it
// costs what it did before history. A name whose versions are all erased
// keeps its key, with no current part and a history part that holds its
// highest version, so that numbering continues and changes can say it
// was erased (an rm of a value that fails to authenticate leaves it with
// none: what it was cannot be told). Keys are only deleted by a rekey,
// which moves every name to a new vault id.
//
// An erased version leaves the key's value at the write that erased it.
// etcd keeps a key's earlier values, as revisions, until the cluster is
// compacted: until then, whoever can read the cluster's history (etcdctl
// get --rev, a snapshot of its data dir) holds the ciphertext of erased
// versions, which the data key opens. Destroy on a shared vault is only
// complete once the cluster compacts past its revision.
const chainMagic = "arca-chain-v1\x00"

// Bounds of what a key holds. A chain carries its kept versions, so it
// can be much larger than a record; etcd itself refuses a request over
// 1.5 MiB by default, which bounds what a write may store.
const (
	maxEtcdValue   = 2 << 20    // the most a key's value read is taken to hold
	maxStoredWrite = 1400 << 10 // the most a write stores in one key
)

// splitStored splits a key's value into its sealed current record (nil:
// none) and history part (nil: a legacy record, its chain the record
// alone).
func splitStored(v []byte) (current, history []byte, err error) {
	if !bytes.HasPrefix(v, []byte(chainMagic)) {
		return v, nil, nil
	}
	rest := v[len(chainMagic):]
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		return nil, nil, seal.ErrAuth
	}
	rest = rest[w:]
	if n > 0 {
		current = rest[:n:n]
	}
	history = rest[n:]
	if len(history) == 0 {
		return nil, nil, seal.ErrAuth
	}
	return current, history, nil
}

// appendStored appends what a key holds for the chain c in slot, sealed
// with k, to dst.
func appendStored(dst []byte, k *seal.Keys, slot string, c vault.Chain) ([]byte, error) {
	dst = append(dst, chainMagic...)
	if !c.HasCurrent {
		dst = binary.AppendUvarint(dst, 0)
		return k.AppendSealHistory(dst, slot, c)
	}
	dst = binary.AppendUvarint(dst, uint64(seal.SealedSize(c.Current)))
	start := len(dst)
	dst, err := k.AppendSeal(dst, slot, c.Current)
	if err != nil {
		return nil, err
	}
	if len(dst)-start != seal.SealedSize(c.Current) {
		return nil, fmt.Errorf("a sealed record is not the size it was said to be")
	}
	return k.AppendSealHistory(dst, slot, c)
}

// sealChain is what the key of c in slot holds, sealed with the keys in
// use, bounded by what a write may store. Callers hold e.mu.
func (e *Vault) sealChain(slot string, c vault.Chain) ([]byte, error) {
	size := chainSizeHint(c)
	out, err := appendStored(make([]byte, 0, size), e.k, slot, c)
	if err != nil {
		return nil, err
	}
	if len(out) > maxStoredWrite {
		return nil, fmt.Errorf("%s: record %s: its versions would take %d bytes, more than one etcd write holds (%d): lower max_versions or destroy earlier versions", e.where(), slot, len(out), maxStoredWrite)
	}
	return out, nil
}

// chainSizeHint is about the size of what appendStored makes of c.
func chainSizeHint(c vault.Chain) int {
	n := len(chainMagic) + binary.MaxVarintLen64 + seal.HistorySize(c)
	if c.HasCurrent {
		n += seal.SealedSize(c.Current)
	}
	return n
}

// openCurrent opens the current record of a stored value of slot with k;
// name, when not "", is the name it must carry. ok is false when the name
// has no current record (soft-deleted or erased). Callers hold e.mu: the
// keys' buffers are shared.
func (e *Vault) openCurrent(k *seal.Keys, slot, name string, kv *mvccpb.KeyValue) (r vault.Record, ok bool, err error) {
	cur, _, err := splitKV(kv)
	if err == nil && cur == nil {
		return vault.Record{}, false, nil
	}
	if err == nil && len(cur) > maxEtcdRecord {
		err = fmt.Errorf("larger than %d bytes", maxEtcdRecord)
	}
	if err == nil {
		r, err = k.Open(slot, bytes.Clone(cur))
	}
	if err == nil && name != "" && r.Name != name {
		err = seal.ErrAuth
	}
	if err != nil {
		return vault.Record{}, false, fmt.Errorf("%s: record %s: %w", e.where(), slot, err)
	}
	return r, true, nil
}

// openChain opens everything the stored value of slot holds with k: both
// parts, checked against each other (seal.Keys.OpenChain); name, when not
// "", is the name it must be. Callers hold e.mu.
func (e *Vault) openChain(k *seal.Keys, slot, name string, kv *mvccpb.KeyValue) (vault.Chain, error) {
	cur, hist, err := splitKV(kv)
	var c vault.Chain
	if err == nil {
		c, err = k.OpenChain(slot, cloneOrNil(cur), cloneOrNil(hist))
	}
	if err == nil && name != "" && c.Name != name {
		err = seal.ErrAuth
	}
	if err != nil {
		return vault.Chain{}, fmt.Errorf("%s: record %s: %w", e.where(), slot, err)
	}
	return c, nil
}

// splitKV is splitStored of kv's value, bounded in size.
func splitKV(kv *mvccpb.KeyValue) (current, history []byte, err error) {
	if len(kv.Value) > maxEtcdValue {
		return nil, nil, fmt.Errorf("larger than %d bytes", maxEtcdValue)
	}
	return splitStored(kv.Value)
}

func cloneOrNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}
