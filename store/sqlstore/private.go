package sqlstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// privateMode is the mode of the database file and of SQLite's -wal and
// -shm files beside it: they hold every job, the firmware catalogue and
// the sealed node credentials, so only rmsd's user may read them.
const privateMode = 0o600

// createPrivate creates the database file at path with privateMode when it
// does not exist yet, before SQLite opens it: SQLite then creates the -wal
// and -shm files with the database file's mode.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, privateMode)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

// makePrivate narrows the database file and its -wal and -shm files to
// privateMode where a group or other permission bit is set (a database
// created by an older rmsd, or by hand).
func makePrivate(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("check the mode of %s: %w", p, err)
		case fi.Mode().Perm()&0o077 == 0:
			continue
		}
		if err := os.Chmod(p, privateMode); err != nil {
			return fmt.Errorf("make %s private (mode %#o): %w", p, fi.Mode().Perm(), err)
		}
	}
	return nil
}
