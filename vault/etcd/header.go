package etcd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"filippo.io/age"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arca-secrets/arca/vault/internal/seal"
)

// The formats of the shared vault's header. A vault whose names may hold
// chains (stored.go) has format 2, which arca before history refuses (it
// would take a chain for a record that fails to authenticate, and its rm
// of one would erase the name's every version); a vault of format 1 holds
// records alone, is read as it is, and is moved to format 2 by its first
// write (upgradeHeader). Create and a rekey write format 2.
const (
	etcdFormat   = "arca-etcd-vault/2"
	etcdFormatV1 = "arca-etcd-vault/1"
)

// header is a shared vault's header: what every backend seals (the wrapped
// data key, recipients and MAC), then the vault's key history (pin.go),
// which the MAC covers too.
type header struct {
	seal.Header
	Chain []link `json:"chain,omitempty"`
}

// sealHeader makes the header of format of a shared vault with keys k,
// wrapped to recipients, with its key history, as stored: JSON.
func sealHeader(format string, k *seal.Keys, recipients []age.Recipient, chain []link) ([]byte, error) {
	sh, err := seal.NewHeader(format, k, recipients)
	if err != nil {
		return nil, err
	}
	h := header{Header: sh, Chain: chain}
	h.MAC = etcdMAC(k, h)
	return json.Marshal(h)
}

// etcdMAC authenticates a shared vault's header: format, vault id,
// recipients and the key history, so that whoever cannot unwrap the data
// key cannot cut or change the history either.
func etcdMAC(k *seal.Keys, h header) string {
	chain, _ := json.Marshal(h.Chain)
	sum := sha256.Sum256(chain)
	return k.HeaderMAC(h.Format+"\x00chain:"+hex.EncodeToString(sum[:]), h.Recipients)
}

// errNoVault is a prefix that holds no vault yet: reads find it empty, the
// first write creates it.
var errNoVault = errors.New("no vault here yet (arca init, or a first put, creates it)")

// loadHeader reads the header. Callers hold e.mu.
func (e *Vault) loadHeader(ctx context.Context) error {
	var resp *clientv3.GetResponse
	err := e.do(ctx, func(ctx context.Context) error {
		var err error
		resp, err = e.cli.Get(ctx, e.headerKey())
		return err
	})
	if err != nil {
		return err
	}
	return e.adoptHeader(resp.Kvs)
}

