package ctl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// hiddenLine turns the terminal's echo off, shows the prompt (show), and
// reads one line, then restores the terminal. Echo goes off before the
// prompt appears, so nothing typed in answer to it is ever echoed. The
// line discipline stays canonical: erasing works, and Ctrl-C interrupts.
func hiddenLine(in *os.File, show func()) (string, error) {
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
	var line strings.Builder
	buf := make([]byte, 1)
	for line.Len() <= maxSecretBytes {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return line.String(), nil
			}
			line.WriteByte(buf[0])
		}
		if errors.Is(err, io.EOF) {
			return line.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("longer than %d bytes", maxSecretBytes)
}
