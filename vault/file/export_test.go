package file

// SlotOf exposes the slot id of name to the external tests, which need to
// know which line of the file holds which record.
func SlotOf(f *Vault, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.k.Slot(name)
}
