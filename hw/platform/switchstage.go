package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
)

// The switch RPCs that answer at once (southbound §3.7 "Separate switch
// RPCs", §3.8): one NVUE firmware component with its staged files, the
// NVOS image partitions with the staged images, and a firmware file staged
// without being installed. They sit beside the firmware update path
// (switchfw.go) and share its staging directories and SSH connection.

// MinStagedFileSize is the smallest file a switch is sent (upstream's
// rule: anything shorter is not a firmware file).
const MinStagedFileSize = 1024

// listedComponent matches the NVUE firmware components a caller may name,
// lower case (transceiver included, unlike an update).
var listedComponent = regexp.MustCompile(`^(bmc|bios|fpga|erot|transceiver|cpld|cpld[1-9][0-9]*)$`)

// componentNames is listedComponent for messages.
const componentNames = "bmc, bios, cpld, cpld<N>, erot, fpga, transceiver"

// ErrInvalidSwitchComponent is returned, before any I/O, for a component
// name listedComponent does not match.
var ErrInvalidSwitchComponent = errors.New("platform: invalid switch firmware component")

// CheckSwitchComponent returns the NVUE component name (lower case) for
// component, or ErrInvalidSwitchComponent.
func CheckSwitchComponent(component string) (string, error) {
	c := strings.ToLower(component)
	if !listedComponent.MatchString(c) {
		return "", &refusal{ErrInvalidSwitchComponent, fmt.Sprintf("switch firmware component %s is not one of %s", hw.QuoteShort(component), componentNames)}
	}
	return c, nil
}

// SwitchFirmwareStatus is one NVUE firmware component of a switch tray.
type SwitchFirmwareStatus struct {
	Component string // as asked, lower case (cpld)
	Name      string // the NVUE resource (CPLD1)
	// Version is the running version, "N/A" when NVUE reports none.
	Version string
	// Installed is the version active after the next power cycle, "" when
	// NVUE reports none.
	Installed string
	// Health is the component's health, "Unknown" when NVUE reports none.
	Health string
	// StagingDir is where files for the component are staged, Files the
	// names NVUE lists there (sorted).
	StagingDir string
	Files      []string
	// Doc is NVUE's document of the component (compact JSON), passed
	// through by ListSwitchFirmware.
	Doc string
}

// SwitchFirmwareReader reads one firmware component of a switch tray.
type SwitchFirmwareReader interface {
	SwitchFirmware(ctx context.Context, component string) (SwitchFirmwareStatus, error)
}

// SwitchImages is the NVOS image state of a switch tray.
type SwitchImages struct {
	// Current and Next are the partition running now and booting next:
	// 1 or 2, 0 when the switch names neither.
	Current, Next int
	// Partitions holds the build id installed on partition 1 and 2, ""
	// for an empty one.
	Partitions [2]string
	// Files are the image files staged under /host/nos-images, sorted.
	Files []ImageFile
	// FilesDoc is NVUE's listing of them (compact JSON, an object keyed by
	// file name), passed through by ListSwitchSystemImages.
	FilesDoc string
}

// ImageFile is an NVOS image file staged on a switch.
type ImageFile struct {
	Name string
	// BuildID is the build id the file installs (nvos-X.Y.Z), "" when its
	// name does not hold exactly one X.Y.Z.
	BuildID string
}

// SwitchImageReader reads the NVOS image state of a switch tray.
type SwitchImageReader interface {
	SwitchImages(ctx context.Context) (SwitchImages, error)
}

// FirmwareStage asks for a firmware file to be placed on a switch host
// without installing it.
type FirmwareStage struct {
	// Component is one of bmc, bios, cpld, cpld<N>, erot, fpga,
	// transceiver; it picks the staging directory.
	Component string
	// FileName is the name on the switch, used as is: [A-Za-z0-9._-], no
	// leading dot.
	FileName string
	Body     io.Reader
	// Size is Body's length, at least MinStagedFileSize.
	Size int64
}

// StagedFile is where a FirmwareStage put its file.
type StagedFile struct {
	Path string
	Size int64
	// Skipped: the switch already had a file of that name and size, so
	// nothing was sent.
	Skipped bool
}

// FirmwareStager stages firmware files on a switch host.
type FirmwareStager interface {
	StageFirmware(ctx context.Context, st FirmwareStage) (StagedFile, error)
}

// CheckFirmwareStage checks st before any I/O; a refusal wraps
// ErrInvalidFirmwareUpdate (or ErrInvalidSwitchComponent).
func CheckFirmwareStage(st FirmwareStage) error {
	if _, err := CheckSwitchComponent(st.Component); err != nil {
		return err
	}
	if !stagedFileName.MatchString(st.FileName) {
		return &refusal{ErrInvalidFirmwareUpdate, fmt.Sprintf("file name %s on the switch: only [A-Za-z0-9._-], no leading dot, at most 255 characters",
			hw.QuoteShort(st.FileName))}
	}
	if st.Body == nil {
		return &refusal{ErrInvalidFirmwareUpdate, "no file body"}
	}
	if st.Size < MinStagedFileSize {
		return &refusal{ErrInvalidFirmwareUpdate, fmt.Sprintf("the file is %d bytes; a firmware file is at least %d", st.Size, MinStagedFileSize)}
	}
	return nil
}

