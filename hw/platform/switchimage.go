package platform

import (
	"github.com/rmsd/rmsd/hw/pause"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// NOSImageDir is where NVOS looks for staged system image files.
const NOSImageDir = "/host/nos-images"

// MinSystemImageSize is the smallest file accepted as an NVOS image
// (upstream's sanity bound: anything smaller is not an image).
const MinSystemImageSize = 1024

// ErrImageTooSmall refuses, before any I/O, a system image file smaller
// than MinSystemImageSize.
var ErrImageTooSmall = errors.New("platform: NVOS image file too small")

// SystemImageUpload asks for one NVOS image file to be staged on a switch.
type SystemImageUpload struct {
	// Name is the file name on the switch, under NOSImageDir: made of
	// [A-Za-z0-9._-], not starting with a dot.
	Name string
	// Body and Size are the image's contents and byte count.
	Body io.Reader
	Size int64
}

// StagedImage says what staging did.
type StagedImage struct {
	Path string
	// Skipped is set when a file of the same size was already there.
	Skipped bool
	// ListedBefore and ListedAfter say whether NVUE listed the file under
	// /system/image/files before and after staging (informational).
	ListedBefore, ListedAfter bool
}

// SwitchImager installs NVOS system images on a switch tray (southbound
// §3.8). Each method is one short operation; the caller paces the waits
// between them.
type SwitchImager interface {
	// SystemImage reads the two NVOS partitions and which one runs now
	// and after the next boot.
	SystemImage(ctx context.Context) (nvue.ImageState, error)
	// UninstallOtherImage starts @uninstall of the non-current partition
	// and returns the NVUE action id.
	UninstallOtherImage(ctx context.Context) (string, error)
	// ImageAction reads an NVUE action of an image operation.
	ImageAction(ctx context.Context, id string) (nvue.ActionStatus, error)
	// StageSystemImage uploads u to NOSImageDir over SFTP, unless a file of
	// the same size is there, and checks that the file exists afterwards.
	StageSystemImage(ctx context.Context, u SystemImageUpload) (StagedImage, error)
	// InstallSystemImage starts a forced @install of a staged image file
	// and returns the NVUE action id.
	InstallSystemImage(ctx context.Context, name string) (string, error)
	// RecoverAdminPassword answers the forced password change NVOS shows
	// after an install reset the admin login to admin/admin: it logs in
	// over SSH as admin/admin, sets the node's configured password and
	// checks that a login with it works. It is only for a node whose host
	// user is admin.
	RecoverAdminPassword(ctx context.Context) error

	// ONIEVersion logs in to the switch's ONIE install environment (the
	// ONIE login of Deps) and returns its version: it answers only on a
	// switch without NVOS.
	ONIEVersion(ctx context.Context) (string, error)
	// StageONIEImage writes u to ONIEImageDir in ONIE (its shell has no
	// SFTP server: the image is streamed to `cat`) and checks its size.
	StageONIEImage(ctx context.Context, u SystemImageUpload) (string, error)
	// InstallFromONIE runs onie-nos-install on a staged image, for at most
	// limit, and returns the installer's last line; the switch then reboots
	// into NVOS.
	InstallFromONIE(ctx context.Context, path string, limit time.Duration) (string, error)
}

var _ SwitchImager = (*switchDevice)(nil)

// factoryAdmin is the login NVOS falls back to after an install or a
// factory reset.
const factoryAdmin = "admin"

// needHost refuses an image operation on a switch without a host endpoint.
func (s *switchDevice) needHost(what string) error {
	if s.nvue == nil {
		return unsupported(s.cfg.ID, s.cfg.Type, what+" without a host endpoint")
	}
	return nil
}

func (s *switchDevice) SystemImage(ctx context.Context) (nvue.ImageState, error) {
	if err := s.needHost("system image read"); err != nil {
		return nvue.ImageState{}, err
	}
	st, err := s.nvue.Image(ctx)
	if err != nil {
		return nvue.ImageState{}, fmt.Errorf("system image of %s: %w", s.cfg.ID, err)
	}
	return st, nil
}

func (s *switchDevice) UninstallOtherImage(ctx context.Context) (string, error) {
	if err := s.needHost("image uninstall"); err != nil {
		return "", err
	}
	id, err := s.nvue.UninstallImage(ctx)
	if err != nil {
		return "", fmt.Errorf("uninstall the other image of %s: %w", s.cfg.ID, err)
	}
	return id, nil
}

func (s *switchDevice) ImageAction(ctx context.Context, id string) (nvue.ActionStatus, error) {
	if err := s.needHost("image action read"); err != nil {
		return nvue.ActionStatus{}, err
	}
	st, err := s.nvue.Action(ctx, id)
	if err != nil {
		return nvue.ActionStatus{}, fmt.Errorf("image action %s of %s: %w", id, s.cfg.ID, err)
	}
	return st, nil
}

func (s *switchDevice) StageSystemImage(ctx context.Context, u SystemImageUpload) (StagedImage, error) {
	if err := s.needHost("image staging"); err != nil {
		return StagedImage{}, err
	}
	if !stagedFileName.MatchString(u.Name) {
		return StagedImage{}, fmt.Errorf("stage image on %s: %w: file name %q: only [A-Za-z0-9._-], no leading dot",
			s.cfg.ID, ErrInvalidFirmwareUpdate, u.Name)
	}
	if u.Body == nil || u.Size < MinSystemImageSize {
		return StagedImage{}, fmt.Errorf("stage image on %s: %w: %s has %d bytes, at least %d needed",
			s.cfg.ID, ErrImageTooSmall, u.Name, u.Size, MinSystemImageSize)
	}
	out := StagedImage{Path: NOSImageDir + "/" + u.Name}
	out.ListedBefore = s.imageListed(ctx, u.Name)
	c, err := sshsftp.Dial(ctx, s.cfg.Host, s.ssh)
	if err != nil {
		return out, fmt.Errorf("stage image on %s: %w", s.cfg.ID, err)
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	size, err := c.RemoteSize(ctx, out.Path)
	switch {
	case err == nil && size == u.Size:
		out.Skipped = true
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return out, fmt.Errorf("stage image on %s: %w", s.cfg.ID, err)
	default:
		if _, err := c.Upload(ctx, u.Body, out.Path, u.Size); err != nil {
			return out, fmt.Errorf("stage image on %s: %w", s.cfg.ID, err)
		}
	}
	ok, err := c.FileExists(ctx, out.Path)
	if err != nil {
		return out, fmt.Errorf("stage image on %s: check %s: %w", s.cfg.ID, out.Path, err)
	}
	if !ok {
		return out, fmt.Errorf("stage image on %s: %s is not there after the upload", s.cfg.ID, out.Path)
	}
	out.ListedAfter = s.imageListed(ctx, u.Name)
	return out, nil
}

// imageListed reports whether NVUE lists name among the staged image
// files; a failed read counts as not listed (the listing is informational).
func (s *switchDevice) imageListed(ctx context.Context, name string) bool {
	files, err := s.nvue.ImageFiles(ctx)
	if err != nil {
		return false
	}
	for _, f := range files {
		if f == name {
			return true
		}
	}
	return false
}

func (s *switchDevice) InstallSystemImage(ctx context.Context, name string) (string, error) {
	if err := s.needHost("image install"); err != nil {
		return "", err
	}
	id, err := s.nvue.InstallImage(ctx, name)
	if err != nil {
		return "", fmt.Errorf("install image %s on %s: %w", name, s.cfg.ID, err)
	}
	return id, nil
}

// adminLoginRetry bounds the login with the new password after a
// recovery (upstream: every 5 s for 60 s).
const (
	adminLoginRetry   = 5 * time.Second
	adminLoginTimeout = 60 * time.Second
)

func (s *switchDevice) RecoverAdminPassword(ctx context.Context) error {
	if err := s.needHost("admin password recovery"); err != nil {
		return err
	}
	want := s.cfg.Host.Credentials
	if want.Username != factoryAdmin || want.Password.IsZero() {
		return fmt.Errorf("recover the admin password of %s: %w: the host user is not admin", s.cfg.ID, hw.ErrUnsupported)
	}
	factory := s.cfg.Host
	factory.Credentials = hw.Credentials{Username: factoryAdmin, Password: hw.NewSecret(factoryAdmin)}
	c, err := sshsftp.Dial(ctx, factory, s.ssh)
	if err != nil {
		return fmt.Errorf("recover the admin password of %s: %w", s.cfg.ID, err)
	}
	err = c.ChangeExpiredPassword(ctx, want.Password)
	_ = c.Close() // Close always succeeds
	if err != nil {
		return fmt.Errorf("recover the admin password of %s: %w", s.cfg.ID, err)
	}
	// The new password must now log in; the switch may take a moment.
	interval := min(adminLoginRetry, s.reboot.ProbeInterval)
	deadline := time.Now().Add(adminLoginTimeout)
	for {
		c, err := sshsftp.Dial(ctx, s.cfg.Host, s.ssh)
		if err == nil {
			_ = c.Close() // Close always succeeds
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("recover the admin password of %s: log in with the new password: %w", s.cfg.ID, err)
		}
		_ = pause.For(ctx, interval) // an ended ctx is seen at the top of the loop
	}
}

// ValidImageName reports whether name may be staged as an NVOS image file:
// [A-Za-z0-9._-], not starting with a dot, at most 255 bytes.
func ValidImageName(name string) bool { return stagedFileName.MatchString(name) }
