package download

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReapTempFiles removes the temporary files interrupted downloads of
// cluster member member left anywhere below root (firmware_dir), as
// upstream does at startup, and returns how many it removed: with member
// "" (a single rmsd) the untagged ones, otherwise only those tagged with
// MemberTag(member), so that the downloads other members sharing root
// run meanwhile keep their files. It follows no symbolic link. Run it
// before the member's own downloads start.
func ReapTempFiles(root, member string) (int, error) {
	pattern := tempPattern(MemberTag(member))
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
		if e.Type().IsRegular() && pattern.MatchString(e.Name()) {
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
