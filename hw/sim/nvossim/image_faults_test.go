package nvossim_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

// stageImage uploads a 4 KiB image file over SFTP.
func (r *rig) stageImage(file string) {
	r.t.Helper()
	if _, err := r.mustSSH().Upload(r.ctx, bytes.NewReader(make([]byte, 4096)), nvossim.NOSImageDir+"/"+file, 4096); err != nil {
		r.t.Fatal(err)
	}
}

func TestFailedImageInstallLeavesThePartitions(t *testing.T) {
	r := start(t, nvossim.Config{})
	r.sw.SetSystemImage("nvos-25.01.1000", "nvos-24.12.0001", 2)
	r.sw.FailImageInstalls("not enough space")
	file := "nvos-amd64-25.02.3000.bin"
	r.stageImage(file)
	id, err := r.nv.InstallImage(r.ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	last, err := r.nv.WaitAction(r.ctx, id)
	if !errors.Is(err, nvue.ErrActionFailed) || last.Message() != "not enough space" {
		t.Fatalf("install: %+v, %v", last, err)
	}
	p1, p2, cur, next := r.sw.SystemImage()
	if p1 != "nvos-25.01.1000" || p2 != "nvos-24.12.0001" || cur != 2 || next != 2 || r.sw.Boots() != 0 {
		t.Errorf("after a failed install: %q %q current %d next %d, %d boots", p1, p2, cur, next, r.sw.Boots())
	}
}

// A long install reboot starts once the finished action was read, lasts
// the fault's window, then boots into the image with admin expired.
func TestLongImageRebootStartsAfterTheHandOffIsRead(t *testing.T) {
	r := start(t, nvossim.Config{})
	r.sw.LongImageReboots(500 * time.Millisecond)
	r.sw.ExpireAdminOnInstall(true)
	file := "nvos-amd64-25.02.3000.bin"
	r.stageImage(file)
	id, err := r.nv.InstallImage(r.ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the install to finish", func() bool {
		st, err := r.nv.Action(r.ctx, id)
		return err == nil && st.Phase() == nvue.PhaseRebooting
	})
	if r.sw.Boots() != 1 {
		t.Fatalf("%d boots after the hand-off was read, want 1", r.sw.Boots())
	}
	eventually(t, 5*time.Second, "the switch to go down", func() bool { return !r.sw.Reachable() })
	eventually(t, 5*time.Second, "the switch to come back", func() bool { return r.sw.Reachable() })
	if _, err := r.nv.Image(r.ctx); !errors.Is(err, nvue.ErrUnauthorized) {
		t.Errorf("after the install the configured login reads %v, want 401", err)
	}
	if _, _, cur, next := r.sw.SystemImage(); cur != 2 || next != 2 {
		t.Errorf("runs partition %d, next %d, want 2", cur, next)
	}
}
