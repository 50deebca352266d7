package hw

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// quoteLimit is how many characters of a caller's value an error quotes.
const quoteLimit = 64

// QuoteShort quotes s for an error message, clipped to its first 64
// characters and marked when clipped (with its full length), so that a
// caller's oversized value never makes an oversized message.
func QuoteShort(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= quoteLimit {
		return fmt.Sprintf("%q", s)
	}
	i, count := 0, 0
	for i = range s {
		if count == quoteLimit {
			break
		}
		count++
	}
	return fmt.Sprintf("%q… (%d characters)", s[:i], n)
}

// quoteList quotes the first max names (each clipped by QuoteShort) and
// counts the rest.
func quoteList(names []string, max int) string {
	var out []string
	for i, n := range names {
		if i == max {
			out = append(out, fmt.Sprintf("and %d more", len(names)-max))
			break
		}
		out = append(out, QuoteShort(n))
	}
	return strings.Join(out, ", ")
}
