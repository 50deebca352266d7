package ctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// pollEvery is how often a wait for the typed line looks at ctx.
const pollEvery = 100 // milliseconds

// hiddenLine turns the terminal's echo off, shows the prompt (show), and
// reads one line, then restores the terminal. Echo goes off before the
// prompt appears, so nothing typed in answer to it is ever echoed. The
// line discipline stays canonical (erasing works); Ctrl-C, which rmsctl
// turns into the end of ctx, ends the wait with ctx's error.
func hiddenLine(ctx context.Context, in *os.File, show func()) (string, error) {
	fd := int(in.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return "", fmt.Errorf("read the terminal's settings: %w", err)
	}
	quiet := *saved
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return "", fmt.Errorf("turn the terminal's echo off: %w", err)
	}
	defer func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, saved) }()
	show()
	// In canonical mode the terminal is readable once a whole line is.
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, pollEvery)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return "", err
		}
		break
	}
	buf := make([]byte, maxSecretBytes+1)
	n, err := in.Read(buf)
	if err != nil {
		return "", err
	}
	if n > maxSecretBytes {
		return "", fmt.Errorf("longer than %d bytes", maxSecretBytes)
	}
	return strings.TrimSuffix(string(buf[:n]), "\n"), nil
}
