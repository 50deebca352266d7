package platform

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw/sshsftp"
)

// ONIEImageDir is where an NVOS image is staged in ONIE: its RAM disk.
const ONIEImageDir = "/tmp"

// dialONIE logs in to the host's ONIE with the configured ONIE login.
func (s *switchDevice) dialONIE(ctx context.Context, what string) (*sshsftp.Client, error) {
	if err := s.needHost(what); err != nil {
		return nil, err
	}
	ep := s.cfg.Host
	ep.Credentials = s.onie
	c, err := sshsftp.Dial(ctx, ep, s.ssh)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: log in to ONIE: %w", what, s.cfg.ID, err)
	}
	return c, nil
}

func (s *switchDevice) ONIEVersion(ctx context.Context) (string, error) {
	c, err := s.dialONIE(ctx, "ONIE probe")
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	v, err := c.Output(ctx, "onie-sysinfo -v")
	if err != nil {
		return "", fmt.Errorf("ONIE probe on %s: %w", s.cfg.ID, err)
	}
	if v == "" {
		return "", fmt.Errorf("ONIE probe on %s: onie-sysinfo -v printed nothing", s.cfg.ID)
	}
	return v, nil
}

func (s *switchDevice) StageONIEImage(ctx context.Context, u SystemImageUpload) (string, error) {
	if !stagedFileName.MatchString(u.Name) {
		return "", fmt.Errorf("stage image in ONIE on %s: %w: file name %q: only [A-Za-z0-9._-], no leading dot",
			s.cfg.ID, ErrInvalidFirmwareUpdate, u.Name)
	}
	if u.Body == nil || u.Size < MinSystemImageSize {
		return "", fmt.Errorf("stage image in ONIE on %s: %w: %s has %d bytes, at least %d needed",
			s.cfg.ID, ErrImageTooSmall, u.Name, u.Size, MinSystemImageSize)
	}
	c, err := s.dialONIE(ctx, "stage image in ONIE")
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	path := ONIEImageDir + "/" + u.Name
	if _, err := c.RunInput(ctx, "cat > "+sshsftp.Quote(path), u.Body); err != nil {
		return "", fmt.Errorf("stage image in ONIE on %s: %w", s.cfg.ID, err)
	}
	out, err := c.Output(ctx, "wc -c < "+sshsftp.Quote(path))
	if err != nil {
		return "", fmt.Errorf("stage image in ONIE on %s: check %s: %w", s.cfg.ID, path, err)
	}
	if n, err := strconv.ParseInt(out, 10, 64); err != nil || n != u.Size {
		return "", fmt.Errorf("stage image in ONIE on %s: %s has %q bytes after the upload, want %d", s.cfg.ID, path, out, u.Size)
	}
	return path, nil
}

func (s *switchDevice) InstallFromONIE(ctx context.Context, path string, limit time.Duration) (string, error) {
	c, err := s.dialONIE(ctx, "install from ONIE")
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	res, err := c.RunFor(ctx, "onie-nos-install "+sshsftp.Quote(path), limit)
	out := strings.TrimSpace(string(res.Stdout))
	if err != nil {
		return "", fmt.Errorf("install %s from ONIE on %s: %w", path, s.cfg.ID, err)
	}
	lines := strings.Split(out, "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}
