package vault

import "context"

// epochKey carries a read epoch in a context.
type epochKey struct{}

// WithEpoch marks ctx with a read epoch: a number its caller changes
// whenever requests may have arrived since the last one (for arca serve,
// after each read from stdin). Within one epoch a Store may skip its check
// for other processes' writes after the first: every request of the epoch
// was sent before that check, so a write that finished before a request
// was sent is still seen, and one that finished later was concurrent with
// it. Epoch 0 means none: every call checks.
func WithEpoch(ctx context.Context, epoch uint64) context.Context {
	return context.WithValue(ctx, epochKey{}, epoch)
}

// EpochOf is the read epoch ctx carries; 0 when none.
func EpochOf(ctx context.Context) uint64 {
	e, _ := ctx.Value(epochKey{}).(uint64)
	return e
}
