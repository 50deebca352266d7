//go:build !linux

package ctl

import (
	"os"

	"golang.org/x/term"
)

// hiddenLine shows the prompt (show) and reads one line without echo.
func hiddenLine(in *os.File, show func()) (string, error) {
	show()
	b, err := term.ReadPassword(int(in.Fd()))
	return string(b), err
}
