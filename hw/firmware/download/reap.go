package download

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReapTempFiles removes the temporary files interrupted downloads left
// anywhere below root (firmware_dir), as upstream does at startup, and
// returns how many it removed. It follows no symbolic link. Run it before
// any download starts.
func ReapTempFiles(root string) (int, error) {
	n := 0
	var errs []error
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll
			}
			errs = append(errs, err)
			return nil
		}
		if e.Type().IsRegular() && tempPattern.MatchString(e.Name()) {
			if err := os.Remove(p); err != nil {
				errs = append(errs, err)
				return nil
			}
			n++
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("download: reap temporary files: %w", errors.Join(errs...))
	}
	return n, nil
}