// adoptHeader makes kvs (the header key's range) the header in use: the
// data key is unwrapped again only when it changed, and the MAC is checked
// every time.
func (e *Vault) adoptHeader(kvs []*mvccpb.KeyValue) error {
	if len(kvs) == 0 {
		return fmt.Errorf("%s: %w", e.where(), errNoVault)
	}
	kv := kvs[0]
	if len(kv.Value) > maxEtcdHeader {
		return fmt.Errorf("%s is corrupt: header is larger than %d bytes", e.where(), maxEtcdHeader)
	}
	var h header
	dec := json.NewDecoder(bytes.NewReader(kv.Value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil || dec.More() {
		return fmt.Errorf("%s is corrupt: header is not valid JSON", e.where())
	}
	vaultID, err := hex.DecodeString(h.VaultID)
	// Commits are the file vault's commit marks: no shared vault has them.
	if (h.Format != etcdFormat && h.Format != etcdFormatV1) || err != nil || len(vaultID) != seal.VaultIDSize || h.Commits != nil {
		return fmt.Errorf("%s is corrupt: unknown header format or vault id", e.where())
	}
	k := e.k
	if k == nil || h.VaultID != e.hdr.VaultID || !bytes.Equal(h.DataKey, e.hdr.DataKey) {
		if k, err = h.Keys(e.ids); err != nil {
			return fmt.Errorf("%s: %w", e.where(), err)
		}
	}
	if etcdMAC(k, h) != h.MAC {
		return fmt.Errorf("%s is corrupt: header fails to authenticate", e.where())
	}
	// Whenever the header is not the one this handle holds, it must trace
	// to this machine's pin, which another process may have moved on
	// (a rollback can bring back this handle's own, older key).
	if k != e.k || kv.ModRevision != e.hdrRev {
		if err := e.checkPin(h, k); err != nil {
			return err
		}
	}
	e.hdr, e.hdrRev, e.k = h, kv.ModRevision, k
	return nil
}

// adoptNewer is adoptHeader for a header read without e.mu held (a get's):
// one older than the header in use (another op adopted a later one
// meanwhile) is left, not adopted, and the caller reads again with the
// header in use. Callers hold e.mu.
func (e *Vault) adoptNewer(kvs []*mvccpb.KeyValue) error {
	if len(kvs) > 0 && e.k != nil && kvs[0].ModRevision <= e.hdrRev {
		return nil
	}
	return e.adoptHeader(kvs)
}

// read runs ops (built from the header in use) in one transaction guarded
// by the header's mod revision: when the header moved, the transaction
// returns it instead, it is adopted, and ops run again. Callers hold e.mu.
func (e *Vault) read(ctx context.Context, bulk bool, ops func() []clientv3.Op) (*clientv3.TxnResponse, error) {
	if e.k == nil {
		if err := e.loadHeader(ctx); err != nil {
			return nil, err
		}
	}
	for range 3 {
		var resp *clientv3.TxnResponse
		try := e.do
		if bulk {
			try = e.doBulk
		}
		err := try(ctx, func(ctx context.Context) error {
			var err error
			resp, err = e.cli.Txn(ctx).If(e.headerUnchanged()).Then(ops()...).Else(clientv3.OpGet(e.headerKey())).Commit()
			return err
		})
		if err != nil {
			return nil, err
		}
		if resp.Succeeded {
			return resp, nil
		}
		if err := e.adoptHeader(resp.Responses[0].GetResponseRange().Kvs); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: the header keeps changing; try again", e.where())
}

func (e *Vault) headerUnchanged() clientv3.Cmp {
	return clientv3.Compare(clientv3.ModRevision(e.headerKey()), "=", e.hdrRev)
}

// deadline bounds one op, retries included.
func (e *Vault) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.timeout)
}

// attemptTimeout bounds one round trip of a point op (one record, the
// header, a lock), so a request stuck on a member that lost its leader is
// sent again, perhaps to another, well before the op's deadline.
const attemptTimeout = 500 * time.Millisecond

// do runs one etcd call, trying again with backoff while the cluster cannot
// answer (no leader, a member down) until ctx's deadline. An error that
// retrying cannot help comes back at once. Each try gets attemptTimeout.
func (e *Vault) do(ctx context.Context, call func(context.Context) error) error {
	return e.retry(ctx, attemptTimeout, call)
}

// doBulk is do for calls that move many records (list, check, rekey): a try
// may take half the op's deadline (at least 2 s), so a member that hangs
// still leaves time to ask another.
func (e *Vault) doBulk(ctx context.Context, call func(context.Context) error) error {
	return e.retry(ctx, max(2*time.Second, e.timeout/2), call)
}

// retry runs call until it succeeds, fails for good or ctx ends; each try
// gets per (0: no bound of its own). The first try that goes unanswered
// has the members probed beside the tries that follow (startProbe): settings
// that cannot work end the op as soon as the probe says so, in words, and
// whatever else it found goes with a "did not answer in time".
func (e *Vault) retry(ctx context.Context, per time.Duration, call func(context.Context) error) error {
	backoff := 20 * time.Millisecond
	var p *probeRun
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if per > 0 {
			actx, cancel = context.WithTimeout(ctx, per)
		}
		uncut := p.cut(cancel)
		err := call(actx)
		uncut()
		cancel()
		if err == nil {
			return nil
		}
		if stop := p.verdict(); stop != nil {
			return fmt.Errorf("%s: %w", e.where(), stop)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: the cluster did not answer in time (%v): %w", e.where(), e.timeout, late(err, p.found()))
		}
		if !retryable(err) {
			return fmt.Errorf("%s: %w", e.where(), e.explain(err, e.prefix))
		}
		if p == nil && unreached(err) {
			p = e.startProbe(ctx, err)
		}
		if stop := p.sleep(ctx, backoff); stop != nil {
			return fmt.Errorf("%s: %w", e.where(), stop)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: the cluster did not answer in time (%v): %w", e.where(), e.timeout, late(err, p.found()))
		}
		backoff = min(2*backoff, 400*time.Millisecond)
	}
}

// retryable reports whether err is the cluster being unable to answer for
// now.
func retryable(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true // this attempt's deadline, not the op's
	}
	code, msg := status.Code(err), err.Error()
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	}
	switch code {
	case codes.Unavailable, codes.DeadlineExceeded:
		return true
	case codes.ResourceExhausted:
		return strings.Contains(msg, "too many requests") // not "database space exceeded"
	case codes.Unknown:
		// A member without a leader may give up on its own deadline and
		// say so only in words.
		return strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "leader")
	}
	return false
}
