package platform_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// switchPkg is a switch firmware package; the simulated switch reads the
// version from the first dotted number of its name.
func switchPkg(component, fileName string) platform.FirmwareUpdate {
	body := strings.Repeat("nvfw", 4096)
	return platform.FirmwareUpdate{Component: component, FileName: fileName, Body: strings.NewReader(body),
		Size: int64(len(body))}
}

// switchUnderTest is a one-switch fleet (BMC and NVOS host) and the
// adapter of its switch tray.
func switchUnderTest(t *testing.T) (*sim.NVOSHost, platform.Device) {
	t.Helper()
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	return n.Switch.(*sim.NVOSHost), device(t, fleetDeps(t, f), n)
}

// Two components staged, installed and followed to Done, then one power
// cycle: the inventory runs both new versions.
func TestSwitch_FirmwareUpdateThenActivate(t *testing.T) {
	sw, dev := switchUnderTest(t)
	ctx := testCtx(t)
	for _, u := range []platform.FirmwareUpdate{
		switchPkg("bmc", "/local/firmware/bmc-88.0002.1300.fwpkg"),
		switchPkg("CPLD1", "cpld-0.0134.vme"),
	} {
		st, err := dev.StartFirmwareUpdate(ctx, u)
		if err != nil {
			t.Fatalf("%s: %v", u.Component, err)
		}
		if ts := waitTask(t, dev, st.TaskID); ts.Failed || ts.Percent != 100 {
			t.Fatalf("%s: task %+v", u.Component, ts)
		}
	}
	if data, ok := sw.File("/host/fw-images/bmc/bmc-88.0002.1300.fwpkg"); !ok || len(data) != 4*4096 {
		t.Fatalf("staged bmc package: %d bytes, present %v", len(data), ok)
	}
	if _, ok := sw.File("/host/fw-images/cpld/cpld-0.0134.vme"); !ok {
		t.Fatal("cpld package not staged under /host/fw-images/cpld")
	}
	if fw := inventory(t, dev)["BMC"]; fw.Version == "88.0002.1300" || fw.Pending != "88.0002.1300" {
		t.Fatalf("BMC before activation %+v", fw)
	}
	if err := dev.ActivateFirmware(ctx); err != nil {
		t.Fatalf("activate: %v", err)
	}
	inv := inventory(t, dev)
	if inv["BMC"].Version != "88.0002.1300" || inv["CPLD1"].Version != "0.0134" || inv["BMC"].Pending != "" {
		t.Fatalf("after activation BMC %+v, CPLD1 %+v", inv["BMC"], inv["CPLD1"])
	}
	if sw.Boots() != 1 {
		t.Fatalf("%d reboots, want the one power cycle", sw.Boots())
	}
}

func inventory(t *testing.T, dev platform.Device) map[string]platform.Firmware {
	t.Helper()
	inv, err := dev.FirmwareInventory(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]platform.Firmware{}
	for _, fw := range inv {
		out[fw.ID] = fw
	}
	return out
}

// A component or file name the switch would not take is refused before
// any I/O: the SSH options have no host key policy (a dial would fail
// differently) and NVUE sees no request.
func TestSwitch_FirmwareUpdateRefusesBadTargetsBeforeAnyIO(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	sw := n.Switch.(*sim.NVOSHost)
	d := fleetDeps(t, f)
	d.SSH.HostKey = sshsftp.HostKeyPolicy{}
	dev := device(t, d, n)
	before := sw.NVUERequests()
	bad := []platform.FirmwareUpdate{
		switchPkg("", "bmc-1.2.fwpkg"), switchPkg("nic", "bmc-1.2.fwpkg"), switchPkg("cpld0", "c-1.2.vme"),
		switchPkg("../bmc", "bmc-1.2.fwpkg"), switchPkg("FW_BMC_0", "bmc-1.2.fwpkg"),
		switchPkg("bmc", ""), switchPkg("bmc", ".hidden-1.2.fwpkg"), switchPkg("bmc", "bmc 1.2.fwpkg"),
		switchPkg("bmc", "bmc-1.2.fwpkg;reboot"), switchPkg("bmc", "bmc-'1.2'.fwpkg"), switchPkg("bmc", "dir/.."),
		{Component: "bmc", FileName: "bmc-1.2.fwpkg"},
	}
	for _, u := range bad {
		if _, err := dev.StartFirmwareUpdate(testCtx(t), u); !errors.Is(err, platform.ErrInvalidFirmwareUpdate) {
			t.Errorf("component %q file %q: err = %v, want ErrInvalidFirmwareUpdate", u.Component, u.FileName, err)
		}
	}
	if got := sw.NVUERequests() - before; got != 0 {
		t.Fatalf("refused updates sent %d NVUE requests", got)
	}
}

