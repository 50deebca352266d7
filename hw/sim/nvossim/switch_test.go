package nvossim_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fast is a time scale that turns the simulator's minutes into milliseconds.
const fast = 0.001

type rig struct {
	sw   *nvossim.Switch
	nv   *nvue.Client
	ctx  context.Context
	t    *testing.T
	port int
}

func start(t *testing.T, cfg nvossim.Config) *rig {
	t.Helper()
	if cfg.TimeScale == 0 {
		cfg.TimeScale = fast
	}
	sw, err := nvossim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	if err := sw.Start(ctx, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sw.Close(); err != nil {
			t.Error(err)
		}
	})
	nv, err := nvue.New(sw.Endpoint(), nvue.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	return &rig{sw: sw, nv: nv, ctx: ctx, t: t, port: sw.SSHPort()}
}

func (r *rig) ssh(cred hw.Credentials) (*sshsftp.Client, error) {
	ep := r.sw.Endpoint()
	ep.Credentials = cred
	c, err := sshsftp.Dial(r.ctx, ep, sshsftp.Options{Port: r.port, HostKey: sshsftp.FixedHostKey(r.sw.HostKey()), StepTimeout: 2 * time.Second})
	if err == nil {
		r.t.Cleanup(func() { _ = c.Close() })
	}
	return c, err
}

func (r *rig) mustSSH() *sshsftp.Client {
	r.t.Helper()
	c, err := r.ssh(r.sw.Endpoint().Credentials)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	sw, err := nvossim.New(nvossim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	for _, ip := range []string{"10.0.0.1", "0.0.0.0", "::1", "nonsense"} {
		if err := sw.Start(context.Background(), ip); !errors.Is(err, nvossim.ErrNotLoopback) {
			t.Errorf("Start(%q) = %v, want ErrNotLoopback", ip, err)
		}
	}
}

func TestUploadedImageIsListedAndStatable(t *testing.T) {
	r := start(t, nvossim.Config{})
	c := r.mustSSH()
	data := bytes.Repeat([]byte("nvos"), 4096)
	path := nvossim.NOSImageDir + "/nvos-amd64-25.02.3000.bin"
	if _, err := c.Upload(r.ctx, bytes.NewReader(data), path, int64(len(data))); err != nil {
		t.Fatal(err)
	}
	files, err := r.nv.ImageFiles(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0] != "nvos-amd64-25.02.3000.bin" {
		t.Fatalf("image files = %v", files)
	}
	got, ok := r.sw.File(path)
	if !ok || !bytes.Equal(got, data) {
		t.Fatalf("stored file differs (found=%v, %d bytes)", ok, len(got))
	}
	if ok, err := c.FileExists(r.ctx, path); err != nil || !ok {
		t.Fatalf("test -f = %v, %v", ok, err)
	}
}

func TestUploadOutsideWritableTreeIsDenied(t *testing.T) {
	r := start(t, nvossim.Config{})
	c := r.mustSSH()
	_, err := c.Upload(r.ctx, strings.NewReader("x"), "/etc/passwd", 1)
	if !errors.Is(err, os.ErrPermission) {
		t.Fatalf("upload to /etc = %v, want permission denied", err)
	}
	_, err = c.Upload(r.ctx, strings.NewReader("x"), "/host/missing-dir/f", 1)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("upload into missing dir = %v, want not exist", err)
	}
}

func TestShellSubset(t *testing.T) {
	r := start(t, nvossim.Config{})
	c := r.mustSSH()
	steps := []struct {
		cmd  string
		code int
		out  string
	}{
		{"mkdir -p '/host/fw-images/new/sub'", 0, ""},
		{"test -d /host/fw-images/new/sub && echo ok", 0, "ok"},
		{"install -d -m 751 '/home/admin/certs'", 0, ""},
		{"test -f '/home/admin/certs/ca.pem' && echo ok", 1, ""},
		{"rm -f '/home/admin/certs/ca.pem'", 0, ""},
		{"rm '/home/admin/certs/ca.pem'", 1, ""},
		{"mkdir -p /etc/x", 1, ""},
		{"echo 'it'\\''s'", 0, "it's"},
		{"nv config save", 0, "saved"},
		{"frobnicate", 127, ""},
	}
	for _, s := range steps {
		out, err := c.Output(r.ctx, s.cmd)
		var xe *sshsftp.ExitError
		code := 0
		if errors.As(err, &xe) {
			code = xe.Code
		} else if err != nil {
			t.Fatalf("%s: %v", s.cmd, err)
		}
		if code != s.code || (s.out != "" && out != s.out) {
			t.Errorf("%s: code %d out %q, want %d %q", s.cmd, code, out, s.code, s.out)
		}
	}
	if r.sw.Saves() != 1 {
		t.Errorf("saves = %d, want 1", r.sw.Saves())
	}
}

