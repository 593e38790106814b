// Package file is the embedded file vault (kind "file"): one file per
// vault, in the canonical layout format.go describes, rewritten whole on
// every change by temp file, fsync, rename and directory fsync, under a
// writer lock (write.go). A line holds everything the vault keeps of one
// name, its chain (line.go): the current record a get reads alone, the
// generation at which the line last changed, which changes reads
// (history.go), and the sealed history part. Every commit marks the
// header with its generation and a random id, the newest 64 kept, and a
// changes cursor carries the mark of its generation (commits.go). Writes
// follow vault.Step.
//
// Limits (bound.go): a write may make the file at most maxVaultFile
// (1 GiB) and is refused, unapproved and with nothing changed, past that;
// a read accepts maxVaultSlack (1 MiB) more, so that a vault already past
// the bound can still be opened and shrunk. A wrapped data key is at most
// seal.MaxWrapped (64 KiB). A one-shot get of a file of pagedFrom (64 KiB)
// or more reads it by pages of pageSize (4 KiB), as its search touches them,
// and at most maxPaged (4 MiB) in all, past which it reads the file whole
// (pages.go).
package file