// An install that fails on the switch ends its task Failed with the
// switch's message.
func TestSwitch_FailedInstallIsReportedFailed(t *testing.T) {
	sw, dev := switchUnderTest(t)
	sw.FailActions("flash write error on BMC")
	st, err := dev.StartFirmwareUpdate(testCtx(t), switchPkg("bmc", "bmc-88.0002.1400.fwpkg"))
	if err != nil {
		t.Fatal(err)
	}
	ts := waitTask(t, dev, st.TaskID)
	if !ts.Done || !ts.Failed || !strings.Contains(ts.Message, "flash write error on BMC") {
		t.Fatalf("task %+v, want failed with the switch's message", ts)
	}
	if fw := inventory(t, dev)["BMC"]; fw.Pending != "" {
		t.Fatalf("failed install left a pending version: %+v", fw)
	}
}

// An install that hands off to a switch reboot ends its task Done only
// once the switch has gone down and come back (it then runs the new
// version, activated by that reboot).
func TestSwitch_InstallRebootEndsTheTaskWhenTheSwitchIsBack(t *testing.T) {
	// The reboot starts 0.5 s after the install ends, so the task read
	// sees the hand-off while the switch still answers.
	sw, err := nvossim.New(nvossim.Config{TimeScale: 0.001, RebootDelay: 500 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := sw.Start(testCtx(t), "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Close() })
	sw.RebootInstalls(true)
	d := deps(t)
	d.SSH.Port = sw.SSHPort()
	dev, err := platform.New(d, platform.Config{ID: "sw-1", Type: hw.SwitchGB300Nvidia, Host: sw.Endpoint()})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	st, err := dev.StartFirmwareUpdate(testCtx(t), switchPkg("bios", "sbios-0.01.016.bin"))
	if err != nil {
		t.Fatal(err)
	}
	ts := waitTask(t, dev, st.TaskID)
	if ts.Failed || ts.Percent != 100 || !strings.Contains(ts.Message, "rebooted") {
		t.Fatalf("task %+v", ts)
	}
	if v := inventory(t, dev)["BIOS"].Version; v != "0.01.016" || sw.Boots() != 1 {
		t.Fatalf("BIOS runs %q after %d reboots; want the new version after one", v, sw.Boots())
	}
}

// A switch tray known by its BMC only cannot stage firmware.
func TestSwitch_FirmwareUpdateWithoutHostIsUnsupported(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, false)
	dev := device(t, fleetDeps(t, f), f.Nodes()[0])
	ctx := testCtx(t)
	_, err := dev.StartFirmwareUpdate(ctx, switchPkg("bmc", "bmc-88.0002.1300.fwpkg"))
	if !errors.Is(err, hw.ErrUnsupported) || !strings.Contains(err.Error(), "host endpoint") {
		t.Fatalf("start: %v", err)
	}
	if _, err := dev.FirmwareTask(ctx, "1"); !errors.Is(err, hw.ErrUnsupported) {
		t.Fatalf("task: %v", err)
	}
	if err := dev.ActivateFirmware(ctx); !errors.Is(err, hw.ErrUnsupported) {
		t.Fatalf("activate: %v", err)
	}
}

// A rejected SSH login fails the update with ErrAuth, and neither the
// error nor the staged tree carries the password tried.
func TestSwitch_FirmwareUpdateErrorsNeverCarryThePassword(t *testing.T) {
	const pw = "switch-fw-wrong-pw"
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	host := n.Host
	host.Credentials = hw.UserPass(host.Credentials.Username, pw)
	dev, err := platform.New(fleetDeps(t, f), platform.Config{ID: n.ID, Type: n.Type, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = dev.StartFirmwareUpdate(ctx, switchPkg("bmc", "bmc-88.0002.1300.fwpkg"))
	if !errors.Is(err, sshsftp.ErrAuth) || strings.Contains(err.Error(), pw) {
		t.Fatalf("err = %v, want ErrAuth without the password", err)
	}
}
