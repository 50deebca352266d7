package platform_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
)

func imageUpload(name string, size int) platform.SystemImageUpload {
	return platform.SystemImageUpload{Name: name, Body: strings.NewReader(strings.Repeat("N", size)), Size: int64(size)}
}

// A staged image is not sent again while a file of its size is there; a
// file under 1 KiB or with a name NVOS would not take is refused before
// any I/O.
func TestSwitch_StageSystemImage(t *testing.T) {
	sw, dev := switchUnderTest(t)
	ctx := testCtx(t)
	im := dev.(platform.SwitchImager)
	first, err := im.StageSystemImage(ctx, imageUpload("nvos-amd64-25.11.1042.bin", 4096))
	if err != nil || first.Skipped || first.Path != "/host/nos-images/nvos-amd64-25.11.1042.bin" || first.ListedBefore || !first.ListedAfter {
		t.Fatalf("first staging: %+v, %v", first, err)
	}
	again, err := im.StageSystemImage(ctx, imageUpload("nvos-amd64-25.11.1042.bin", 4096))
	if err != nil || !again.Skipped || !again.ListedBefore {
		t.Fatalf("second staging: %+v, %v", again, err)
	}
	bigger, err := im.StageSystemImage(ctx, imageUpload("nvos-amd64-25.11.1042.bin", 8192))
	if data, _ := sw.File(first.Path); err != nil || bigger.Skipped || len(data) != 8192 {
		t.Fatalf("a file of another size: %+v, %v, %d bytes staged", bigger, err, len(data))
	}
	requests := sw.NVUERequests()
	if _, err := im.StageSystemImage(ctx, imageUpload("tiny-1.2.3.bin", 1023)); !errors.Is(err, platform.ErrImageTooSmall) {
		t.Errorf("a 1023-byte image: %v", err)
	}
	if _, err := im.StageSystemImage(ctx, imageUpload(".hidden-1.2.3.bin", 4096)); !errors.Is(err, platform.ErrInvalidFirmwareUpdate) {
		t.Errorf("a hidden file name: %v", err)
	}
	if sw.NVUERequests() != requests {
		t.Error("a refused image reached the switch")
	}
}

// Only an admin host login is recovered after an install.
func TestSwitch_RecoverAdminPasswordNeedsTheAdminUser(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	n.Host.Credentials = hw.UserPass("operator", "secret")
	err := device(t, fleetDeps(t, f), n).(platform.SwitchImager).RecoverAdminPassword(testCtx(t))
	if !errors.Is(err, hw.ErrUnsupported) {
		t.Errorf("recovery for operator: %v", err)
	}
}
