package file

import "time"

// SlotOf exposes the slot id of name to the external tests, which need to
// know which line of the file holds which record.
func SlotOf(f *Vault, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.k.Slot(name)
}

// OpenByPages is Open reading every file by pages of pageSize bytes
// (pages.go), however small, for the conformance suite.
func OpenByPages(path, idPath string, now func() time.Time, pageSize int) (*Vault, error) {
	o := defaultOptions()
	o.paged = paging{from: 1, pageSize: pageSize, budget: maxPaged}
	return open(path, idPath, now, o)
}
