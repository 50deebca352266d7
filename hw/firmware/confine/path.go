package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// Path returns the real path (no symbolic links) of name inside root. A
// relative name is taken relative to root; an absolute name must already
// lie inside it. The named file need not exist, but its root must.
//
// Refused: an empty name, a NUL byte, the root itself, any ".." element
// (even one that would stay inside), an absolute name outside root, and a
// path whose existing part resolves outside root or through a dangling
// symbolic link (which a later create would follow wherever it points).
func Path(root, name string) (string, error) {
	_, real, err := realPath(root, name)
	return real, err
}

// realPath is Path that also returns the real path of root (Open opens
// the name through it).
func realPath(root, name string) (realRoot, real string, err error) {
	refuse := func(escape bool, format string, args ...any) error {
		return &Error{Name: name, Root: root, Reason: fmt.Sprintf(format, args...), escape: escape}
	}
	switch {
	case name == "":
		return "", "", refuse(false, "it is empty")
	case strings.ContainsRune(name, 0):
		return "", "", refuse(false, "it holds a NUL byte")
	}
	for _, el := range strings.FieldsFunc(name, isSeparator) {
		if el == ".." {
			return "", "", refuse(true, `it has a ".." element`)
		}
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", "", fmt.Errorf("confine: root %s: %w", root, err)
	}
	if realRoot, err = filepath.EvalSymlinks(absRoot); err != nil {
		return "", "", fmt.Errorf("confine: root %s: %w", root, err)
	}
	p := filepath.Clean(name)
	if !filepath.IsAbs(p) {
		p = filepath.Join(absRoot, p)
	}
	rel, ok := within(absRoot, p)
	if !ok {
		// An absolute name may spell the root by its real path.
		if rel, ok = within(realRoot, p); !ok {
			return "", "", refuse(true, "it lies outside the directory")
		}
	}
	if rel == "." {
		return "", "", refuse(false, "it names the directory itself")
	}
	real, err = resolve(realRoot, rel)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Name, e.Root = name, root
		}
		return "", "", err
	}
	return realRoot, real, nil
}

// resolve walks rel below realRoot one element at a time, following every
// symbolic link it meets and refusing one that leads outside realRoot or
// nowhere. Elements that do not exist yet are appended as they are.
func resolve(realRoot, rel string) (string, error) {
	cur := realRoot
	parts := strings.Split(rel, string(filepath.Separator))
	for i, part := range parts {
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...), nil
		}
		if err != nil {
			return "", fmt.Errorf("confine: %w", err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(next)
			if err != nil {
				return "", &Error{Reason: fmt.Sprintf("%s is a symbolic link that leads nowhere", hw.QuoteShort(filepath.Join(parts[:i+1]...))), escape: true}
			}
			if _, ok := within(realRoot, target); !ok {
				return "", &Error{Reason: fmt.Sprintf("%s is a symbolic link to outside the directory", hw.QuoteShort(filepath.Join(parts[:i+1]...))), escape: true}
			}
			next = target
		}
		cur = next
	}
	return cur, nil
}

// within reports whether p lies in or is dir, and p relative to dir.
func within(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

func isSeparator(r rune) bool { return r == '/' || r == filepath.Separator }

// Open opens name inside root for reading, with Path's rules. The file is
// opened through an os.Root on the real root directory, so a symbolic link
// swapped in between the check and the open cannot lead outside either.
func Open(root, name string) (*os.File, error) {
	realRoot, p, err := realPath(root, name)
	if err != nil {
		return nil, err
	}
	rel, ok := within(realRoot, p)
	if !ok {
		return nil, &Error{Name: name, Root: root, Reason: "it lies outside the directory", escape: true}
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, fmt.Errorf("confine: %w", err)
	}
	defer r.Close()
	f, err := r.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("confine: open %s in %s: %w", hw.QuoteShort(name), root, err)
	}
	return f, nil
}
