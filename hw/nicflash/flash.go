package nicflash

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/pause"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// Defaults (upstream's flint.rs constants).
const (
	DefaultQueryTimeout  = 60 * time.Second
	DefaultFlashTimeout  = 20 * DefaultQueryTimeout
	DefaultReadyTimeout  = 6 * time.Minute
	DefaultReadyInterval = 15 * time.Second
)

// tempPrefix is the private directory's prefix on the host.
const tempPrefix = "/tmp/nvfwupd-flint."

// pendingReset is what flint says when the flash already holds the image.
const pendingReset = "the firmware image was already updated on flash, pending reset"

// Flasher runs the Flint workflow. Zero durations take the defaults.
type Flasher struct {
	// SSH is the login policy (host key, upload timeouts); its Port is
	// replaced by the host endpoint's.
	SSH           sshsftp.Options
	QueryTimeout  time.Duration
	FlashTimeout  time.Duration
	ReadyTimeout  time.Duration
	ReadyInterval time.Duration
}

func (f *Flasher) queryTimeout() time.Duration { return or(f.QueryTimeout, DefaultQueryTimeout) }
func (f *Flasher) flashTimeout() time.Duration { return or(f.FlashTimeout, DefaultFlashTimeout) }

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Image is one firmware file for a family. A family may have several
// (one per PSID).
type Image struct {
	Family Family
	File   string // local path
}

// Device is one adapter's outcome.
type Device struct {
	Component       string `json:"component"`
	Device          string `json:"device"`
	PSID            string `json:"psid"`
	PreviousVersion string `json:"previous_version"`
	ExpectedVersion string `json:"expected_version"`
	FirmwareFile    string `json:"firmware_file"`
	Status          string `json:"status"` // "flashed" or "already_up_to_date"
}

// Outcome is what Update did.
type Outcome struct {
	Devices []Device
}

// Flashed reports whether any device was burned.
func (o Outcome) Flashed() bool {
	for _, d := range o.Devices {
		if d.Status == StatusFlashed {
			return true
		}
	}
	return false
}

// Device statuses.
const (
	StatusFlashed  = "flashed"
	StatusUpToDate = "already_up_to_date"
)

// planned is a device with the image it takes.
type planned struct {
	family Family
	path   string
	dev    query
	image  staged
}

// staged is an image uploaded to the host.
type staged struct {
	family Family
	local  string
	remote string
	q      query
}

// Counts are the physical devices per family an inventory profile expects
// (flint_devices); a family it leaves out is not checked, 0 means none.
type Counts map[Family]int

// Update flashes images on host's devices (see the package doc). Devices
// already running their image's version are left alone unless force; a
// host whose devices do not match counts is refused before any burn.
func (f *Flasher) Update(ctx context.Context, host hw.Endpoint, images []Image, force bool, counts Counts) (Outcome, error) {
	if err := checkImages(images); err != nil {
		return Outcome{}, err
	}
	s, err := f.dial(ctx, host)
	if err != nil {
		return Outcome{}, err
	}
	defer s.close()
	if _, err := s.run(ctx, "command -v mst && command -v flint", false, f.queryTimeout()); err != nil {
		if errors.Is(err, sshsftp.ErrExit) {
			return Outcome{}, fmt.Errorf("%w on %s: mst and flint (MFT) must be installed", ErrHostTool, host.Host())
		}
		return Outcome{}, err
	}
	plan, cleanup, err := f.prepare(ctx, s, images, counts)
	defer cleanup()
	if err != nil {
		return Outcome{}, err
	}
	var todo []planned
	out := Outcome{}
	for _, p := range plan {
		// A device counts as current only when it runs the version; one
		// whose flash already holds it is burned again (flint answers
		// "pending reset") so that the activation still happens.
		if force || p.dev.running != p.image.q.flash {
			todo = append(todo, p)
			continue
		}
		out.Devices = append(out.Devices, result(p, StatusUpToDate))
	}
	failed := f.burnAll(ctx, s, todo)
	if len(failed) > 0 && ctx.Err() == nil {
		var retry []planned
		for _, p := range todo {
			if failed[p.path] != nil {
				retry = append(retry, p)
			}
		}
		failed = f.burnAll(ctx, s, retry)
	}
	if len(failed) > 0 {
		var msgs []string
		for _, p := range todo {
			if e := failed[p.path]; e != nil {
				msgs = append(msgs, fmt.Sprintf("%s (%s): %v", p.path, p.family, e))
			}
		}
		return Outcome{}, fmt.Errorf("%w after one retry: %s", ErrFlash, strings.Join(msgs, "; "))
	}
	for _, p := range todo {
		out.Devices = append(out.Devices, result(p, StatusFlashed))
	}
	sort.Slice(out.Devices, func(i, j int) bool { return out.Devices[i].Device < out.Devices[j].Device })
	return out, nil
}

