package sshsftp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"

	"github.com/rmsd/rmsd/hw"
)

// Client is one authenticated SSH connection to a switch host. It is safe
// for concurrent use. A timeout closes the connection (the only way to
// abandon a hung remote operation); later calls then fail with ErrClosed.
type Client struct {
	opts Options
	host string // ip:port, for messages
	user string
	log  zerolog.Logger
	conn *ssh.Client

	mu     sync.Mutex
	broken error // why the connection was closed, nil while usable
}

// Dial connects to ep's IP (host name only if no IP is set) on
// Options.Port and logs in with ep's user name and password.
func Dial(ctx context.Context, ep hw.Endpoint, opts Options) (*Client, error) {
	opts = opts.withDefaults()
	cb, err := opts.HostKey.callback()
	if err != nil {
		return nil, fmt.Errorf("ssh dial %s: %w", ep.Host(), err)
	}
	addr := net.JoinHostPort(ep.Host(), strconv.Itoa(opts.Port))
	user := ep.Credentials.Username
	cfg := &ssh.ClientConfig{
		User:            user,
		Auth:            []ssh.AuthMethod{ssh.Password(ep.Credentials.Password.Reveal())},
		HostKeyCallback: cb,
		Timeout:         opts.ConnectTimeout,
	}
	ctx, cancel := context.WithTimeout(ctx, opts.ConnectTimeout)
	defer cancel()
	d := net.Dialer{}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ssh dial %s: %w: %v", addr, ErrTimeout, err)
		}
		return nil, fmt.Errorf("ssh dial %s: %w: %v", addr, ErrConnect, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	cc, chans, reqs, err := ssh.NewClientConn(raw, addr, cfg)
	timedOut := !stop()
	if err != nil {
		_ = raw.Close()
		switch {
		case errors.Is(err, ErrHostKey):
			return nil, fmt.Errorf("ssh dial %s: %w", addr, err)
		case timedOut:
			return nil, fmt.Errorf("ssh dial %s: %w: handshake did not finish", addr, ErrTimeout)
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("ssh login %s@%s: %w", user, addr, ErrAuth)
		}
		return nil, fmt.Errorf("ssh handshake %s: %w: %v", addr, ErrConnect, err)
	}
	if timedOut {
		_ = cc.Close()
		return nil, fmt.Errorf("ssh dial %s: %w: handshake finished too late", addr, ErrTimeout)
	}
	opts.Logger.Debug().Str("host", addr).Str("user", user).Str("host_key_policy", opts.HostKey.String()).Msg("ssh connected")
	return &Client{opts: opts, host: addr, user: user, log: opts.Logger, conn: ssh.NewClient(cc, chans, reqs)}, nil
}

// Close closes the connection.
func (c *Client) Close() error {
	c.breakConn(ErrClosed)
	return nil
}

// breakConn records why the connection ends and closes it; the first
// reason wins.
func (c *Client) breakConn(reason error) {
	c.mu.Lock()
	first := c.broken == nil
	if first {
		c.broken = reason
	}
	c.mu.Unlock()
	if first {
		_ = c.conn.Close()
	}
}

// brokenErr returns why the connection was closed, or nil.
func (c *Client) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// guard runs fn; if ctx ends or step (when > 0) elapses first, the
// connection is closed with the matching reason and that reason is
// returned instead of fn's error.
func (c *Client) guard(ctx context.Context, step time.Duration, fn func() error) error {
	if err := c.brokenErr(); err != nil {
		return err
	}
	stopCtx := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			c.breakConn(ErrTimeout)
			return
		}
		c.breakConn(fmt.Errorf("%w: %v", ErrClosed, ctx.Err()))
	})
	defer stopCtx()
	if step > 0 {
		t := time.AfterFunc(step, func() {
			c.breakConn(fmt.Errorf("%w: %w: no progress for %s", ErrTimeout, ErrStalled, step))
		})
		defer t.Stop()
	}
	err := fn()
	if b := c.brokenErr(); b != nil && err != nil {
		return b
	}
	return err
}
