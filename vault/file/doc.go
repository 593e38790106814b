// Package file is the embedded file vault (kind "file"): one file per
// vault, in the canonical layout format.go describes, rewritten whole on
// every change by temp file, fsync, rename and directory fsync, under a
// writer lock (write.go).
//
// Limits (bound.go): a write may make the file at most maxVaultFile
// (1 GiB) and is refused, unapproved and with nothing changed, past that;
// a read accepts maxVaultSlack (1 MiB) more, so that a vault already past
// the bound can still be opened and shrunk. A wrapped data key is at most
// seal.MaxWrapped (64 KiB).
package file