func result(p planned, status string) Device {
	return Device{Component: string(p.family), Device: p.path, PSID: p.dev.psid, PreviousVersion: p.dev.running,
		ExpectedVersion: p.image.q.flash, FirmwareFile: filepath.Base(p.image.local), Status: status}
}

// Verify checks that every device of the images' families runs its
// image's version, and the device counts again.
func (f *Flasher) Verify(ctx context.Context, host hw.Endpoint, images []Image, counts Counts) error {
	if err := checkImages(images); err != nil {
		return err
	}
	s, err := f.dial(ctx, host)
	if err != nil {
		return err
	}
	defer s.close()
	plan, cleanup, err := f.prepare(ctx, s, images, counts)
	defer cleanup()
	if err != nil {
		return err
	}
	var off []string
	for _, p := range plan {
		if p.dev.running != p.image.q.flash {
			off = append(off, fmt.Sprintf("%s (%s) runs %s, expected %s", p.path, p.family, p.dev.running, p.image.q.flash))
		}
	}
	if len(off) > 0 {
		return fmt.Errorf("%w: %s", ErrVersionMismatch, strings.Join(off, "; "))
	}
	return nil
}

// WaitReady waits for the host OS to answer SSH and report a running
// system (systemctl is-system-running: running or degraded), polling every
// ReadyInterval up to ReadyTimeout. A rejected login or host key ends the
// wait at once: no reboot fixes those.
func (f *Flasher) WaitReady(ctx context.Context, host hw.Endpoint) error {
	ctx, cancel := context.WithTimeout(ctx, or(f.ReadyTimeout, DefaultReadyTimeout))
	defer cancel()
	var last error
	for {
		last = f.probe(ctx, host)
		if last == nil {
			return nil
		}
		if errors.Is(last, sshsftp.ErrAuth) || errors.Is(last, sshsftp.ErrHostKey) || errors.Is(last, ErrNoHost) {
			return last
		}
		if err := pause.For(ctx, or(f.ReadyInterval, DefaultReadyInterval)); err != nil {
			return fmt.Errorf("%w after %s: %w", ErrNotReady, or(f.ReadyTimeout, DefaultReadyTimeout), last)
		}
	}
}

func (f *Flasher) probe(ctx context.Context, host hw.Endpoint) error {
	s, err := f.dial(ctx, host)
	if err != nil {
		return err
	}
	defer s.close()
	out, err := s.run(ctx, "systemctl is-system-running", false, f.queryTimeout())
	state := strings.TrimSpace(out)
	if state == "running" || state == "degraded" {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("system state %q", state)
	}
	return fmt.Errorf("host %s not ready: %w", host.Host(), err)
}

