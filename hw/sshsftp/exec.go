package sshsftp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

const (
	maxStdout     = 1 << 20
	maxStderr     = 64 << 10
	stderrExcerpt = 512
)

// capped keeps the first max bytes written to it (or the last, when
// keepTail), discarding the rest without failing the writer.
type capped struct {
	buf      bytes.Buffer
	max      int
	keepTail bool
}

// Write keeps what fits and reports the whole of p as written.
func (w *capped) Write(p []byte) (int, error) {
	n := len(p)
	if w.keepTail {
		w.buf.Write(p)
		if over := w.buf.Len() - w.max; over > 0 {
			w.buf.Next(over)
		}
		return n, nil
	}
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return n, nil
}

// Result is the output of a remote command (stdout capped at 1 MiB, the
// last 64 KiB of stderr).
type Result struct {
	Stdout []byte
	Stderr []byte
}

// Run executes cmd and waits for its exit status, within ctx and
// Options.CommandTimeout. A non-zero status, a signal or a missing status
// is an *ExitError (ErrExit) carrying the end of stderr; the Result is
// returned in every case where the command ran.
func (c *Client) Run(ctx context.Context, cmd string) (Result, error) {
	return c.run(ctx, cmd, nil, c.opts.CommandTimeout)
}

// RunFor is Run bounded by limit instead of Options.CommandTimeout, for a
// command known to take long (an installer).
func (c *Client) RunFor(ctx context.Context, cmd string, limit time.Duration) (Result, error) {
	return c.run(ctx, cmd, nil, limit)
}

// RunInput is Run with stdin fed to the command (its end closes the
// command's input): how a file reaches a host that has no SFTP server. It
// is bounded by Options.UploadTimeout instead of CommandTimeout.
func (c *Client) RunInput(ctx context.Context, cmd string, stdin io.Reader) (Result, error) {
	return c.run(ctx, cmd, stdin, c.opts.UploadTimeout)
}

func (c *Client) run(ctx context.Context, cmd string, stdin io.Reader, bound time.Duration) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var res Result
	stdout := &capped{max: maxStdout}
	stderr := &capped{max: maxStderr, keepTail: true}
	err := c.guard(ctx, 0, func() error {
		sess, err := c.conn.NewSession()
		if err != nil {
			return fmt.Errorf("%w: open session: %v", ErrConnect, err)
		}
		defer sess.Close()
		sess.Stdin, sess.Stdout, sess.Stderr = stdin, stdout, stderr
		return sess.Run(cmd)
	})
	res.Stdout, res.Stderr = stdout.buf.Bytes(), stderr.buf.Bytes()
	c.log.Debug().Str("host", c.host).Str("cmd", cmd).Err(err).Msg("ssh exec")
	if err == nil {
		return res, nil
	}
	excerpt := strings.TrimSpace(string(res.Stderr))
	if len(excerpt) > stderrExcerpt {
		excerpt = "…" + excerpt[len(excerpt)-stderrExcerpt:]
	}
	var ee *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case errors.As(err, &ee):
		xe := &ExitError{Command: cmd, Code: ee.ExitStatus(), Signal: ee.Signal(), Stderr: excerpt}
		if xe.Signal != "" {
			xe.Code = -1
		}
		return res, fmt.Errorf("on %s: %w", c.host, xe)
	case errors.As(err, &missing):
		return res, fmt.Errorf("on %s: %w", c.host, &ExitError{Command: cmd, Code: -1, Stderr: excerpt})
	}
	for _, own := range []error{ErrTimeout, ErrClosed, ErrConnect} {
		if errors.Is(err, own) {
			return res, fmt.Errorf("run %q on %s: %w", cmd, c.host, err)
		}
	}
	return res, fmt.Errorf("run %q on %s: %w: %v", cmd, c.host, ErrConnect, err)
}

// Output runs cmd and returns its trimmed standard output.
func (c *Client) Output(ctx context.Context, cmd string) (string, error) {
	res, err := c.Run(ctx, cmd)
	return strings.TrimSpace(string(res.Stdout)), err
}

// Quote single-quotes s for a POSIX shell.
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// FileExists runs `test -f '<path>' && echo ok`, RMS's staging check.
func (c *Client) FileExists(ctx context.Context, path string) (bool, error) {
	out, err := c.Output(ctx, "test -f "+Quote(path)+" && echo ok")
	var xe *ExitError
	if errors.As(err, &xe) && xe.Code == 1 {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return out == "ok", nil
}
