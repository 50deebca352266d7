package nicflash

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// session is one SSH login on a host.
type session struct {
	c    *sshsftp.Client
	host hw.Endpoint
}

// dial logs in to host: its IP or name, on its port (22 when it has none).
func (f *Flasher) dial(ctx context.Context, host hw.Endpoint) (*session, error) {
	if host.Host() == "" || host.Credentials.Username == "" || host.Credentials.Password.IsZero() {
		return nil, fmt.Errorf("%w: the node's host_endpoint needs an address, a username and a password", ErrNoHost)
	}
	opts := f.SSH
	opts.Port = host.Port
	c, err := sshsftp.Dial(ctx, host, opts)
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", host.Host(), err)
	}
	return &session{c: c, host: host}, nil
}

func (s *session) close() { _ = s.c.Close() }

// run runs cmd within limit, as root through sudo -S when asked and the
// login is not root; it returns stdout.
func (s *session) run(ctx context.Context, cmd string, asRoot bool, limit time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var res sshsftp.Result
	var err error
	if asRoot && s.host.Credentials.Username != "root" {
		res, err = s.c.RunInput(ctx, "sudo -S -p '' "+cmd, strings.NewReader(s.host.Credentials.Password.Reveal()+"\n"))
	} else {
		res, err = s.c.RunFor(ctx, cmd, limit)
	}
	if err != nil {
		var xe *sshsftp.ExitError
		if errors.As(err, &xe) && asRoot && strings.Contains(strings.ToLower(xe.Stderr), "sudo") &&
			(strings.Contains(xe.Stderr, "incorrect password") || strings.Contains(xe.Stderr, "not in the sudoers") ||
				strings.Contains(xe.Stderr, "password is required")) {
			return "", fmt.Errorf("%w on %s: %s", ErrSudo, s.host.Host(), xe.Stderr)
		}
		return string(res.Stdout), err
	}
	return string(res.Stdout), nil
}
