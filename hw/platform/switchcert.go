package platform

import (
	pausepkg "github.com/rmsd/rmsd/hw/pause"

	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rmsd/rmsd/hw/sshsftp"
)

// CertFile is one file of mTLS material to copy to a switch. Data may be a
// private key: it is written over SFTP and never logged or quoted.
type CertFile struct {
	Path string
	Data []byte
	Mode os.FileMode
}

// CommandOutcome is what one NVOS CLI command over SSH gave.
type CommandOutcome struct {
	Command string
	Output  string // stdout and stderr, trimmed
	Err     error  // nil when the command exited 0
}

// SwitchCertifier installs mTLS material on a switch tray and binds NVOS
// services to it, or moves services back to plain TLS (southbound §3.11).
// Each method is one short exchange; the caller orders the stages.
type SwitchCertifier interface {
	// PrepareCertDir creates each directory in dirs, in order, with
	// install -d -m 751 over SSH.
	PrepareCertDir(ctx context.Context, dirs ...string) error
	// CopyCertFile writes f over SFTP, checks it with test -f and sets its
	// mode with chmod.
	CopyCertFile(ctx context.Context, f CertFile) error
	// ImportCACertificate and ImportCertificate run the NVUE @import of
	// material already on the switch and wait for the action to end.
	ImportCACertificate(ctx context.Context, id, uri string) error
	ImportCertificate(ctx context.Context, id, publicURI, privateURI string) error
	// BindServiceTLS binds a /nvue_v1/system service ("api",
	// "gnmi-server") to certID and caID in an applied, saved revision.
	BindServiceTLS(ctx context.Context, service, certID, caID string) error
	// Certificate reads an imported certificate or CA certificate.
	Certificate(ctx context.Context, id string, ca bool) (map[string]any, error)
	// ServiceMTLS reads a service's mTLS settings.
	ServiceMTLS(ctx context.Context, service string) (map[string]any, error)
	// RunCLI runs commands over one SSH connection, pause apart, and
	// reports each; it stops early only when the connection fails.
	RunCLI(ctx context.Context, pause time.Duration, commands ...string) ([]CommandOutcome, error)
	// UpdateAppManager runs one @update of a cluster app's manager setting
	// (leaf "certificate", "ca-certificate" or "encryption") and waits for
	// the action to end.
	UpdateAppManager(ctx context.Context, app, leaf string, params map[string]any) error
	// AppManagerTLS reads a cluster app manager's mTLS settings: its
	// "cert-id", "cacert-id" and "encryption" ("" when the switch gives
	// none).
	AppManagerTLS(ctx context.Context, app string) (map[string]string, error)
}

var _ SwitchCertifier = (*switchDevice)(nil)

// certSSH dials the switch host over SSH for a certificate step.
func (s *switchDevice) certSSH(ctx context.Context, what string) (*sshsftp.Client, error) {
	if err := s.needHost(what); err != nil {
		return nil, err
	}
	c, err := sshsftp.Dial(ctx, s.cfg.Host, s.ssh)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", what, s.cfg.ID, err)
	}
	return c, nil
}

func (s *switchDevice) PrepareCertDir(ctx context.Context, dirs ...string) error {
	c, err := s.certSSH(ctx, "certificate directory")
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	for _, d := range dirs {
		if _, err := c.Run(ctx, "install -d -m 751 "+sshsftp.Quote(d)); err != nil {
			return fmt.Errorf("create %s on %s: %w", d, s.cfg.ID, err)
		}
	}
	return nil
}

func (s *switchDevice) CopyCertFile(ctx context.Context, f CertFile) error {
	c, err := s.certSSH(ctx, "certificate copy")
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	if _, err := c.Upload(ctx, bytes.NewReader(f.Data), f.Path, int64(len(f.Data))); err != nil {
		return fmt.Errorf("copy %s to %s: %w", f.Path, s.cfg.ID, err)
	}
	ok, err := c.FileExists(ctx, f.Path)
	switch {
	case err != nil:
		return fmt.Errorf("check %s on %s: %w", f.Path, s.cfg.ID, err)
	case !ok:
		return fmt.Errorf("check %s on %s: %w", f.Path, s.cfg.ID, errors.New("not there after the copy"))
	}
	if _, err := c.Run(ctx, fmt.Sprintf("chmod %o %s", f.Mode.Perm(), sshsftp.Quote(f.Path))); err != nil {
		return fmt.Errorf("chmod %s on %s: %w", f.Path, s.cfg.ID, err)
	}
	return nil
}

