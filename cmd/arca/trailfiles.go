package main

import "os"

// openTrail opens a trail file for reading; a missing one, or a
// directory, is a usage error naming it.
func openTrail(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("audit trail: %v", err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, usagef("audit trail %s is a directory: give the trail files in it", path)
	}
	return f, nil
}

// distinctTrails checks that each of files opens as a trail and that no
// file is given twice, under one name or two: its events would be read
// twice over.
func distinctTrails(files []string) error {
	seen := make([]os.FileInfo, 0, len(files))
	for _, path := range files {
		f, err := openTrail(path)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		f.Close()
		if err != nil {
			return usagef("audit trail: %v", err)
		}
		for j, other := range seen {
			if os.SameFile(fi, other) {
				return usagef("audit trail %s is given twice (as %s too)", path, files[j])
			}
		}
		seen = append(seen, fi)
	}
	return nil
}
