package nicflash

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/hostsim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startHost runs a simulated compute host logging in user.
func startHost(t *testing.T, user string) *hostsim.Host {
	t.Helper()
	h, err := hostsim.New(hostsim.Config{Credentials: hw.UserPass(user, "host-secret")})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start("127.0.0.1", 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

func writeImage(t *testing.T, name, psid, version string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, hostsim.Image(psid, version), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func flasher() *Flasher {
	return &Flasher{SSH: sshsftp.Options{HostKey: sshsftp.AcceptAnyHostKey(), ConnectTimeout: 10 * time.Second},
		ReadyTimeout: 10 * time.Second, ReadyInterval: 10 * time.Millisecond}
}

func TestUpdateBurnsEveryCX7ThroughSudoAndRunsItAfterActivation(t *testing.T) {
	h := startHost(t, "ubuntu")
	ctx := context.Background()
	f := flasher()
	img := []Image{{Family: CX7, File: writeImage(t, "fw-ConnectX7-rel-28_41_1000.bin", "MT_0000000838", "28.41.1000")}}

	out, err := f.Update(ctx, h.Endpoint(), img, false, nil)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if len(out.Devices) != 4 || !out.Flashed() {
		t.Fatalf("want 4 flashed CX7 devices, got %+v", out.Devices)
	}
	for _, d := range out.Devices {
		if d.Status != StatusFlashed || d.PreviousVersion != "28.39.1002" || d.ExpectedVersion != "28.41.1000" {
			t.Errorf("device %+v", d)
		}
	}
	if burns := h.Burns(); len(burns) != 4 {
		t.Errorf("burns %v, want the four CX7 only", burns)
	}
	if files := h.Files(); len(files) != 0 {
		t.Errorf("staging directory left behind: %v", files)
	}
	for _, c := range h.Commands() {
		if strings.Contains(c, "host-secret") {
			t.Fatalf("password on a command line: %q", c)
		}
	}
	if err := f.Verify(ctx, h.Endpoint(), img, nil); !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("Verify before the power cycle: %v, want a version mismatch", err)
	}
	h.Activate()
	if err := f.WaitReady(ctx, h.Endpoint()); err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(ctx, h.Endpoint(), img, nil); err != nil {
		t.Fatalf("Verify after the power cycle: %v", err)
	}
	again, err := f.Update(ctx, h.Endpoint(), img, false, nil)
	if err != nil || again.Flashed() {
		t.Fatalf("second Update flashed again: %+v, %v", again, err)
	}
}

func TestUpdateRefusesAnImageNoDeviceFits(t *testing.T) {
	h := startHost(t, "root")
	img := []Image{{Family: BF3NIC, File: writeImage(t, "fw-BlueField-3.bin", "MT_9999999999", "32.41.1000")}}
	_, err := flasher().Update(context.Background(), h.Endpoint(), img, false, nil)
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "PSID MT_0000001093") {
		t.Fatalf("err = %v, want no image for the BF3 PSID", err)
	}
	if len(h.Burns()) != 0 {
		t.Fatal("a device was burned")
	}
}

func TestUpdateRetriesAFailedBurnOnce(t *testing.T) {
	h := startHost(t, "root")
	h.FailBurns(1)
	img := []Image{{Family: BF3NIC, File: writeImage(t, "fw-BlueField-3.bin", "MT_0000001093", "32.41.1000")}}
	if _, err := flasher().Update(context.Background(), h.Endpoint(), img, false, nil); err != nil {
		t.Fatalf("Update: %v", err)
	}
	h.FailBurns(2)
	img[0].File = writeImage(t, "fw-BlueField-3-b.bin", "MT_0000001093", "32.42.1000")
	if _, err := flasher().Update(context.Background(), h.Endpoint(), img, false, nil); !errors.Is(err, ErrFlash) {
		t.Fatalf("err = %v, want a burn failure after the retry", err)
	}
}

func TestUpdateNeedsHostCredentials(t *testing.T) {
	h := startHost(t, "root")
	ep := h.Endpoint()
	ep.Credentials = hw.Credentials{}
	img := []Image{{Family: CX7, File: writeImage(t, "fw.bin", "MT_0000000838", "1")}}
	if _, err := flasher().Update(context.Background(), ep, img, false, nil); !errors.Is(err, ErrNoHost) {
		t.Fatalf("err = %v", err)
	}
	img[0].File = writeImage(t, "fw.tgz", "MT_0000000838", "1")
	if _, err := flasher().Update(context.Background(), h.Endpoint(), img, false, nil); !errors.Is(err, ErrImage) {
		t.Fatalf("err = %v", err)
	}
}

func TestUpdateNeedsSudo(t *testing.T) {
	h, err := hostsim.New(hostsim.Config{Credentials: hw.UserPass("guest", "host-secret"), NoSudo: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start("127.0.0.1", 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	img := []Image{{Family: CX7, File: writeImage(t, "fw.bin", "MT_0000000838", "1")}}
	_, err = flasher().Update(context.Background(), h.Endpoint(), img, false, nil)
	if !errors.Is(err, ErrSudo) || !strings.Contains(err.Error(), "sudoers") || strings.Contains(err.Error(), "host-secret") {
		t.Fatalf("err = %v, want a sudo refusal without the password", err)
	}
}

func TestUpdateChecksTheProfilesDeviceCounts(t *testing.T) {
	h := startHost(t, "root")
	img := []Image{{Family: CX7, File: writeImage(t, "fw.bin", "MT_0000000838", "28.41.1000")}}
	_, err := flasher().Update(context.Background(), h.Endpoint(), img, false, Counts{CX7: 4, CX8: 0, BF3NIC: 2})
	if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "BF3_NIC expected 2, found 1") || strings.Contains(err.Error(), "CX7") {
		t.Fatalf("err = %v, want the BF3_NIC count named alone", err)
	}
	if len(h.Burns()) != 0 {
		t.Fatal("a device was burned")
	}
	if _, err := flasher().Update(context.Background(), h.Endpoint(), img, false, Counts{CX7: 4, BF3NIC: 1}); err != nil {
		t.Fatalf("matching counts: %v", err)
	}
}
