package inject

// fileParents are the directories a run's file directory may be made in:
// $TMPDIR, which macOS sets for each user to a directory of mode 0700 of
// theirs (under /var/folders). macOS has no memory-backed filesystem at
// hand, so the files are on disk, readable by that user alone. A $TMPDIR
// that is not the user's own (or /tmp, when it is unset) carries a warning.
func fileParents(getenv func(string) string) []parent {
	dir := tempDir(getenv)
	if privateDir(dir) {
		return []parent{{dir: dir}}
	}
	return []parent{{dir: dir, warning: "the --file values are on disk, in " + dir + ", which is not a directory of yours alone ($TMPDIR); they are removed when the command exits"}}
}
