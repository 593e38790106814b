package etcd

// HoldIdle is holdIdle, for the external benchmarks.
const HoldIdle = holdIdle
