package ctl

import (
	"os"
	"strconv"

	"github.com/vbauerster/cupwriter"
)

// Fallbacks of a terminal that does not report its size (a pseudo-terminal
// nobody sized, a serial console): $COLUMNS and $LINES when set, else the
// classic 80x24.
const (
	fallbackColumns = 80
	fallbackLines   = 24
)

// sizedTerminal is the live view's terminal writer: mpb's own, except that
// a terminal without a size counts as $COLUMNS x $LINES (80x24) instead of
// zero, which would have mpb draw nothing, or an error, which would stop
// it drawing at all.
type sizedTerminal struct {
	*cupwriter.Writer
}

func newSizedTerminal(f *os.File) sizedTerminal {
	return sizedTerminal{cupwriter.New(f, false)}
}

// GetTermSize is the terminal's size, each side that it does not report
// from the environment or the fallbacks.
func (t sizedTerminal) GetTermSize() (width, height int, err error) {
	width, height, err = t.Writer.GetTermSize()
	if err != nil || width <= 0 {
		width = envSize("COLUMNS", fallbackColumns)
	}
	if err != nil || height <= 0 {
		height = envSize("LINES", fallbackLines)
	}
	return width, height, nil
}

// envSize is the positive number in the environment variable name, else
// fallback.
func envSize(name string, fallback int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return fallback
}