func TestImageInstallActivatesAfterReboot(t *testing.T) {
	// A long reboot delay keeps the pre-reboot state observable for 1 s.
	r := start(t, nvossim.Config{Partition2: "nvos-25.01.1000", RebootDelay: 1000 * time.Second})
	// Clean the non-current partition first, as RMS does.
	id, err := r.nv.UninstallImage(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.nv.WaitAction(r.ctx, id); err != nil {
		t.Fatal(err)
	}
	st, err := r.nv.Image(r.ctx)
	if err != nil || st.OtherBuild() != "" {
		t.Fatalf("after uninstall: %+v, %v", st, err)
	}
	// A second uninstall has nothing to do.
	id, _ = r.nv.UninstallImage(r.ctx)
	last, err := r.nv.WaitAction(r.ctx, id)
	if !errors.Is(err, nvue.ErrActionFailed) || !nvue.IsNothingToUninstall(last) {
		t.Fatalf("second uninstall: %+v, %v", last, err)
	}

	file := "nvos-amd64-25.02.3000.bin"
	c := r.mustSSH()
	if _, err := c.Upload(r.ctx, bytes.NewReader(make([]byte, 4096)), nvossim.NOSImageDir+"/"+file, 4096); err != nil {
		t.Fatal(err)
	}
	bootsBefore := r.sw.Boots()
	id, err = r.nv.InstallImage(r.ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	last, err = r.nv.WaitAction(r.ctx, id)
	if err != nil || last.Phase() != nvue.PhaseRebooting {
		t.Fatalf("install: %+v, %v", last, err)
	}
	// Before the reboot the new image is only the next one.
	if st, err := r.nv.Image(r.ctx); err != nil || st.CurrentBuild() != "nvos-25.02.2553" || st.NextBuild() != "nvos-25.02.3000" {
		t.Fatalf("before reboot: %+v, %v", st, err)
	}
	eventually(t, 5*time.Second, "reboot", func() bool { return r.sw.Boots() > bootsBefore })
	eventually(t, 5*time.Second, "switch back up with new image", func() bool {
		st, err := r.nv.Image(r.ctx)
		return err == nil && st.CurrentBuild() == "nvos-25.02.3000" && st.NextBuild() == "nvos-25.02.3000"
	})
	st, _ = r.nv.Image(r.ctx)
	if st.OtherBuild() != "nvos-25.02.2553" {
		t.Fatalf("old image should stay on the other partition: %+v", st)
	}
}

func TestPasswordRevisionChangesNVUEAndSSHLogins(t *testing.T) {
	r := start(t, nvossim.Config{})
	newPw := hw.NewSecret("Rotated-Pass-42")
	nc, err := r.nv.ChangePassword(r.ctx, "admin", newPw)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.System(r.ctx); err != nil {
		t.Fatalf("new password on NVUE: %v", err)
	}
	if _, err := r.nv.System(r.ctx); !errors.Is(err, nvue.ErrUnauthorized) {
		t.Fatalf("old password on NVUE: %v, want 401", err)
	}
	if _, err := r.ssh(hw.UserPass("admin", "admin")); !errors.Is(err, sshsftp.ErrAuth) {
		t.Fatalf("old password on SSH: %v, want ErrAuth", err)
	}
	if _, err := r.ssh(hw.Credentials{Username: "admin", Password: newPw}); err != nil {
		t.Fatalf("new password on SSH: %v", err)
	}
	if r.sw.Saves() == 0 {
		t.Fatal("rotation did not save the configuration")
	}
}

func TestFactoryResetExpiresAdminUntilChangedOverSSH(t *testing.T) {
	r := start(t, nvossim.Config{Password: hw.NewSecret("Operator-Pass-1")})
	c := r.mustSSH()
	if _, err := c.Upload(r.ctx, strings.NewReader("key"), "/home/admin/k", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nv.FactoryReset(r.ctx); err != nil {
		t.Fatal(err)
	}
	// The operator's password works until the reset reboot, then never again.
	eventually(t, 5*time.Second, "reset reboot", func() bool {
		_, err := r.nv.System(r.ctx)
		return errors.Is(err, nvue.ErrUnauthorized)
	})
	if r.sw.Boots() != 1 {
		t.Fatalf("boots = %d, want 1", r.sw.Boots())
	}
	factory, err := nvue.New(func() hw.Endpoint { ep := r.sw.Endpoint(); ep.Credentials = hw.UserPass("admin", "admin"); return ep }(), nvue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer factory.Close()
	if _, err := factory.System(r.ctx); !errors.Is(err, nvue.ErrPasswordExpired) {
		t.Fatalf("factory login on NVUE: %v, want password expired", err)
	}
	if _, ok := r.sw.File("/home/admin/k"); ok {
		t.Fatal("factory reset kept user files")
	}
	sc, err := r.ssh(hw.UserPass("admin", "admin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Run(r.ctx, "true"); !errors.Is(err, sshsftp.ErrExit) {
		t.Fatalf("exec with expired password: %v, want refusal", err)
	}
	if err := sc.ChangeExpiredPassword(r.ctx, hw.NewSecret("Brand-New-Pass-7")); err != nil {
		t.Fatal(err)
	}
	renewed, err := factory.WithCredentials(hw.UserPass("admin", "Brand-New-Pass-7"))
	if err != nil {
		t.Fatal(err)
	}
	defer renewed.Close()
	if _, err := renewed.System(r.ctx); err != nil {
		t.Fatalf("NVUE after password change: %v", err)
	}
}

func TestFirmwareInstallActivatesOnPowerCycle(t *testing.T) {
	r := start(t, nvossim.Config{})
	c := r.mustSSH()
	file := "fw_BMC_88.0002.2000.fwpkg"
	if _, err := c.Upload(r.ctx, strings.NewReader("pkg"), nvossim.FWImageDir+"/bmc/"+file, 3); err != nil {
		t.Fatal(err)
	}
	files, err := r.nv.FirmwareFiles(r.ctx, "bmc")
	if err != nil || len(files) != 1 || files[0] != file {
		t.Fatalf("firmware files = %v, %v", files, err)
	}
	if _, err := r.nv.InstallFirmware(r.ctx, "BMC", "missing.fwpkg"); !errors.Is(err, nvue.ErrNotFound) {
		t.Fatalf("install of a missing file: %v", err)
	}
	id, err := r.nv.InstallFirmware(r.ctx, "BMC", file)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := r.nv.WaitAction(r.ctx, id); err != nil || st.Phase() != nvue.PhaseSucceeded {
		t.Fatalf("install: %+v, %v", st, err)
	}
	fc, err := r.nv.FirmwareComponent(r.ctx, "BMC")
	if err != nil || fc.Installed != "88.0002.2000" || fc.Actual == "88.0002.2000" {
		t.Fatalf("before power cycle: %+v, %v", fc, err)
	}
	if _, err := r.nv.PowerCycle(r.ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "power cycle", func() bool {
		fc, err := r.nv.FirmwareComponent(r.ctx, "BMC")
		return err == nil && fc.Actual == "88.0002.2000"
	})
}

// With RebootInstalls, an install announces a reboot, the switch goes down
// and comes back with the new firmware running, no power cycle needed.
func TestFirmwareInstallCanHandOffToAReboot(t *testing.T) {
	// The reboot starts 0.5 s after the action ends: the client reads the
	// hand-off before the switch is gone.
	r := start(t, nvossim.Config{RebootDelay: 500 * time.Second})
	r.sw.RebootInstalls(true)
	c := r.mustSSH()
	file := "cpld-0.0134.fwpkg"
	if _, err := c.Upload(r.ctx, strings.NewReader("pkg"), nvossim.FWImageDir+"/cpld/"+file, 3); err != nil {
		t.Fatal(err)
	}
	id, err := r.nv.InstallFirmware(r.ctx, "cpld", file)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := r.nv.WaitAction(r.ctx, id); err != nil || st.Phase() != nvue.PhaseRebooting {
		t.Fatalf("install: %+v, %v", st, err)
	}
	if err := r.nv.WaitDownUp(r.ctx, "/nvue_v1/platform/firmware", 2*time.Millisecond, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if fc, err := r.nv.FirmwareComponent(r.ctx, "cpld"); err != nil || fc.Actual != "0.0134" || r.sw.Boots() != 1 {
		t.Fatalf("after the install reboot: %+v, %v, %d boots", fc, err, r.sw.Boots())
	}
}

func TestUnreachableWindowDropsBothProtocols(t *testing.T) {
	r := start(t, nvossim.Config{})
	r.sw.Unreachable(time.Hour)
	if _, err := r.nv.System(r.ctx); !errors.Is(err, nvue.ErrTransport) {
		t.Fatalf("NVUE during outage: %v", err)
	}
	if _, err := r.ssh(r.sw.Endpoint().Credentials); !errors.Is(err, sshsftp.ErrConnect) {
		t.Fatalf("SSH during outage: %v", err)
	}
	r.sw.Unreachable(0)
	if _, err := r.nv.System(r.ctx); err != nil {
		t.Fatalf("NVUE after outage: %v", err)
	}
	r.mustSSH()
}

func TestConcurrentClientsSeeConsistentState(t *testing.T) {
	r := start(t, nvossim.Config{})
	const workers = 6
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			c, err := r.ssh(r.sw.Endpoint().Credentials)
			if err != nil {
				errs <- err
				return
			}
			name := "img-" + string(rune('a'+w)) + "-1.2.3.bin"
			if _, err := c.Upload(r.ctx, bytes.NewReader(make([]byte, 2048)), nvossim.NOSImageDir+"/"+name, 2048); err != nil {
				errs <- err
				return
			}
			for i := 0; i < 5; i++ {
				if _, err := r.nv.System(r.ctx); err != nil {
					errs <- err
					return
				}
				rev, err := r.nv.CreateRevision(r.ctx)
				if err != nil {
					errs <- err
					return
				}
				if err := r.nv.DeleteRevision(r.ctx, rev); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	files, err := r.nv.ImageFiles(r.ctx)
	if err != nil || len(files) != workers {
		t.Fatalf("image files = %v, %v", files, err)
	}
}

// Firmware reports the running versions NVUE lists; a staged install shows
// only after the power cycle that activates it. NVUERequests counts the
// requests that reached NVOS, refused ones included.
func TestFirmwareAndRequestCounts(t *testing.T) {
	r := start(t, nvossim.Config{Firmware: map[string]string{nvossim.ComponentBMC: "88.0002.2000"}})
	want := r.sw.Firmware()
	if len(want) != 5 || want[nvossim.ComponentBMC] != "88.0002.2000" || want[nvossim.ComponentCPLD1] == "" {
		t.Fatalf("Firmware() = %v", want)
	}
	listed, err := r.nv.Firmware(r.ctx)
	if err != nil || len(listed) != len(want) {
		t.Fatalf("NVUE firmware = %v, %v", listed, err)
	}
	for _, c := range listed {
		if c.Actual != want[c.Name] {
			t.Errorf("%s: NVUE says %q, Firmware() %q", c.Name, c.Actual, want[c.Name])
		}
	}
	if got := r.sw.NVUERequests(); got != 1 {
		t.Fatalf("NVUERequests() = %d after one request", got)
	}
	r.sw.RejectLogins(true)
	if _, err := r.nv.Firmware(r.ctx); !errors.Is(err, nvue.ErrUnauthorized) {
		t.Fatalf("logins rejected: %v", err)
	}
	if got := r.sw.NVUERequests(); got != 2 {
		t.Fatalf("NVUERequests() = %d after a refused request", got)
	}
	r.sw.RejectLogins(false)
	r.sw.SetFirmware(nvossim.ComponentFPGA, "0.2A")
	fpga, err := r.nv.FirmwareComponent(r.ctx, "fpga")
	if err != nil || fpga.Actual != "0.2A" || fpga.Installed != "0.2A" || r.sw.Firmware()[nvossim.ComponentFPGA] != "0.2A" {
		t.Fatalf("FPGA after SetFirmware = %+v, %v", fpga, err)
	}
}
