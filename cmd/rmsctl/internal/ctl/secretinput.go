package ctl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// maxSecretBytes bounds a secret read from a file or standard input.
const maxSecretBytes = 4096

// secretSource is where a command reads a secret it must never take as a
// flag value (which any user could read in ps): a file, standard input, or
// an interactive prompt that does not echo.
type secretSource struct {
	file  string
	stdin bool
}

// read returns the secret: the first line of the file or of standard
// input (its line ending removed), else, when standard input is a
// terminal, what is typed at two no-echo prompts on stderr, which must
// agree. what names the secret in prompts and errors; the secret itself is
// never part of an error.
func (s secretSource) read(ctx context.Context, streams Streams, what string) (string, error) {
	switch {
	case s.file != "" && s.stdin:
		return "", usageError("name one of --%s-file and --%s-stdin", what, what)
	case s.file != "":
		f, err := os.Open(s.file)
		if err != nil {
			return "", usageError("--%s-file: %w", what, err)
		}
		defer f.Close()
		return firstLine(f, "--"+what+"-file "+s.file)
	case s.stdin:
		return firstLine(streams.In, "standard input")
	}
	in, ok := streams.In.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return "", usageError("give the new %s with --%s-file FILE or --%s-stdin (standard input is not a terminal to prompt on)", what, what, what)
	}
	first, err := prompt(ctx, in, streams.Err, "New "+what+": ")
	if err != nil {
		return "", err
	}
	again, err := prompt(ctx, in, streams.Err, "Retype new "+what+": ")
	if err != nil {
		return "", err
	}
	if first != again {
		return "", usageError("the two %ss typed differ", what)
	}
	if first == "" {
		return "", usageError("empty %s", what)
	}
	return first, nil
}

// prompt asks on out and reads one line from the terminal in, which does
// not echo it: echo is off before the prompt shows (hiddenLine). The end
// of ctx (Ctrl-C) ends the wait: interrupted, nothing sent.
func prompt(ctx context.Context, in *os.File, out io.Writer, text string) (string, error) {
	line, err := hiddenLine(ctx, in, func() { fmt.Fprint(out, text) })
	fmt.Fprintln(out)
	if ctx.Err() != nil {
		return "", &exitError{code: ExitInterrupted, err: errors.New("the prompt was interrupted: nothing was sent")}
	}
	if err != nil {
		return "", usageError("read from the terminal: %w", err)
	}
	return line, nil
}

// firstLine is the first line of r without its line ending; empty is an
// error.
func firstLine(r io.Reader, from string) (string, error) {
	br := bufio.NewReader(io.LimitReader(r, maxSecretBytes+1))
	line, err := br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", usageError("read %s: %w", from, err)
	}
	if len(line) > maxSecretBytes {
		return "", usageError("%s: the first line is longer than %d bytes", from, maxSecretBytes)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", usageError("%s: the first line is empty", from)
	}
	return line, nil
}
