package simssh

import (
	"errors"
	"strings"
)

// SplitWords splits a command line the way a POSIX shell would for the
// commands the simulators answer: ' and " quote (no escapes inside), a
// backslash escapes the next byte, blanks separate words and a bare && is a
// word of its own.
func SplitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, errors.New("unterminated quote")
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '\\' && i+1 < len(line):
			cur.WriteByte(line[i+1])
			i++
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '&' && i+1 < len(line) && line[i+1] == '&' && !inWord:
			words = append(words, "&&")
			i++
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