// prepare starts MST, discovers the devices, stages the images and pairs
// them. cleanup removes the staging directory (always safe to call).
func (f *Flasher) prepare(ctx context.Context, s *session, images []Image, counts Counts) ([]planned, func(), error) {
	noop := func() {}
	qt := f.queryTimeout()
	devs, err := f.discover(ctx, s, images, counts)
	if err != nil {
		// Upstream's flint_discovery_recovery_allowed: what a power cycle
		// may cure, not a login, sudo or a missing tool.
		if !errors.Is(err, ErrSudo) && !errors.Is(err, sshsftp.ErrAuth) && !errors.Is(err, sshsftp.ErrHostKey) {
			err = fmt.Errorf("%w: %w", ErrDiscovery, err)
		}
		return nil, noop, err
	}
	out, err := s.run(ctx, "mktemp -d "+tempPrefix+"XXXXXX", false, qt)
	dir := strings.TrimSpace(out)
	if err != nil {
		return nil, noop, fmt.Errorf("mktemp: %w", err)
	}
	if rest := strings.TrimPrefix(dir, tempPrefix); !strings.HasPrefix(dir, tempPrefix) || rest == "" || strings.ContainsAny(rest, " \t\n/'") {
		return nil, noop, fmt.Errorf("%w: mktemp returned %q", ErrInvalidOutput, dir)
	}
	cleanup := func() {
		// A fresh context: the directory goes even when ctx ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), qt)
		defer cancel()
		_, _ = s.run(cctx, "rm -rf -- "+sshsftp.Quote(dir), false, qt)
	}
	var imgs []staged
	for _, im := range images {
		remote := dir + "/" + filepath.Base(im.File)
		if _, err := s.c.UploadFile(ctx, im.File, remote); err != nil {
			return nil, cleanup, fmt.Errorf("stage %s: %w", filepath.Base(im.File), err)
		}
		out, err := s.run(ctx, "flint -i "+sshsftp.Quote(remote)+" query", true, qt)
		if err != nil {
			return nil, cleanup, fmt.Errorf("flint query of image %s: %w", filepath.Base(im.File), err)
		}
		q, err := parseQuery(out, "image "+filepath.Base(im.File))
		if err != nil {
			return nil, cleanup, err
		}
		imgs = append(imgs, staged{family: im.Family, local: im.File, remote: remote, q: q})
	}
	plan, err := pair(devs, imgs)
	return plan, cleanup, err
}

// discover starts MST, lists the requested families' devices and queries
// each.
func (f *Flasher) discover(ctx context.Context, s *session, images []Image, counts Counts) ([]planned, error) {
	if _, err := s.run(ctx, "mst start", true, f.queryTimeout()); err != nil {
		return nil, fmt.Errorf("mst start: %w", err)
	}
	out, err := s.run(ctx, "mst status -v", true, f.queryTimeout())
	if err != nil {
		return nil, fmt.Errorf("mst status: %w", err)
	}
	all, err := parseMSTStatus(out)
	if err != nil {
		return nil, err
	}
	if err := checkCounts(counts, all); err != nil {
		return nil, err
	}
	want := map[Family]bool{}
	for _, im := range images {
		want[im.Family] = true
	}
	present := map[Family]bool{}
	var devs []planned
	for _, d := range all {
		if want[d.family] {
			present[d.family] = true
			devs = append(devs, planned{family: d.family, path: d.path})
		}
	}
	// Upstream's validate_discovered_families: a requested family must be
	// present, except that CX7 and CX8 requested together stand in for
	// each other (a tray carries one or the other).
	for fam := range want {
		alt := (fam == CX7 && want[CX8] && present[CX8]) || (fam == CX8 && want[CX7] && present[CX7])
		if !present[fam] && !alt {
			return nil, fmt.Errorf("%w: mst status reported no physical %s devices", ErrIncompatible, fam.mstType())
		}
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i].path < devs[j].path })
	for i := range devs {
		out, err := s.run(ctx, "flint -d "+sshsftp.Quote(devs[i].path)+" --yes query", true, f.queryTimeout())
		if err != nil {
			return nil, fmt.Errorf("flint query of %s: %w", devs[i].path, err)
		}
		if devs[i].dev, err = parseQuery(out, devs[i].path); err != nil {
			return nil, err
		}
	}
	return devs, nil
}

