package confine

import (
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
)

// Sentinels matched by every refusal (errors.Is).
var (
	// ErrEscapes: the name reaches outside its root (a ".." element, an
	// absolute path elsewhere, a symbolic link out).
	ErrEscapes = errors.New("confine: file name escapes its directory")
	// ErrInvalidName: the name is empty, holds a NUL byte or names the root
	// directory itself.
	ErrInvalidName = errors.New("confine: invalid file name")
)

// Error is a refused name. It matches ErrEscapes or ErrInvalidName.
type Error struct {
	Name   string // the name as given
	Root   string // the directory it had to stay in
	Reason string // why it was refused
	escape bool
}

// Error reads e.g. `file name "../x" escapes firmware: it has a ".." element`.
func (e *Error) Error() string {
	verb := "is refused in"
	if e.escape {
		verb = "escapes"
	}
	return fmt.Sprintf("file name %s %s %s: %s", hw.QuoteShort(e.Name), verb, e.Root, e.Reason)
}

// Is matches the sentinel of the refusal's kind.
func (e *Error) Is(target error) bool {
	if e.escape {
		return target == ErrEscapes
	}
	return target == ErrInvalidName
}
