package platform_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func pkg(version string) platform.FirmwareUpdate {
	body := sim.FirmwareMagic + version + "\n" + strings.Repeat("p", 2048)
	return platform.FirmwareUpdate{FileName: "fw.fwpkg", Body: strings.NewReader(body), Size: int64(len(body))}
}

func TestCompute_OffIsSentAsGracefulShutdown(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1}, false)
	n := f.Nodes()[0]
	dev := device(t, deps(t), n)
	ctx := testCtx(t)
	if err := dev.SetPower(ctx, platform.PowerOff); err != nil {
		t.Fatal(err)
	}
	if err := dev.SetPower(ctx, platform.PowerForceOff); err != nil {
		t.Fatal(err)
	}
	if r := n.Device.Resets(); len(r) != 2 || r[0] != "GracefulShutdown" || r[1] != "ForceOff" {
		t.Fatalf("resets %v", r)
	}
	if st, err := dev.PowerState(ctx); err != nil || st != platform.PowerStateOff {
		t.Fatalf("state %v, %v", st, err)
	}
}

func TestCompute_UpdateThenActivate(t *testing.T) {
	for _, typ := range []hw.NodeType{hw.ComputeGB200Nvidia, hw.ComputeGB300Nvidia} {
		t.Run(typ.Name(), func(t *testing.T) {
			f := startFleet(t, sim.Layout{Compute: 1, ComputeType: typ}, false)
			n := f.Nodes()[0]
			dev := device(t, deps(t), n)
			ctx := testCtx(t)
			u := pkg("NEW-BMC")
			u.Component = "FW_BMC_0"
			st, err := dev.StartFirmwareUpdate(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if ts := waitTask(t, dev, st.TaskID); ts.Failed || ts.Percent != 100 {
				t.Fatalf("task %+v", ts)
			}
			if v := version(t, dev, "FW_BMC_0"); v == "NEW-BMC" {
				t.Fatal("installed before activation")
			}
			if err := dev.ActivateFirmware(ctx); err != nil {
				t.Fatalf("activate: %v", err)
			}
			if v := version(t, dev, "FW_BMC_0"); v != "NEW-BMC" {
				t.Fatalf("installed after activation = %q", v)
			}
			if st, _ := dev.PowerState(ctx); st != platform.PowerStateOn {
				t.Fatalf("power after activation = %s", st)
			}
			want := "[ForceOff AuxPowerCycle On]"
			if got := fmt.Sprint(n.Device.Resets()); got != want {
				t.Fatalf("resets %s, want %s", got, want)
			}
		})
	}
}

func TestCompute_FailedTaskIsReportedFailed(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1}, false)
	n := f.Nodes()[0]
	n.Device.FailNextTasks(1)
	dev := device(t, deps(t), n)
	st, err := dev.StartFirmwareUpdate(testCtx(t), pkg("X"))
	if err != nil {
		t.Fatal(err)
	}
	if ts := waitTask(t, dev, st.TaskID); !ts.Failed || ts.Message == "" {
		t.Fatalf("task %+v, want failed with a message", ts)
	}
}

func version(t *testing.T, dev platform.Device, id string) string {
	t.Helper()
	inv, err := dev.FirmwareInventory(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, fw := range inv {
		if fw.ID == id {
			return fw.Version
		}
	}
	t.Fatalf("%s not in inventory", id)
	return ""
}

func TestShelf_UpdateThenActivate(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1, ShelfType: hw.PowerShelfGB300Liteon}, false)
	n := f.Nodes()[0]
	dev := device(t, deps(t), n)
	ctx := testCtx(t)
	st, err := dev.StartFirmwareUpdate(ctx, pkg("PMC-7"))
	if err != nil {
		t.Fatal(err)
	}
	waitTask(t, dev, st.TaskID)
	if v := version(t, dev, "FW_PMC_0"); v == "PMC-7" {
		t.Fatal("installed before the manager reset")
	}
	if err := dev.ActivateFirmware(ctx); err != nil {
		t.Fatal(err)
	}
	if v := version(t, dev, "FW_PMC_0"); v != "PMC-7" {
		t.Fatalf("installed after activation %q", v)
	}
}

func TestShelf_PowerOpsAndUnsupportedOps(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1}, false)
	dev := device(t, deps(t), f.Nodes()[0])
	ctx := testCtx(t)
	if err := dev.SetPower(ctx, platform.PowerOff); err != nil {
		t.Fatal(err)
	}
	if st, err := dev.PowerState(ctx); err != nil || st != platform.PowerStateOff {
		t.Fatalf("after off: %v %v", st, err)
	}
	for _, op := range []platform.PowerOp{platform.PowerCycle, platform.PowerNmi, platform.PowerForceRestart} {
		if err := dev.SetPower(ctx, op); !errors.Is(err, hw.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", op, err)
		}
	}
}

