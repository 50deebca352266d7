//go:build !linux

package ctl

import (
	"context"
	"os"

	"golang.org/x/term"
)

// hiddenLine shows the prompt (show) and reads one line without echo.
// Where it is not Linux, a Ctrl-C ends the wait only once a line is in.
func hiddenLine(ctx context.Context, in *os.File, show func()) (string, error) {
	show()
	b, err := term.ReadPassword(int(in.Fd()))
	if err == nil {
		err = ctx.Err()
	}
	return string(b), err
}
