package platform

import (
	"context"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// SwitchAdmin is the NVOS administration of a switch tray: password
// rotation and factory resets (southbound §3.9, §3.10). Every method is one
// short exchange with the switch, logged in as the credentials it is given,
// so the caller decides which login each step uses; waits between steps are
// the caller's. Passwords are never logged or returned in errors.
type SwitchAdmin interface {
	// LoginNVUE reads /nvue_v1/system as cred: nil when NVUE accepts the
	// login (nvue.ErrUnauthorized when it refuses it).
	LoginNVUE(ctx context.Context, cred hw.Credentials) error
	// SaveConfig persists the running configuration, logged in as cred.
	SaveConfig(ctx context.Context, cred hw.Credentials) error
	// RotatePassword sets user's password to pw through an NVUE revision,
	// logged in as cred (nvue.Client.ChangePassword), and saves it.
	RotatePassword(ctx context.Context, cred hw.Credentials, user string, pw hw.Secret) error
	// ChangeExpiredPassword logs in over SSH as cred, whose password has
	// expired, and answers the forced change with pw.
	ChangeExpiredPassword(ctx context.Context, cred hw.Credentials, pw hw.Secret) error
	// LoginSSH authenticates over SSH as cred and disconnects, opening no
	// shell (a forced password change is left unanswered).
	LoginSSH(ctx context.Context, cred hw.Credentials) error
	// FactoryReset starts the NVOS factory reset, logged in as cred.
	FactoryReset(ctx context.Context, cred hw.Credentials) error
	// SDNFactoryReset starts the scale-up fabric's factory default and
	// waits, at most timeout, for the switch to accept it.
	SDNFactoryReset(ctx context.Context, timeout time.Duration) error
	// NMXController reads the fabric manager's cluster app.
	NMXController(ctx context.Context) (nvue.ClusterApp, error)
}

var _ SwitchAdmin = (*switchDevice)(nil)

// nvueAs is the switch's NVUE client logging in as cred.
func (s *switchDevice) nvueAs(cred hw.Credentials, what string) (*nvue.Client, error) {
	if s.nvue == nil {
		return nil, unsupported(s.cfg.ID, s.cfg.Type, what+" without a host endpoint")
	}
	return s.nvue.WithCredentials(cred)
}

func (s *switchDevice) LoginNVUE(ctx context.Context, cred hw.Credentials) error {
	c, err := s.nvueAs(cred, "NVUE login")
	if err != nil {
		return err
	}
	if _, err := c.System(ctx); err != nil {
		return fmt.Errorf("NVUE login of %s on %s: %w", cred.Username, s.cfg.ID, err)
	}
	return nil
}

func (s *switchDevice) SaveConfig(ctx context.Context, cred hw.Credentials) error {
	c, err := s.nvueAs(cred, "config save")
	if err != nil {
		return err
	}
	if err := c.SaveConfig(ctx, ""); err != nil {
		return fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	return nil
}

func (s *switchDevice) RotatePassword(ctx context.Context, cred hw.Credentials, user string, pw hw.Secret) error {
	c, err := s.nvueAs(cred, "password rotation")
	if err != nil {
		return err
	}
	if _, err := c.ChangePassword(ctx, user, pw); err != nil {
		return fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	return nil
}

// sshAs dials the switch host over SSH as cred.
func (s *switchDevice) sshAs(ctx context.Context, cred hw.Credentials, what string) (*sshsftp.Client, error) {
	if s.cfg.Host.Host() == "" {
		return nil, unsupported(s.cfg.ID, s.cfg.Type, what+" without a host endpoint")
	}
	ep := s.cfg.Host
	ep.Credentials = cred
	c, err := sshsftp.Dial(ctx, ep, s.ssh)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", what, s.cfg.ID, err)
	}
	return c, nil
}

func (s *switchDevice) ChangeExpiredPassword(ctx context.Context, cred hw.Credentials, pw hw.Secret) error {
	c, err := s.sshAs(ctx, cred, "expired password change")
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	return c.ChangeExpiredPassword(ctx, pw)
}

func (s *switchDevice) LoginSSH(ctx context.Context, cred hw.Credentials) error {
	c, err := s.sshAs(ctx, cred, "ssh login")
	if err != nil {
		return err
	}
	return c.Close()
}

func (s *switchDevice) FactoryReset(ctx context.Context, cred hw.Credentials) error {
	c, err := s.nvueAs(cred, "factory reset")
	if err != nil {
		return err
	}
	if _, err := c.FactoryReset(ctx); err != nil {
		return fmt.Errorf("factory reset of %s as %s: %w", s.cfg.ID, cred.Username, err)
	}
	return nil
}

func (s *switchDevice) SDNFactoryReset(ctx context.Context, timeout time.Duration) error {
	if s.nvue == nil {
		return unsupported(s.cfg.ID, s.cfg.Type, "SDN factory default without a host endpoint")
	}
	id, err := s.nvue.SDNFactoryReset(ctx)
	if err != nil {
		return fmt.Errorf("SDN factory default of %s: %w", s.cfg.ID, err)
	}
	if _, err := s.nvue.WaitActionFor(ctx, id, timeout); err != nil {
		return fmt.Errorf("SDN factory default of %s: %w", s.cfg.ID, err)
	}
	return nil
}

func (s *switchDevice) NMXController(ctx context.Context) (nvue.ClusterApp, error) {
	if s.nvue == nil {
		return nvue.ClusterApp{}, unsupported(s.cfg.ID, s.cfg.Type, "cluster read without a host endpoint")
	}
	a, err := s.nvue.ClusterApp(ctx, "nmx-controller")
	if err != nil {
		return nvue.ClusterApp{}, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	return a, nil
}