// pair gives each device the image of its family and PSID: one version per
// (family, PSID), and among equal images the preferred file kind.
func pair(devs []planned, imgs []staged) ([]planned, error) {
	type key struct {
		f    Family
		psid string
	}
	best := map[key]staged{}
	for _, im := range imgs {
		k := key{im.family, im.q.psid}
		cur, ok := best[k]
		switch {
		case !ok:
			best[k] = im
		case cur.q.flash != im.q.flash:
			return nil, fmt.Errorf("%w: %s PSID %s has candidate images with different versions", ErrIncompatible, im.family, im.q.psid)
		case preference(im.local) == preference(cur.local):
			return nil, fmt.Errorf("%w: %s PSID %s has several equally preferred images for version %s", ErrIncompatible, im.family, im.q.psid, im.q.flash)
		case preference(im.local) < preference(cur.local):
			best[k] = im
		}
	}
	for i, d := range devs {
		im, ok := best[key{d.family, d.dev.psid}]
		if !ok {
			return nil, fmt.Errorf("%w: no image fits device %s (%s) with PSID %s", ErrIncompatible, d.path, d.family, d.dev.psid)
		}
		devs[i].image = im
	}
	return devs, nil
}

// preference ranks image kinds (upstream's image_preference).
func preference(file string) int {
	l := strings.ToLower(file)
	switch {
	case strings.HasSuffix(l, ".signed.reduced.bin"):
		return 0
	case strings.HasSuffix(l, ".signed.pldm"):
		return 1
	case strings.HasSuffix(l, ".bin"):
		return 2
	}
	return 3
}

// checkImages refuses what could not be staged safely: no image, a base
// name outside [A-Za-z0-9._-], not .bin or .pldm, or twice the same.
func checkImages(images []Image) error {
	if len(images) == 0 {
		return fmt.Errorf("%w: no firmware image", ErrImage)
	}
	seen := map[string]bool{}
	for _, im := range images {
		base := filepath.Base(im.File)
		ok := base != "" && base != "." && base != "/"
		for _, r := range base {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				ok = false
			}
		}
		l := strings.ToLower(base)
		switch {
		case !ok:
			return fmt.Errorf("%w: %s: the file name may hold only letters, digits, '.', '_' and '-'", ErrImage, hw.QuoteShort(base))
		case !strings.HasSuffix(l, ".bin") && !strings.HasSuffix(l, ".pldm"):
			return fmt.Errorf("%w: %s: a Flint image must end in .bin or .pldm", ErrImage, hw.QuoteShort(base))
		case seen[base]:
			return fmt.Errorf("%w: two images are named %s", ErrImage, hw.QuoteShort(base))
		}
		seen[base] = true
	}
	return nil
}

// burnAll burns every planned device in parallel and returns the errors
// by device path (nil map entries absent).
func (f *Flasher) burnAll(ctx context.Context, s *session, todo []planned) map[string]error {
	var mu sync.Mutex
	failed := map[string]error{}
	var wg sync.WaitGroup
	for _, p := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := "flint -d " + sshsftp.Quote(p.path) + " --yes -i " + sshsftp.Quote(p.image.remote) + " b"
			_, err := s.run(ctx, cmd, true, f.flashTimeout())
			var xe *sshsftp.ExitError
			if errors.As(err, &xe) && strings.Contains(strings.ToLower(xe.Stderr), pendingReset) {
				err = nil // already on flash, waiting for the reset
			}
			if err != nil {
				mu.Lock()
				failed[p.path] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// checkCounts compares the physical devices of every family with what the
// inventory profile expects (upstream's validate_expected_device_counts).
func checkCounts(counts Counts, all []mstDevice) error {
	found := map[Family]int{}
	for _, d := range all {
		found[d.family]++
	}
	var off []string
	for _, fam := range []Family{CX7, CX8, BF3NIC} {
		if want, ok := counts[fam]; ok && found[fam] != want {
			off = append(off, fmt.Sprintf("%s expected %d, found %d", fam, want, found[fam]))
		}
	}
	if len(off) > 0 {
		return fmt.Errorf("%w: mst status physical-device counts do not match the expected inventory profile: %s",
			ErrIncompatible, strings.Join(off, "; "))
	}
	return nil
}
