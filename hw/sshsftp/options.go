package sshsftp

import (
	"fmt"
	"net"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Defaults (upstream values).
const (
	DefaultPort                  = 22
	DefaultConnectTimeout        = 30 * time.Second
	DefaultCommandTimeout        = 30 * time.Second
	DefaultUploadTimeout         = 3600 * time.Second // [workflows] sftp_upload_timeout_seconds
	DefaultStepTimeout           = 30 * time.Second   // [workflows] sftp_step_timeout_seconds
	DefaultPasswordChangeTimeout = 90 * time.Second
	DefaultChunkSize             = 512 << 10
)

type hostKeyMode int

const (
	hostKeyUnset hostKeyMode = iota
	hostKeyAny
	hostKeyFixed
	hostKeyKnownHosts
)

// HostKeyPolicy decides which server host keys are accepted. Its zero
// value is deliberately unusable: Dial fails with ErrNoHostKeyPolicy, so
// every caller chooses between AcceptAnyHostKey (upstream RMS behaviour),
// FixedHostKey and KnownHostsFile.
type HostKeyPolicy struct {
	mode hostKeyMode
	key  ssh.PublicKey
	file string
}

// AcceptAnyHostKey accepts every host key, as upstream RMS does for NVOS
// switches (whose keys change on reinstall). It does not protect against a
// man in the middle.
func AcceptAnyHostKey() HostKeyPolicy { return HostKeyPolicy{mode: hostKeyAny} }

// FixedHostKey accepts only key.
func FixedHostKey(key ssh.PublicKey) HostKeyPolicy {
	return HostKeyPolicy{mode: hostKeyFixed, key: key}
}

// KnownHostsFile accepts the keys an OpenSSH known_hosts file lists for
// the host.
func KnownHostsFile(path string) HostKeyPolicy {
	return HostKeyPolicy{mode: hostKeyKnownHosts, file: path}
}

// String names the policy.
func (p HostKeyPolicy) String() string {
	switch p.mode {
	case hostKeyAny:
		return "accept-any"
	case hostKeyFixed:
		return "fixed:" + ssh.FingerprintSHA256(p.key)
	case hostKeyKnownHosts:
		return "known-hosts:" + p.file
	}
	return "unset"
}

func (p HostKeyPolicy) callback() (ssh.HostKeyCallback, error) {
	wrap := func(cb ssh.HostKeyCallback) ssh.HostKeyCallback {
		return func(host string, remote net.Addr, key ssh.PublicKey) error {
			if err := cb(host, remote, key); err != nil {
				return fmt.Errorf("%w: %s for %s: %v", ErrHostKey, ssh.FingerprintSHA256(key), host, err)
			}
			return nil
		}
	}
	switch p.mode {
	case hostKeyAny:
		return ssh.InsecureIgnoreHostKey(), nil //nolint:gosec // explicit AcceptAnyHostKey policy
	case hostKeyFixed:
		if p.key == nil {
			return nil, fmt.Errorf("%w: fixed policy without a key", ErrNoHostKeyPolicy)
		}
		return wrap(ssh.FixedHostKey(p.key)), nil
	case hostKeyKnownHosts:
		cb, err := knownhosts.New(p.file)
		if err != nil {
			return nil, fmt.Errorf("%w: read known_hosts %s: %v", ErrNoHostKeyPolicy, p.file, err)
		}
		return wrap(cb), nil
	}
	return nil, ErrNoHostKeyPolicy
}

// Options configure a Client. Durations left at zero take the defaults
// above; HostKey has no default (see HostKeyPolicy).
type Options struct {
	// Port is the SSH port (default 22). The endpoint's own Port is the
	// NVUE/HTTPS port and is not used here.
	Port    int
	HostKey HostKeyPolicy

	// ConnectTimeout bounds TCP connect plus SSH handshake and login.
	ConnectTimeout time.Duration
	// CommandTimeout bounds Run when ctx has no earlier deadline.
	CommandTimeout time.Duration
	// UploadTimeout bounds a whole SFTP upload.
	UploadTimeout time.Duration
	// StepTimeout bounds each SFTP step (open, one chunk write, close,
	// stat): a transfer that stalls longer fails with ErrStalled.
	StepTimeout time.Duration
	// PasswordChangeTimeout bounds ChangeExpiredPassword.
	PasswordChangeTimeout time.Duration
	// ChunkSize is the SFTP write unit (default 512 KiB).
	ChunkSize int

	// Logger receives connection and transfer logs; never passwords.
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&o.ConnectTimeout, DefaultConnectTimeout)
	set(&o.CommandTimeout, DefaultCommandTimeout)
	set(&o.UploadTimeout, DefaultUploadTimeout)
	set(&o.StepTimeout, DefaultStepTimeout)
	set(&o.PasswordChangeTimeout, DefaultPasswordChangeTimeout)
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	return o
}