// waitImport follows an import action to its end.
func (s *switchDevice) waitImport(ctx context.Context, what, id string, start func() (string, error)) error {
	if err := s.needHost(what); err != nil {
		return err
	}
	action, err := start()
	if err != nil {
		return fmt.Errorf("%s %s on %s: %w", what, id, s.cfg.ID, err)
	}
	if _, err := s.nvue.WaitAction(ctx, action); err != nil {
		return fmt.Errorf("%s %s on %s: %w", what, id, s.cfg.ID, err)
	}
	return nil
}

func (s *switchDevice) ImportCACertificate(ctx context.Context, id, uri string) error {
	return s.waitImport(ctx, "import CA certificate", id, func() (string, error) { return s.nvue.ImportCACertificate(ctx, id, uri) })
}

func (s *switchDevice) ImportCertificate(ctx context.Context, id, publicURI, privateURI string) error {
	return s.waitImport(ctx, "import certificate", id, func() (string, error) {
		return s.nvue.ImportCertificate(ctx, id, publicURI, privateURI)
	})
}

func (s *switchDevice) BindServiceTLS(ctx context.Context, service, certID, caID string) error {
	if err := s.needHost("mTLS binding"); err != nil {
		return err
	}
	if err := s.nvue.BindServiceTLS(ctx, service, certID, caID); err != nil {
		return fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	return nil
}

func (s *switchDevice) Certificate(ctx context.Context, id string, ca bool) (map[string]any, error) {
	if err := s.needHost("certificate read"); err != nil {
		return nil, err
	}
	m, err := s.nvue.Certificate(ctx, id, ca)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	return m, nil
}

func (s *switchDevice) ServiceMTLS(ctx context.Context, service string) (map[string]any, error) {
	if err := s.needHost("mTLS read"); err != nil {
		return nil, err
	}
	m, err := s.nvue.ServiceMTLS(ctx, service)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	return m, nil
}

func (s *switchDevice) RunCLI(ctx context.Context, pause time.Duration, commands ...string) ([]CommandOutcome, error) {
	c, err := s.certSSH(ctx, "NVOS CLI")
	if err != nil {
		return nil, err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	out := make([]CommandOutcome, 0, len(commands))
	for i, cmd := range commands {
		if i > 0 && pause > 0 {
			if err := pausepkg.For(ctx, pause); err != nil {
				return out, err
			}
		}
		res, err := c.Run(ctx, cmd)
		o := CommandOutcome{Command: cmd, Output: string(bytes.TrimSpace(append(res.Stdout, res.Stderr...))), Err: err}
		var xe *sshsftp.ExitError
		if err != nil && !errors.As(err, &xe) {
			return append(out, o), fmt.Errorf("%s on %s: %w", cmd, s.cfg.ID, err)
		}
		out = append(out, o)
	}
	return out, nil
}

func (s *switchDevice) UpdateAppManager(ctx context.Context, app, leaf string, params map[string]any) error {
	return s.waitImport(ctx, "update manager "+leaf+" of", app, func() (string, error) {
		return s.nvue.UpdateClusterAppManager(ctx, app, leaf, params)
	})
}

func (s *switchDevice) AppManagerTLS(ctx context.Context, app string) (map[string]string, error) {
	if err := s.needHost("cluster app manager read"); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range []struct{ leaf, key string }{{"certificate", "cert-id"}, {"ca-certificate", "cacert-id"}, {"encryption", "encryption"}} {
		m, err := s.nvue.ClusterAppManagerLeaf(ctx, app, l.leaf)
		if err != nil {
			return out, fmt.Errorf("read %s manager %s on %s: %w", app, l.leaf, s.cfg.ID, err)
		}
		out[l.key], _ = m[l.key].(string)
	}
	return out, nil
}