func TestSwitch_WithBMCAndNVOS(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 2, Switches: 1}, true)
	n := f.Nodes()[2]
	dev := device(t, deps(t), n)
	ctx := testCtx(t)
	if st, err := dev.PowerState(ctx); err != nil || st != platform.PowerStateOn {
		t.Fatalf("power %v %v", st, err)
	}
	if err := dev.SetPower(ctx, platform.PowerNmi); !errors.Is(err, hw.ErrUnsupported) {
		t.Fatalf("Nmi: %v", err)
	}
	info, err := dev.DeviceInfo(ctx)
	if err != nil || info.SlotNumber == nil || *info.SlotNumber != 3 || info.TrayIndex == nil || *info.TrayIndex != 0 ||
		info.ChassisSerial == "" {
		t.Fatalf("device info %+v, %v", info, err)
	}
	inv, err := dev.FirmwareInventory(ctx)
	if err != nil || len(inv) == 0 {
		t.Fatalf("inventory %v, %v", inv, err)
	}
	if err := dev.AuxPowerCycle(ctx); err != nil {
		t.Fatalf("aux power cycle: %v", err)
	}
	if r := n.Device.Resets(); len(r) != 1 || r[0] != "PowerCycle" {
		t.Fatalf("resets %v", r)
	}
}

func TestSwitch_UnreachableBMCReadsUnknown(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, false)
	n := f.Nodes()[0]
	dev := device(t, deps(t), n)
	if err := n.Device.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	st, err := dev.PowerState(testCtx(t))
	if err != nil || st != platform.PowerStateUnknown {
		t.Fatalf("= %v, %v; want Unknown, nil", st, err)
	}
}

func TestSwitch_WithoutBMCOnlyPowerCycleViaNVUE(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	d := deps(t)
	dev, err := platform.New(d, platform.Config{ID: n.ID, Type: n.Type, Host: n.Host})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	ctx := testCtx(t)
	if st, err := dev.PowerState(ctx); err != nil || st != platform.PowerStateOn {
		t.Fatalf("power via nvue %v %v", st, err)
	}
	if err := dev.SetPower(ctx, platform.PowerOn); !errors.Is(err, hw.ErrUnsupported) {
		t.Fatalf("On without BMC: %v", err)
	}
	if err := dev.AuxPowerCycle(ctx); !errors.Is(err, hw.ErrUnsupported) {
		t.Fatalf("aux without BMC: %v", err)
	}
	if err := dev.SetPower(ctx, platform.PowerCycle); err != nil {
		t.Fatalf("power cycle via nvue: %v", err)
	}
	if len(n.Device.Resets()) != 0 {
		t.Fatalf("BMC was used: %v", n.Device.Resets())
	}
}

// Switch adapters built one after the other from the same Deps reach NVOS
// over the NVUE pool's connection: one TLS handshake for all operations.
func TestSwitch_AdaptersShareNVUEConnections(t *testing.T) {
	f := startFleet(t, sim.Layout{Switches: 1}, true)
	n := f.Nodes()[0]
	sw := n.Switch.(*sim.NVOSHost)
	before := sw.NVUEConnections()
	d := deps(t)
	ctx := testCtx(t)
	for range 3 {
		dev, err := platform.New(d, platform.Config{ID: n.ID, Type: n.Type, Host: n.Host})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dev.DeviceInfo(ctx); err != nil {
			t.Fatal(err)
		}
		if st, err := dev.PowerState(ctx); err != nil || st != platform.PowerStateOn {
			t.Fatalf("power via nvue %v %v", st, err)
		}
		if _, err := dev.FirmwareInventory(ctx); err != nil {
			t.Fatal(err)
		}
		dev.Close()
	}
	if got := sw.NVUEConnections() - before; got != 1 {
		t.Fatalf("3 adapters × 3 operations opened %d NVUE connections, want 1", got)
	}
}

func TestConfig_NeverPrintsPasswords(t *testing.T) {
	const pw = "platform-secret-pw"
	cfg := platform.Config{ID: "n1", Type: hw.ComputeGB200Nvidia,
		BMC:  hw.Endpoint{IP: "127.0.0.1", Credentials: hw.UserPass("root", pw)},
		Host: hw.Endpoint{IP: "127.0.0.2", Credentials: hw.UserPass("admin", pw)}}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, pw) {
			t.Fatalf("leak: %s", s)
		}
	}
	_, err := platform.New(platform.Deps{}, cfg)
	if err == nil || strings.Contains(err.Error(), pw) {
		t.Fatalf("err %v", err)
	}
}

