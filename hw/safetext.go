package hw

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// UnsafeRune reports whether r must never appear raw in an id, a log line
// or a terminal: control characters (C0, DEL, C1, which include escape
// sequences, NUL and newlines), the line and paragraph separators, and
// the bidirectional formatting characters that reorder what a reader
// sees (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
func UnsafeRune(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f':
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}

// TextProblem says why s is not safe to store or print as an id (invalid
// UTF-8, or an UnsafeRune, named by its code point and never shown raw),
// or "" when it is.
func TextProblem(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !isEncodedReplacement(s[i:]):
			return "is not valid UTF-8"
		case UnsafeRune(r):
			return fmt.Sprintf("contains the control or bidirectional formatting character %U", r)
		}
	}
	return ""
}

// isEncodedReplacement reports whether s starts with a real, encoded
// U+FFFD rather than a byte that failed to decode.
func isEncodedReplacement(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size == 3
}
