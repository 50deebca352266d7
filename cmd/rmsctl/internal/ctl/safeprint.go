package ctl

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rmsd/rmsd/hw"
)

// printable is s as rmsctl prints a name or id: unchanged when it holds
// nothing unsafe (hw.TextProblem), else Go-quoted, so that a control
// character, an escape sequence, a newline or a bidirectional override
// shows as its escape instead of acting on the terminal.
func printable(s string) string {
	if hw.TextProblem(s) == "" {
		return s
	}
	return strconv.Quote(s)
}

// safeWriter passes text on with every unsafe character (hw.UnsafeRune)
// but newline and tab written as an escape: \u001b for ESC, \u202e for a
// bidirectional override, \xff for a byte that is not UTF-8. rmsctl's
// line and table output goes through it: whatever rmsd relays from
// devices or callers, the terminal only ever receives printable text and
// line breaks. The escapes are valid JSON string escapes as well.
type safeWriter struct{ w io.Writer }

// Write writes p, escaped; it reports len(p) when the whole of it went
// out.
func (s safeWriter) Write(p []byte) (int, error) {
	if !needsEscape(p) {
		return s.w.Write(p)
	}
	n := len(p)
	var b strings.Builder
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, p[0])
		case r != '\n' && r != '\t' && hw.UnsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.Write(p[:size])
		}
		p = p[size:]
	}
	if _, err := io.WriteString(s.w, b.String()); err != nil {
		return 0, err
	}
	return n, nil
}

// needsEscape reports whether p holds anything safeWriter rewrites.
func needsEscape(p []byte) bool {
	if !utf8.Valid(p) {
		return true
	}
	for _, r := range string(p) {
		if r != '\n' && r != '\t' && hw.UnsafeRune(r) {
			return true
		}
	}
	return false
}
