package etcd

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"filippo.io/age"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/arca-secrets/arca/vault"
)

// Recipients implements vault.Keyed.
func (e *Vault) Recipients(ctx context.Context) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadHeader(ctx); err != nil {
		return nil, err
	}
	return slices.Clone(e.hdr.Recipients), nil
}

// SetRecipients implements vault.Keyed: the header is replaced only if it did not
// change since it was read.
func (e *Vault) SetRecipients(ctx context.Context, from []string, rs []age.Recipient) error {
	e.lockForBulk()
	defer e.mu.Unlock()
	ctx, cancel := e.deadline(ctx)
	defer cancel()
	if err := e.loadHeader(ctx); err != nil {
		return err
	}
	if !slices.Equal(e.hdr.Recipients, from) {
		return fmt.Errorf("%s: %w", e.where(), vault.ErrRecipientsChanged)
	}
	h, err := sealHeader(e.hdr.Format, e.k, rs, e.hdr.Chain)
	if err != nil {
		return err
	}
	return e.swapHeader(ctx, h, nil)
}

// swapHeader puts the header h in one transaction with extra, if the header
// and (when extra is given) the written marker are unchanged since read.
func (e *Vault) swapHeader(ctx context.Context, h []byte, extra []clientv3.Op, cmps ...clientv3.Cmp) error {
	var resp *clientv3.TxnResponse
	var tries int
	then := append([]clientv3.Op{clientv3.OpPut(e.headerKey(), string(h))}, extra...)
	err := e.do(ctx, func(ctx context.Context) error {
		tries++
		var err error
		resp, err = e.cli.Txn(ctx).If(append(cmps, e.headerUnchanged())...).Then(then...).
			Else(clientv3.OpGet(e.headerKey())).Commit()
		return err
	})
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if tries == 1 || len(kvs) == 0 || string(kvs[0].Value) != string(h) {
			return fmt.Errorf("%s %w", e.where(), errChanged)
		}
	}
	// It landed. What landed is read back by the next op, whose failure
	// to read it is that op's, not this one's.
	e.k, e.hdrRev = nil, 0
	return nil
}

// errChanged is a header or a vault that changed under a team op.
var errChanged = errors.New("changed while this ran; nothing was changed: run it again")