func TestCompute_UpdateRefusedWhileWriteProtected(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1}, false)
	n := f.Nodes()[0]
	n.Device.SetWriteProtected(true)
	dev := device(t, deps(t), n)
	if _, err := dev.StartFirmwareUpdate(testCtx(t), pkg("WP")); !errors.Is(err, redfish.ErrPrecondition) {
		t.Fatalf("err = %v, want ErrPrecondition", err)
	}
	if n.Device.Uploads() != 0 {
		t.Fatal("uploaded despite write protection")
	}
}

// Firmware inventory of every platform: Redfish members keep their inventory
// URI and reported health, NVUE components their name; each gets upstream's
// type, and a health the device does not report reads "Unknown".
func TestFirmwareInventoryOfEachPlatform(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1, Switches: 1, Shelves: 1}, true)
	d := deps(t)
	ctx := testCtx(t)
	byID := func(n sim.Node) map[string]platform.Firmware {
		inv, err := device(t, d, n).FirmwareInventory(ctx)
		if err != nil {
			t.Fatalf("%s: %v", n.ID, err)
		}
		out := map[string]platform.Firmware{}
		for _, fw := range inv {
			out[fw.ID] = fw
		}
		return out
	}
	for _, n := range f.Nodes() {
		inv := byID(n)
		switch n.Type.Kind() {
		case hw.KindCompute, hw.KindPowerShelf:
			if len(inv) != len(n.Device.Components()) {
				t.Fatalf("%s: %d components, the BMC has %v", n.ID, len(inv), n.Device.Components())
			}
			for id, fw := range inv {
				installed, _, err := n.Device.Firmware(id)
				if err != nil || fw.Version != installed || fw.URI != redfish.FirmwareInventoryPath+"/"+id ||
					fw.Health != "OK" || !fw.Updateable {
					t.Errorf("%s %s = %+v (installed %q, %v)", n.ID, id, fw, installed, err)
				}
			}
		case hw.KindSwitch:
			want := n.Switch.(*sim.NVOSHost).Firmware()
			if len(inv) != len(want) {
				t.Fatalf("%s: %d components, NVOS has %v", n.ID, len(inv), want)
			}
			for id, fw := range inv {
				if fw.Version != want[id] || fw.URI != "" || fw.Health != "Unknown" || !fw.Updateable {
					t.Errorf("%s %s = %+v, NVOS runs %q", n.ID, id, fw, want[id])
				}
			}
		}
	}
	types := map[string]platform.FirmwareType{}
	for _, n := range f.Nodes() {
		for id, fw := range byID(n) {
			types[n.Type.Kind().String()+"/"+id] = fw.Type
		}
	}
	for key, want := range map[string]platform.FirmwareType{
		"compute/FW_BMC_0": platform.FirmwareBMC, "compute/FW_UEFI_0": platform.FirmwareBIOS,
		"compute/FW_CPLD_0": platform.FirmwareCPLD, "compute/HGX_FW_GPU_0": platform.FirmwareHMC,
		"power_shelf/FW_PMC_0": platform.FirmwareUnknown, "switch/BMC": platform.FirmwareBMC,
		"switch/CPLD1": platform.FirmwareCPLD, "switch/EROT": platform.FirmwareUnknown,
	} {
		if got, ok := types[key]; !ok || got != want {
			t.Errorf("%s: type %v (listed %v), want %v", key, got, ok, want)
		}
	}
}

// Every adapter answers the configuration it was built from, credentials
// included, whatever its kind: hw/nodeops compares it with an operation's
// to reuse the adapter.
func TestEveryAdapterKeepsItsConfiguration(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1, Shelves: 1, Switches: 1}, true)
	d := deps(t)
	for _, n := range f.Nodes() {
		cfg := platform.Config{ID: n.ID, RackID: "rack-7", Type: n.Type, BMC: n.BMC, Host: n.Host}
		dev, err := platform.New(d, cfg)
		if err != nil {
			t.Fatalf("platform.New(%s): %v", n.ID, err)
		}
		if got := dev.Config(); got != cfg {
			t.Errorf("%s (%s): Config() = %v, want %v", n.ID, n.Type, got, cfg)
		}
		dev.Close()
	}
}
