package keyring

import (
	"fmt"
	"os"
)

// checkPrivate refuses a key file that anyone but its owner may read or
// change (any group or other permission bit): the keys open every sealed
// credential in the store. The error gives the mode and the fix, never
// the contents.
func checkPrivate(path string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("keyring: key file %s: %w", path, err)
	}
	if mode := fi.Mode().Perm(); mode&0o077 != 0 {
		return fmt.Errorf("keyring: key file %s has mode %#o, so its group or others can read or change it; make it private to rmsd's user (chmod 600 %s)", path, mode, path)
	}
	return nil
}
