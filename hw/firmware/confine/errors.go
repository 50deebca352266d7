package confine

import (
	"errors"
	"fmt"
	"unicode/utf8"
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
	return fmt.Sprintf("file name %s %s %s: %s", quote(e.Name), verb, e.Root, e.Reason)
}

// Is matches the sentinel of the refusal's kind.
func (e *Error) Is(target error) bool {
	if e.escape {
		return target == ErrEscapes
	}
	return target == ErrInvalidName
}

// quoteLimit is how many characters of a caller's name an error quotes.
const quoteLimit = 64

// quote quotes s clipped to quoteLimit characters, so an oversized name
// never makes an oversized message.
func quote(s string) string {
	if utf8.RuneCountInString(s) <= quoteLimit {
		return fmt.Sprintf("%q", s)
	}
	n, i := 0, 0
	for i = range s {
		if n == quoteLimit {
			break
		}
		n++
	}
	return fmt.Sprintf("%q… (%d characters)", s[:i], utf8.RuneCountInString(s))
}