// refusal is an error that reads as its message and matches its sentinel,
// for refusals a caller passes on to people as they are.
type refusal struct {
	sentinel error
	msg      string
}

func (r *refusal) Error() string { return r.msg }
func (r *refusal) Unwrap() error { return r.sentinel }

// SwitchFirmware reads GET /nvue_v1/platform/firmware/<component> (cpld
// is CPLD1) and the files staged for it.
func (s *switchDevice) SwitchFirmware(ctx context.Context, component string) (SwitchFirmwareStatus, error) {
	if s.nvue == nil {
		return SwitchFirmwareStatus{}, unsupported(s.cfg.ID, s.cfg.Type, "firmware listing without a host endpoint")
	}
	c, err := CheckSwitchComponent(component)
	if err != nil {
		return SwitchFirmwareStatus{}, err
	}
	fc, err := s.nvue.FirmwareComponent(ctx, c)
	if err != nil {
		return SwitchFirmwareStatus{}, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	files, err := s.nvue.FirmwareFiles(ctx, c)
	if err != nil {
		return SwitchFirmwareStatus{}, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	out := SwitchFirmwareStatus{Component: c, Name: fc.Name, Version: fc.Actual, Installed: fc.Installed,
		Health: healthOrUnknown(fc.Health), StagingDir: stagingDir(c), Files: files, Doc: fc.Doc}
	if out.Version == "" {
		out.Version = unknownVersion
	}
	return out, nil
}

// SwitchImages reads GET /nvue_v1/system/image and .../image/files.
func (s *switchDevice) SwitchImages(ctx context.Context) (SwitchImages, error) {
	if s.nvue == nil {
		return SwitchImages{}, unsupported(s.cfg.ID, s.cfg.Type, "image listing without a host endpoint")
	}
	st, err := s.nvue.Image(ctx)
	if err != nil {
		return SwitchImages{}, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	files, doc, err := s.nvue.ImageFilesListing(ctx)
	if err != nil {
		return SwitchImages{}, fmt.Errorf("%s: %w", s.cfg.ID, err)
	}
	out := SwitchImages{Current: st.Current, Next: st.Next, Partitions: [2]string{st.Partition1, st.Partition2},
		Files: make([]ImageFile, 0, len(files)), FilesDoc: doc}
	for _, f := range files {
		build, _ := nvue.BuildIDFromFile(f) // a name without one version has no build id
		out.Files = append(out.Files, ImageFile{Name: f, BuildID: build})
	}
	return out, nil
}

// StageFirmware puts st's file at /host/fw-images/<component>/<name> over
// one SSH connection, as upstream pushes firmware: nothing is sent when
// the switch already has a file of that size (no mkdir: NVOS keeps the
// directories), and `test -f` must then find it.
func (s *switchDevice) StageFirmware(ctx context.Context, st FirmwareStage) (StagedFile, error) {
	if s.cfg.Host.Host() == "" {
		return StagedFile{}, unsupported(s.cfg.ID, s.cfg.Type, "firmware staging without a host endpoint")
	}
	if err := CheckFirmwareStage(st); err != nil {
		return StagedFile{}, fmt.Errorf("stage firmware on %s: %w", s.cfg.ID, err)
	}
	out := StagedFile{Path: stagingDir(strings.ToLower(st.Component)) + "/" + st.FileName, Size: st.Size}
	c, err := s.dialHost(ctx)
	if err != nil {
		return StagedFile{}, fmt.Errorf("stage %s on %s: %w", st.FileName, s.cfg.ID, err)
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	size, err := c.RemoteSize(ctx, out.Path)
	switch {
	case err == nil && size == st.Size:
		out.Skipped = true
	case err == nil || errors.Is(err, os.ErrNotExist):
		if _, err := c.Upload(ctx, st.Body, out.Path, st.Size); err != nil {
			return StagedFile{}, fmt.Errorf("stage %s on %s: %w", st.FileName, s.cfg.ID, err)
		}
	default:
		return StagedFile{}, fmt.Errorf("stage %s on %s: %w", st.FileName, s.cfg.ID, err)
	}
	ok, err := c.FileExists(ctx, out.Path)
	if err != nil {
		return StagedFile{}, fmt.Errorf("stage %s on %s: check: %w", st.FileName, s.cfg.ID, err)
	}
	if !ok {
		return StagedFile{}, fmt.Errorf("stage %s on %s: %s is not a file on the switch after the transfer", st.FileName, s.cfg.ID, out.Path)
	}
	return out, nil
}
