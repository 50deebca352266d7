package ctl

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// CheckCommandLine parses one documented `rmsctl ...` command line against
// the command tree, as the shell would split it (quotes, $(...), up to the
// first unquoted pipe, redirection, separator or comment) and cobra would
// parse it, without running anything: the command must exist and be
// runnable, and its flags, arguments and required flags must be right.
// A <placeholder> word counts as an argument.
func CheckCommandLine(line string) error {
	words, err := shellWords(line)
	if err != nil {
		return err
	}
	if len(words) == 0 || words[0] != "rmsctl" {
		return fmt.Errorf("not an rmsctl command line")
	}
	a := &app{streams: Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}}
	root := a.rootCommand()
	cmd, rest, err := root.Find(words[1:])
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
		return nil
	} else if err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if help, _ := cmd.Flags().GetBool("help"); help {
		return nil
	}
	if !cmd.Runnable() {
		return fmt.Errorf("%s is a group of commands, not a command", cmd.CommandPath())
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}

// shellWords splits a command line into words the way a POSIX shell
// would, up to the first unquoted |, ;, &, a redirection or a # comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	r := []rune(line)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '\\' && i+1 < len(r):
			i++
			if r[i] != '\n' {
				cur.WriteRune(r[i])
				inWord = true
			}
		case c == '\'':
			end := indexFrom(r, i+1, '\'')
			if end < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			cur.WriteString(string(r[i+1 : end]))
			inWord, i = true, end
		case c == '"':
			j := i + 1
			for ; j < len(r) && r[j] != '"'; j++ {
				if r[j] == '\\' && j+1 < len(r) {
					j++
				}
			}
			if j >= len(r) {
				return nil, errors.New(`unterminated " quote`)
			}
			cur.WriteString(string(r[i+1 : j]))
			inWord, i = true, j
		case c == '$' && i+1 < len(r) && r[i+1] == '(':
			depth, j := 0, i+1
			for ; j < len(r); j++ {
				if r[j] == '(' {
					depth++
				} else if r[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(r) {
				return nil, errors.New("unterminated $(")
			}
			cur.WriteString(string(r[i : j+1]))
			inWord, i = true, j
		case c == '<' && i+1 < len(r) && r[i+1] != ' ' && indexFrom(r, i+1, '>') > 0 && !strings.ContainsRune(string(r[i:indexFrom(r, i+1, '>')]), ' '):
			end := indexFrom(r, i+1, '>')
			cur.WriteString(string(r[i : end+1])) // a <placeholder>
			inWord, i = true, end
		case c == '|' || c == ';' || c == '&' || c == '<' || c == '>' || (c == '#' && !inWord):
			flush()
			return words, nil
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}

func indexFrom(r []rune, from int, c rune) int {
	for i := from; i < len(r); i++ {
		if r[i] == c {
			return i
		}
	}
	return -1
}
